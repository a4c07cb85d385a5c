//! A read that produces its batches on a thread of its own: [`Producer`], the iterator that
//! a read returns inside [`Batches`](super::Batches), and [`BatchSender`], the handle that the
//! thread sends with.
//!
//! A thread is what a reader needs when its client is asynchronous or blocking (a database
//! cursor, a socket), so that the next batch is fetched and decoded while Spark consumes the
//! previous one. A plain channel gets one thing wrong that loses rows: when the thread panics
//! or returns early, its sender is dropped and the receiving iterator ends, which Spark takes
//! for the end of the partition. Here the stream ends only after the thread's function
//! returned `Ok`; its error, its panic (with where it happened), or a thread that ended any
//! other way reach Spark as a failed task.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use arrow_array::RecordBatch;

use super::task::InterruptCheck;
use super::{Error, Result, TaskContext};
use crate::ffi::guard::catch;

/// Batches that the thread may have ready ahead of Spark when [`Producer::spawn`] is used: one
/// to hand over while the next is built, and one more to absorb an uneven source.
pub const DEFAULT_BATCHES_AHEAD: usize = 2;

/// How often a consumer that waits for a batch checks whether Spark killed the task.
const POLL: Duration = Duration::from_millis(50);

/// What the thread sends.
enum Message {
    Batch(RecordBatch),
    Failed(Error),
    /// The thread's function returned `Ok`: the only end of the stream.
    Done,
}

/// What both sides see.
struct Shared {
    /// Set when the consumer stops: it was dropped, Spark killed the task, or a send failed.
    cancelled: AtomicBool,
    /// The task's `is_interrupted`, which the host keeps valid only until the stream is
    /// released: the consumer's drop takes it away under the write lock, so the thread never
    /// calls it afterwards.
    interrupted: RwLock<Option<InterruptCheck>>,
}

impl Shared {
    fn is_cancelled(&self) -> bool {
        if self.cancelled.load(Ordering::Acquire) {
            return true;
        }
        // A poisoned lock only means a check panicked once: the slot itself is still sound.
        let check = self.interrupted.read().unwrap_or_else(|p| p.into_inner());
        if check.as_ref().is_some_and(|interrupted| interrupted()) {
            self.cancel();
            return true;
        }
        false
    }

    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }
}

/// The batches of a read produced by a thread of its own: an iterator of
/// `Result<RecordBatch>` to pass to [`Batches::new`](super::Batches::new).
///
/// - The channel between the thread and Spark is bounded: the thread blocks in
///   [`BatchSender::send`] once it is that many batches ahead (back-pressure), so memory stays
///   bounded however fast the source is.
/// - The iterator ends only after the thread's function returned `Ok` without being
///   cancelled. An `Err` it returns,
///   a panic (as [`Error::Panic`], with its message and location), or a thread that ended
///   without either is an `Err` item: Spark fails the task instead of reading a partition
///   that lacks rows.
/// - When Spark stops reading (it reached a limit, or released the stream) or kills the task,
///   the thread learns it: [`BatchSender::send`] fails and [`BatchSender::is_cancelled`]
///   returns `true`, so it can return early. A consumer that waits for a batch of a killed
///   task gets [`Error::Interrupted`] within 50 ms, even while the thread is blocked.
///
/// ```
/// use std::sync::Arc;
///
/// use spark_datasource::arrow_array::{Int64Array, RecordBatch};
/// use spark_datasource::arrow_schema::{DataType, Field, Schema};
/// use spark_datasource::{Batches, Producer, Result, TaskContext};
///
/// fn read(task: &TaskContext) -> Result<Batches> {
///     let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
///     let produced = schema.clone();
///     let batches = Producer::spawn(task, move |out| {
///         // A blocking client lives here, on the thread, for as long as the read.
///         for start in (0..1_000i64).step_by(100) {
///             let ids = Int64Array::from_iter_values(start..start + 100);
///             out.send(RecordBatch::try_new(produced.clone(), vec![Arc::new(ids)])?)?;
///         }
///         Ok(())
///     })?;
///     Ok(Batches::new(schema, batches))
/// }
///
/// let rows: usize = read(&TaskContext::for_tests(0, 0))?
///     .map(|batch| batch.map(|b| b.num_rows()))
///     .sum::<Result<usize>>()?;
/// assert_eq!(rows, 1_000);
/// # Ok::<(), spark_datasource::Error>(())
/// ```
pub struct Producer {
    receiver: Receiver<Message>,
    shared: Arc<Shared>,
    interrupted: InterruptCheck,
    state: State,
}

/// Where the iterator is.
enum State {
    Running,
    /// The thread returned `Ok` and every batch was taken.
    Done,
    /// The read failed with this message: any later call fails again, never ends the stream.
    Failed(String),
}

/// The thread's side of a [`Producer`]: sends batches to Spark, and tells whether Spark still
/// wants them.
pub struct BatchSender {
    sender: SyncSender<Message>,
    shared: Arc<Shared>,
}

