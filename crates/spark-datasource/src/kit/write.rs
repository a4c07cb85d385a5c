//! The two-phase skeleton of an atomic write, around the connector's own steps: each task
//! attempt stages its rows where no reader sees them, the driver publishes in one step what
//! the commit messages name, and an abort or a failed attempt leaves nothing.
//!
//! The connector implements [`TwoPhase`] (how to stage, publish and discard) and names
//! [`Staged<W>`] as its `Write::Writer`; the skeleton keeps the rules:
//!
//! - a task attempt that fails, is aborted or is dropped unfinished (a killed task) discards
//!   what it staged;
//! - each message carries its partition and attempt, and a commit that names a partition twice
//!   (a retried task whose first attempt also reported) publishes nothing and says so;
//! - an abort discards what each message that arrived names.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use spark_datasource::arrow_array::RecordBatch;
//! use spark_datasource::kit::write::{Staged, TwoPhase};
//! use spark_datasource::{Result, TaskContext, Writer, DataWriter};
//!
//! /// Rows kept in memory: staged per attempt, published into `table` by the commit.
//! #[derive(Clone, Default, Serialize, Deserialize)]
//! struct Memory {
//!     table: Vec<usize>,
//! }
//!
//! impl TwoPhase for Memory {
//!     type Stage = usize;
//!     type Message = usize;
//!     fn begin(&self, _task: &TaskContext, _epoch: Option<u64>) -> Result<usize> {
//!         Ok(0)
//!     }
//!     fn write(&self, stage: &mut usize, batch: RecordBatch) -> Result<()> {
//!         *stage += batch.num_rows();
//!         Ok(())
//!     }
//!     fn finish(&self, stage: usize) -> Result<usize> {
//!         Ok(stage)
//!     }
//!     fn discard_stage(&self, _stage: usize) {}
//!     fn publish(&mut self, _epoch: Option<u64>, staged: Vec<usize>) -> Result<()> {
//!         self.table.extend(staged);
//!         Ok(())
//!     }
//!     fn discard(&mut self, _epoch: Option<u64>, _staged: Vec<usize>) -> Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! let mut writer = Staged::new(Memory::default());
//! let mut first = writer.data_writer(&TaskContext::for_tests(0, 0), None)?;
//! let message = first.commit()?;
//! // The same partition reported twice: nothing is published.
//! let twice = writer.commit(None, vec![message.clone(), message.clone()]);
//! assert!(twice.is_err());
//! writer.commit(None, vec![message])?;
//! assert_eq!(writer.connector().table, vec![0]);
//! # Ok::<(), spark_datasource::Error>(())
//! ```

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::{DataWriter, Error, Result, TaskContext, Writer};

/// The connector's steps of a two-phase write.
pub trait TwoPhase: Clone + Serialize + DeserializeOwned + 'static {
    /// The open staging of one task attempt (a file being written, a transaction...).
    type Stage: 'static;
    /// What a finished stage reports to the driver: a name of the staged data, not the rows.
    type Message: Serialize + DeserializeOwned + 'static;

    /// Opens the staging of a task attempt, on an executor.
    ///
    /// # Errors
    /// When the staging area cannot be made.
    fn begin(&self, task: &TaskContext, epoch: Option<u64>) -> Result<Self::Stage>;

    /// Stages one batch.
    ///
    /// # Errors
    /// When the rows cannot be staged; the skeleton then discards the stage.
    fn write(&self, stage: &mut Self::Stage, batch: RecordBatch) -> Result<()>;

    /// Closes the stage, still unpublished, and names it.
    ///
    /// # Errors
    /// When the stage cannot be closed; the skeleton has no stage left to discard, so leave
    /// nothing behind on error.
    fn finish(&self, stage: Self::Stage) -> Result<Self::Message>;

    /// Removes an unfinished stage: the attempt failed, was aborted or was killed. It cannot
    /// fail: what it cannot remove, the next commit or abort of the table can.
    fn discard_stage(&self, stage: Self::Stage);

    /// Publishes, in one step, what the messages name: one per partition.
    ///
    /// # Errors
    /// When the publication fails; it must then have published nothing.
    fn publish(&mut self, epoch: Option<u64>, staged: Vec<Self::Message>) -> Result<()>;

    /// Removes what the messages name: the write is aborted.
    ///
    /// # Errors
    /// When some staged data cannot be removed.
    fn discard(&mut self, epoch: Option<u64>, staged: Vec<Self::Message>) -> Result<()>;
}

