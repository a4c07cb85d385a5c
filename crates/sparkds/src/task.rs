//! `SparkDsTaskContext`: the task that runs a read or a data writer on an executor, with an
//! `is_interrupted` that the caller controls to test cancellation (rule 23).
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::header::SparkDsTaskContext;

/// The host's side of a task: whether it was killed.
#[derive(Debug, Default)]
pub(crate) struct TaskState {
    interrupted: AtomicBool,
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
        let state = Arc::new(TaskState::default());
        let context = Box::new(SparkDsTaskContext {
            size: std::mem::size_of::<SparkDsTaskContext>() as i64,
            task_id: NEXT_TASK_ID.fetch_add(1, Ordering::Relaxed) as i64,
            is_interrupted: Some(is_interrupted),
            host_data: Arc::as_ptr(&state) as *mut c_void,
            stage_id: stage,
            partition_id: i32::try_from(partition).unwrap_or(i32::MAX),
            attempt_number: 0,
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
    c_int::from(state.interrupted.load(Ordering::SeqCst))
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
