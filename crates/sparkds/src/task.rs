//! `SparkDsTaskContext`: the task that runs a read or a data writer on an executor, with an
//! `is_interrupted` that the caller controls to test cancellation (rule 23).

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use spark_datasource_abi::v1::SparkDsTaskContext;

/// Asks the host's own task whether it was killed, such as Spark's
/// `TaskContext.isInterrupted()`.
pub type InterruptCheck = Box<dyn Fn() -> bool + Send + Sync>;

/// The host's side of a task: whether it was killed.
#[derive(Default)]
pub(crate) struct TaskState {
    interrupted: AtomicBool,
    check: Option<InterruptCheck>,
}

/// The IDs of a task, as `SparkDsTaskContext` carries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskIds {
    /// `task_id`: the ID of the task attempt, unique within the application.
    pub task_id: i64,
    /// `stage_id`.
    pub stage_id: i32,
    /// `partition_id`: the partition that the task reads or writes, from 0.
    pub partition_id: i32,
    /// `attempt_number`: 0 for the first attempt.
    pub attempt_number: i32,
}

/// A task context, boxed so that its address stays valid while the library holds it (for
/// `read`, until the stream is released).
pub(crate) struct Task {
    context: Box<SparkDsTaskContext>,
    state: Arc<TaskState>,
}

static NEXT_TASK_ID: AtomicU64 = AtomicU64::new(1);

impl Task {
    /// A task of `stage` for `partition`, first attempt.
    pub(crate) fn new(stage: i32, partition: usize) -> Task {
        Task::attempt(stage, partition, 0)
    }

    /// Attempt `attempt` of the task of `stage` for `partition`, with a task ID of its own.
    pub(crate) fn attempt(stage: i32, partition: usize, attempt: i32) -> Task {
        let state = Arc::new(TaskState::default());
        let context = Box::new(SparkDsTaskContext {
            size: std::mem::size_of::<SparkDsTaskContext>() as i64,
            task_id: NEXT_TASK_ID.fetch_add(1, Ordering::Relaxed) as i64,
            is_interrupted: Some(is_interrupted),
            host_data: Arc::as_ptr(&state) as *mut c_void,
            stage_id: stage,
            partition_id: i32::try_from(partition).unwrap_or(i32::MAX),
            attempt_number: attempt,
        });
        Task { context, state }
    }

    /// A task with the IDs that the host gives, killed once `check` returns true.
    pub(crate) fn with_ids(ids: TaskIds, check: Option<InterruptCheck>) -> Task {
        let state = Arc::new(TaskState {
            interrupted: AtomicBool::new(false),
            check,
        });
        let context = Box::new(SparkDsTaskContext {
            size: std::mem::size_of::<SparkDsTaskContext>() as i64,
            task_id: ids.task_id,
            is_interrupted: Some(is_interrupted),
            host_data: Arc::as_ptr(&state) as *mut c_void,
            stage_id: ids.stage_id,
            partition_id: ids.partition_id,
            attempt_number: ids.attempt_number,
        });
        Task { context, state }
    }

    /// The pointer to pass to `read` and `create_data_writer`.
    pub(crate) fn as_ptr(&self) -> *const SparkDsTaskContext {
        &*self.context
    }

    /// Kills the task: `is_interrupted` returns 1 from now on.
    pub(crate) fn interrupt(&self) {
        self.state.interrupted.store(true, Ordering::SeqCst);
    }
}

/// # Safety
///
/// `task` is a context that `Task::new` built and that is still alive: the library may only
/// call this with the context it was given, while it is valid (SparkDsTaskContext).
unsafe extern "C" fn is_interrupted(task: *const SparkDsTaskContext) -> c_int {
    if task.is_null() {
        return 0;
    }
    // SAFETY: per the contract above, `task` points to a live context whose `host_data` is the
    // `TaskState` that the `Task` keeps alive alongside it.
    let state = unsafe { &*((*task).host_data as *const TaskState) };
    if state.interrupted.load(Ordering::SeqCst) {
        return 1;
    }
    // The host's check may call into a runtime that can fail: a panic must not unwind into the
    // library's frames, and counts as "not killed".
    let checked = state.check.as_ref().map(|check| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)).unwrap_or(false)
    });
    c_int::from(checked.unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_reports_its_interruption() {
        let task = Task::new(0, 3);
        // SAFETY: the context is alive and was built by Task::new.
        let check = || unsafe { is_interrupted(task.as_ptr()) };
        assert_eq!(check(), 0);
        task.interrupt();
        assert_eq!(check(), 1);
        assert_eq!(task.context.partition_id, 3);
    }
}