/// A commit message: the connector's, with the task attempt that staged it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Message<M> {
    /// The partition of the task.
    pub partition: i32,
    /// The attempt of the task.
    pub attempt: i32,
    /// What the attempt staged.
    pub staged: M,
}

/// The driver side of a two-phase write: a `Writer` of the SDK around the connector's steps.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Staged<W> {
    connector: W,
}

impl<W: TwoPhase> Staged<W> {
    /// The writer of `connector`'s steps.
    pub fn new(connector: W) -> Self {
        Staged { connector }
    }

    /// The connector's steps, and what they hold.
    pub fn connector(&self) -> &W {
        &self.connector
    }
}

impl<W: TwoPhase> Writer for Staged<W> {
    type Message = Message<W::Message>;
    type DataWriter = StageWriter<W>;

    fn data_writer(&self, task: &TaskContext, epoch: Option<u64>) -> Result<StageWriter<W>> {
        Ok(StageWriter {
            stage: Some(self.connector.begin(task, epoch)?),
            connector: self.connector.clone(),
            partition: task.partition_id(),
            attempt: task.attempt_number(),
        })
    }

    fn commit(&mut self, epoch: Option<u64>, messages: Vec<Self::Message>) -> Result<()> {
        let mut seen: BTreeMap<i32, i32> = BTreeMap::new();
        for m in &messages {
            if let Some(first) = seen.insert(m.partition, m.attempt) {
                return Err(Error::msg(format!(
                    "partition {} reported twice (attempts {first} and {}): nothing was \
                     published; run the write again",
                    m.partition, m.attempt
                )));
            }
        }
        let staged = messages.into_iter().map(|m| m.staged).collect();
        self.connector.publish(epoch, staged)
    }

    fn abort(&mut self, epoch: Option<u64>, messages: Vec<Option<Self::Message>>) -> Result<()> {
        let staged = messages.into_iter().flatten().map(|m| m.staged).collect();
        self.connector.discard(epoch, staged)
    }
}

/// One task attempt's side: stages batches, and discards them unless finished.
pub struct StageWriter<W: TwoPhase> {
    connector: W,
    stage: Option<W::Stage>,
    partition: i32,
    attempt: i32,
}

impl<W: TwoPhase> StageWriter<W> {
    fn open(&mut self) -> Result<&mut W::Stage> {
        self.stage
            .as_mut()
            .ok_or_else(|| Error::msg("this task attempt has already committed or aborted"))
    }
}

impl<W: TwoPhase> DataWriter for StageWriter<W> {
    type Message = Message<W::Message>;

    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let connector = self.connector.clone();
        let result = connector.write(self.open()?, batch);
        if result.is_err() {
            if let Some(stage) = self.stage.take() {
                self.connector.discard_stage(stage);
            }
        }
        result
    }

    fn commit(&mut self) -> Result<Self::Message> {
        let stage = self
            .stage
            .take()
            .ok_or_else(|| Error::msg("this task attempt has already committed or aborted"))?;
        Ok(Message {
            partition: self.partition,
            attempt: self.attempt,
            staged: self.connector.finish(stage)?,
        })
    }

    fn abort(&mut self) -> Result<()> {
        if let Some(stage) = self.stage.take() {
            self.connector.discard_stage(stage);
        }
        Ok(())
    }
}

