//! `SparkDsTaskContext` as the safe [`TaskContext`] of `crate::datasource`.

use std::mem::{offset_of, size_of};

use crate::datasource::{Error, Result, TaskContext};
use spark_datasource_abi::v1::SparkDsTaskContext;

/// A raw task pointer that may move to the thread that pulls the stream: the header keeps
/// the task valid until the stream is released, and `is_interrupted` is thread-safe.
#[derive(Clone, Copy)]
struct TaskPointer(*const SparkDsTaskContext);

// SAFETY: see the type's doc: the pointee is valid and thread-safe for as long as it is used.
unsafe impl Send for TaskPointer {}
// SAFETY: as for `Send`.
unsafe impl Sync for TaskPointer {}

impl TaskPointer {
    fn is_interrupted(self) -> bool {
        // SAFETY: the pointer is valid while the call or the stream that uses it lives.
        let task = unsafe { &*self.0 };
        match task.is_interrupted {
            // SAFETY: the host's thread-safe callback, given its own task.
            Some(is_interrupted) => (unsafe { is_interrupted(self.0) }) != 0,
            None => false,
        }
    }
}

/// The task of the current call.
///
/// # Safety
/// `task` is null or valid until the call returns, and, for `read`, until the stream it
/// returns is released.
pub unsafe fn task_context(task: *const SparkDsTaskContext) -> Result<TaskContext> {
    // SAFETY: the caller's contract.
    let raw = unsafe { task.as_ref() }.ok_or_else(|| Error::msg("the task context is NULL"))?;
    let needed = offset_of!(SparkDsTaskContext, attempt_number) + size_of::<i32>();
    if raw.size < needed as i64 {
        return Err(Error::msg(format!(
            "the task context is {} bytes, smaller than the {needed} of version 1",
            raw.size
        )));
    }
    let pointer = TaskPointer(task);
    Ok(TaskContext::new(
        (
            raw.task_id,
            raw.stage_id,
            raw.partition_id,
            raw.attempt_number,
        ),
        Box::new(move || pointer.is_interrupted()),
    ))
}

/// A check of `is_interrupted` for the stream that `read` exports.
///
/// # Safety
/// As [`task_context`]: `task` stays valid until the stream is released.
pub unsafe fn interrupt_check(task: *const SparkDsTaskContext) -> Box<dyn Fn() -> bool + Send> {
    let pointer = TaskPointer(task);
    Box::new(move || pointer.is_interrupted())
}