impl Producer {
    /// Runs `produce` on a new thread, which sends the read's batches through the
    /// [`BatchSender`] it is given, at most [`DEFAULT_BATCHES_AHEAD`] ahead of Spark.
    ///
    /// # Errors
    /// The operating system cannot start a thread. Errors of `produce` are items of the
    /// iterator.
    ///
    /// # Panics
    /// Never here; a panic of `produce`, on its thread, is caught there and becomes an
    /// [`Error::Panic`] item of the iterator, with its message and location.
    pub fn spawn<F>(task: &TaskContext, produce: F) -> Result<Producer>
    where
        F: FnOnce(&BatchSender) -> Result<()> + Send + 'static,
    {
        Producer::with_capacity(task, DEFAULT_BATCHES_AHEAD, produce)
    }

    /// As [`Producer::spawn`], with at most `ahead` batches ready ahead of Spark (0: each
    /// send waits until Spark takes the batch). Each batch ahead is memory that the task
    /// holds: size batches so that `ahead + 2` of them fit in what a task may use.
    ///
    /// # Errors
    /// The operating system cannot start a thread.
    pub fn with_capacity<F>(task: &TaskContext, ahead: usize, produce: F) -> Result<Producer>
    where
        F: FnOnce(&BatchSender) -> Result<()> + Send + 'static,
    {
        let (sender, receiver) = sync_channel(ahead);
        let interrupted = task.interrupt_check();
        let shared = Arc::new(Shared {
            cancelled: AtomicBool::new(false),
            interrupted: RwLock::new(Some(interrupted.clone())),
        });
        let out = BatchSender {
            sender,
            shared: shared.clone(),
        };
        std::thread::Builder::new()
            .name(format!("spark-ds-read-{}", task.partition_id()))
            .spawn(move || out.run(produce))
            .map_err(|e| Error::io("cannot start the thread of a read", e))?;
        Ok(Producer {
            receiver,
            shared,
            interrupted,
            state: State::Running,
        })
    }

    /// Ends the read with `error`, remembered for any later call.
    fn fail(&mut self, error: Error) -> Option<Result<RecordBatch>> {
        self.shared.cancel();
        self.state = State::Failed(error.to_string());
        Some(Err(error))
    }
}

impl Iterator for Producer {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        match &self.state {
            State::Running => {}
            State::Done => return None,
            State::Failed(message) => return Some(Err(Error::msg(message.clone()))),
        }
        loop {
            match self.receiver.recv_timeout(POLL) {
                Ok(Message::Batch(batch)) => return Some(Ok(batch)),
                Ok(Message::Failed(error)) => return self.fail(error),
                Ok(Message::Done) => {
                    self.state = State::Done;
                    return None;
                }
                Err(RecvTimeoutError::Timeout) => {
                    if (self.interrupted)() {
                        return self.fail(Error::Interrupted);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return self.fail(Error::msg(
                        "the thread of the read ended without finishing it: the partition is \
                         incomplete",
                    ))
                }
            }
        }
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.shared.cancel();
        // After this the thread no longer calls the task's check, whose task the host may
        // free once the stream is released; dropping the receiver then fails a blocked send.
        let mut check = self
            .shared
            .interrupted
            .write()
            .unwrap_or_else(|p| p.into_inner());
        *check = None;
    }
}

impl BatchSender {
    /// Sends `batch` to Spark, waiting while the channel is full.
    ///
    /// # Errors
    /// [`Error::Cancelled`] once Spark stopped reading or killed the task: return it (with
    /// `?`); nobody reads it, and the thread should stop.
    pub fn send(&self, batch: RecordBatch) -> Result<()> {
        if self.shared.is_cancelled() {
            return Err(Error::Cancelled);
        }
        self.sender.send(Message::Batch(batch)).map_err(|_| {
            self.shared.cancel();
            Error::Cancelled
        })
    }

    /// Whether Spark stopped reading or killed the task: check it during long waits and
    /// between rows of a slow source (it calls the host's `is_interrupted`, so not for every
    /// value), then return.
    pub fn is_cancelled(&self) -> bool {
        self.shared.is_cancelled()
    }