impl<W: TwoPhase> Drop for StageWriter<W> {
    /// A task killed between its batches: what it staged goes.
    fn drop(&mut self) {
        if let Some(stage) = self.stage.take() {
            self.connector.discard_stage(stage);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Stages that count rows in a shared log of what exists.
    #[derive(Clone, Default, Serialize, Deserialize)]
    struct Log {
        #[serde(skip)]
        staged: Arc<Mutex<Vec<(i32, usize)>>>,
        #[serde(skip)]
        published: Arc<Mutex<Vec<(i32, usize)>>>,
    }

    impl TwoPhase for Log {
        type Stage = (i32, usize);
        type Message = (i32, usize);
        fn begin(&self, task: &TaskContext, _: Option<u64>) -> Result<(i32, usize)> {
            Ok((task.partition_id(), 0))
        }
        fn write(&self, stage: &mut (i32, usize), batch: RecordBatch) -> Result<()> {
            if batch.num_rows() == 0 {
                return Err(Error::msg("an empty batch"));
            }
            stage.1 += batch.num_rows();
            Ok(())
        }
        fn finish(&self, stage: (i32, usize)) -> Result<(i32, usize)> {
            self.staged
                .lock()
                .map_err(|_| Error::msg("lock"))?
                .push(stage);
            Ok(stage)
        }
        fn discard_stage(&self, _: (i32, usize)) {}
        fn publish(&mut self, _: Option<u64>, staged: Vec<(i32, usize)>) -> Result<()> {
            self.published
                .lock()
                .map_err(|_| Error::msg("lock"))?
                .extend(staged);
            Ok(())
        }
        fn discard(&mut self, _: Option<u64>, staged: Vec<(i32, usize)>) -> Result<()> {
            let mut left = self.staged.lock().map_err(|_| Error::msg("lock"))?;
            left.retain(|s| !staged.contains(s));
            Ok(())
        }
    }

    fn rows(n: usize) -> RecordBatch {
        let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
            "x",
            arrow_schema::DataType::Int64,
            false,
        )]));
        let values = arrow_array::Int64Array::from(vec![1; n]);
        RecordBatch::try_new(schema, vec![Arc::new(values)]).expect("a batch")
    }

    #[test]
    fn a_retried_partition_is_published_once_or_not_at_all() -> Result<()> {
        let log = Log::default();
        let mut writer = Staged::new(log.clone());
        let attempt = |partition, number| -> Result<Message<(i32, usize)>> {
            let mut task = writer.data_writer(&TaskContext::for_tests(partition, number), None)?;
            task.write(rows(2))?;
            task.commit()
        };
        let (a, b, retried) = (attempt(0, 0)?, attempt(1, 0)?, attempt(1, 1)?);
        let message = writer
            .commit(None, vec![a.clone(), b, retried.clone()])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "partition 1 reported twice (attempts 0 and 1): nothing was published; run the \
             write again"
        );
        assert!(log
            .published
            .lock()
            .map_err(|_| Error::msg("lock"))?
            .is_empty());
        writer.commit(None, vec![a, retried])?;
        assert_eq!(
            *log.published.lock().map_err(|_| Error::msg("lock"))?,
            vec![(0, 2), (1, 2)]
        );
        Ok(())
    }

    #[test]
    fn a_failed_or_dropped_attempt_reports_nothing_and_an_abort_discards_the_rest() -> Result<()> {
        let log = Log::default();
        let mut writer = Staged::new(log.clone());
        let mut failed = writer.data_writer(&TaskContext::for_tests(0, 0), None)?;
        assert!(failed.write(rows(0)).is_err());
        assert!(failed.commit().is_err());
        drop(writer.data_writer(&TaskContext::for_tests(1, 0), None)?);
        let mut done = writer.data_writer(&TaskContext::for_tests(2, 0), None)?;
        done.write(rows(3))?;
        let message = done.commit()?;
        writer.abort(None, vec![None, Some(message)])?;
        assert!(log
            .staged
            .lock()
            .map_err(|_| Error::msg("lock"))?
            .is_empty());
        Ok(())
    }
}
