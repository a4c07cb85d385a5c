//! The task that runs a read or a data writer on an executor.

use std::sync::Arc;

/// The check of whether Spark killed a task, shareable with the thread of a read.
pub(crate) type InterruptCheck = Arc<dyn Fn() -> bool + Send + Sync>;

/// A Spark task, as `SparkDsTaskContext` describes it. The C interface checks
/// [`TaskContext::is_interrupted`] between the batches of a read, so a read only needs to
/// check it itself while it waits for long, for example on the network.
pub struct TaskContext {
    task_id: i64,
    stage_id: i32,
    partition_id: i32,
    attempt_number: i32,
    interrupted: InterruptCheck,
}

impl TaskContext {
    /// A context from the host's task, with the check of whether Spark killed it.
    pub(crate) fn new(
        ids: (i64, i32, i32, i32),
        interrupted: Box<dyn Fn() -> bool + Send + Sync>,
    ) -> Self {
        let (task_id, stage_id, partition_id, attempt_number) = ids;
        TaskContext {
            task_id,
            stage_id,
            partition_id,
            attempt_number,
            interrupted: Arc::from(interrupted),
        }
    }

    /// A context for tests and tools, never interrupted.
    pub fn for_tests(partition_id: i32, attempt_number: i32) -> Self {
        TaskContext {
            task_id: i64::from(partition_id),
            stage_id: 0,
            partition_id,
            attempt_number,
            interrupted: Arc::new(|| false),
        }
    }

    /// The ID of the task attempt, unique within the Spark application.
    pub fn task_id(&self) -> i64 {
        self.task_id
    }

    /// The stage of the task.
    pub fn stage_id(&self) -> i32 {
        self.stage_id
    }

    /// The index of the partition that the task reads or writes.
    pub fn partition_id(&self) -> i32 {
        self.partition_id
    }

    /// 0 for the first attempt; a retried task writes again, so name staged data after it.
    pub fn attempt_number(&self) -> i32 {
        self.attempt_number
    }

    /// Whether Spark killed the task, for example because its query was canceled.
    pub fn is_interrupted(&self) -> bool {
        (self.interrupted)()
    }

    /// The check itself, for a [`Producer`](super::Producer): valid while the read's stream
    /// lives.
    pub(crate) fn interrupt_check(&self) -> InterruptCheck {
        self.interrupted.clone()
    }
}