    /// The body of the thread: `produce`, then its outcome as the last message.
    fn run<F>(self, produce: F)
    where
        F: FnOnce(&BatchSender) -> Result<()>,
    {
        let last = match catch(|| produce(&self)) {
            // A function that returned early because the task was killed has not read
            // everything: that is no end of the partition.
            Ok(()) if self.shared.cancelled.load(Ordering::Acquire) => {
                Message::Failed(Error::Interrupted)
            }
            Ok(()) => Message::Done,
            Err(error) => Message::Failed(error),
        };
        // Fails only when the consumer is gone, and then nobody is waiting for it.
        let _ = self.sender.send(last);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc::channel;
    use std::sync::Arc;
    use std::time::Instant;

    use arrow_array::Int32Array;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn batch(value: i32) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int32, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(vec![value]))])
            .expect("a valid batch")
    }

    fn task() -> TaskContext {
        TaskContext::for_tests(3, 0)
    }

    /// Waits up to 10 s for `condition`.
    fn eventually(condition: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if condition() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    #[test]
    fn every_batch_arrives_and_the_end_comes_after_the_function_returned_ok() -> Result<()> {
        let mut producer = Producer::spawn(&task(), |out| {
            for i in 0..5 {
                out.send(batch(i))?;
            }
            Ok(())
        })?;
        let mut values = Vec::new();
        for item in producer.by_ref() {
            values.push(item?.num_rows());
        }
        assert_eq!(values, [1; 5]);
        assert!(producer.next().is_none(), "the end stays the end");
        Ok(())
    }

    #[test]
    fn a_panic_of_the_thread_is_an_error_with_its_message_and_location() -> Result<()> {
        let line = line!() + 3;
        let mut producer = Producer::spawn(&task(), |out| {
            out.send(batch(1))?;
            panic!("offset overflow in the builder");
        })?;
        assert!(producer.next().is_some_and(|b| b.is_ok()));
        let error = producer.next().expect("an error, not the end");
        let message = error.expect_err("the panic is an error").to_string();
        assert_eq!(
            message,
            format!(
                "the data source panicked at {}:{line}:13: offset overflow in the builder",
                file!()
            )
        );
        let again = producer.next().expect("still an error, never the end");
        assert_eq!(again.expect_err("an error").to_string(), message);
        Ok(())
    }

    #[test]
    fn an_error_of_the_thread_is_an_error_of_the_stream() -> Result<()> {
        let mut producer = Producer::spawn(&task(), |out| {
            out.send(batch(1))?;
            Err(Error::msg("column `a` holds a negative element count"))
        })?;
        assert!(producer.next().is_some_and(|b| b.is_ok()));
        let error = producer.next().expect("an error, not the end");
        assert_eq!(
            error.expect_err("an error").to_string(),
            "column `a` holds a negative element count"
        );
        assert!(producer.next().is_some_and(|b| b.is_err()));
        Ok(())
    }

    #[test]
    fn the_channel_is_bounded() -> Result<()> {
        let sent = Arc::new(AtomicUsize::new(0));
        let counted = sent.clone();
        let mut producer = Producer::with_capacity(&task(), 2, move |out| {
            for i in 0..100 {
                out.send(batch(i))?;
                counted.fetch_add(1, Ordering::SeqCst);
            }
            Ok(())
        })?;
        // Two in the channel; the third send blocks until a batch is taken.
        assert!(eventually(|| sent.load(Ordering::SeqCst) == 2));
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(sent.load(Ordering::SeqCst), 2);
        assert!(producer.next().is_some_and(|b| b.is_ok()));
        assert!(eventually(|| sent.load(Ordering::SeqCst) == 3));
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(sent.load(Ordering::SeqCst), 3);
        assert_eq!(producer.count(), 99);
        Ok(())
    }

    #[test]
    fn dropping_the_stream_cancels_the_thread() -> Result<()> {
        let (report, outcome) = channel();
        let mut producer = Producer::with_capacity(&task(), 1, move |out| {
            let mut sent = 0;
            let result = loop {
                match out.send(batch(sent)) {
                    Ok(()) => sent += 1,
                    Err(error) => break error,
                }
            };
            let _ = report.send((sent, result.to_string(), out.is_cancelled()));
            Err(result)
        })?;
        assert!(producer.next().is_some_and(|b| b.is_ok()));
        drop(producer);
        let (sent, error, cancelled) = outcome
            .recv_timeout(Duration::from_secs(10))
            .expect("the thread returned");
        assert!(sent <= 3, "{sent} batches sent");
        assert_eq!(error, "Spark stopped reading: the read is cancelled");
        assert!(cancelled);
        Ok(())
    }

    #[test]
    fn a_killed_task_cancels_the_thread_and_fails_a_waiting_consumer() -> Result<()> {
        let killed = Arc::new(AtomicBool::new(false));
        let flag = killed.clone();
        let task = TaskContext::new((7, 0, 0, 0), Box::new(move || flag.load(Ordering::SeqCst)));
        let (report, outcome) = channel();
        let mut producer = Producer::spawn(&task, move |out| {
            out.send(batch(0))?;
            // A slow source, which checks between its rows.
            while !out.is_cancelled() {
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = report.send(());
            Ok(())
        })?;
        assert!(producer.next().is_some_and(|b| b.is_ok()));
        killed.store(true, Ordering::SeqCst);
        let error = producer.next().expect("an error, not the end");
        assert_eq!(
            error.expect_err("an error").to_string(),
            "the task was killed: stopping"
        );
        outcome
            .recv_timeout(Duration::from_secs(10))
            .expect("the thread saw the kill and returned");
        Ok(())
    }

    #[test]
    fn a_thread_that_ends_without_a_word_is_an_error() {
        let (sender, receiver) = sync_channel(1);
        drop(sender);
        let mut producer = Producer {
            receiver,
            shared: Arc::new(Shared {
                cancelled: AtomicBool::new(false),
                interrupted: RwLock::new(None),
            }),
            interrupted: task().interrupt_check(),
            state: State::Running,
        };
        let error = producer.next().expect("an error, not the end");
        assert!(error
            .expect_err("an error")
            .to_string()
            .starts_with("the thread of the read ended without finishing it"));
    }
}
