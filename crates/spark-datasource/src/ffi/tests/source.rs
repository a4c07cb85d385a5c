//! Sources for the tests of the table: one that reads only, and one that implements every
//! trait, each as small as the traits allow.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use serde::{Deserialize, Serialize};

use crate::datasource::{
    BatchRead, BatchReader, Batches, DataSource, DataWriter, Options, Result, StreamRead,
    StreamReader, TaskContext, Write, WriteInfo, Writer,
};

/// A source of no rows that declares batch reads.
pub struct ReadOnly;

impl DataSource for ReadOnly {
    fn create(_name: &str, _options: Options) -> Result<Self> {
        Ok(ReadOnly)
    }

    fn schema(&self) -> Result<SchemaRef> {
        Ok(Arc::new(Schema::empty()))
    }
}

impl BatchRead for ReadOnly {
    type Reader = Nothing;

    fn reader(&self, _schema: SchemaRef) -> Result<Nothing> {
        Ok(Nothing)
    }
}

/// A source of no rows with every capability.
pub struct Everything;

impl DataSource for Everything {
    fn create(_name: &str, _options: Options) -> Result<Self> {
        Ok(Everything)
    }

    fn schema(&self) -> Result<SchemaRef> {
        Ok(Arc::new(Schema::empty()))
    }
}

impl BatchRead for Everything {
    type Reader = Nothing;

    fn reader(&self, _schema: SchemaRef) -> Result<Nothing> {
        Ok(Nothing)
    }
}

impl StreamRead for Everything {
    type Reader = Nothing;

    fn stream_reader(&self, _schema: SchemaRef) -> Result<Nothing> {
        Ok(Nothing)
    }
}

impl Write for Everything {
    type Writer = Nothing;

    fn writer(&self, _info: WriteInfo) -> Result<Nothing> {
        Ok(Nothing)
    }
}

/// The reader, writer and data writer of both sources.
#[derive(Serialize, Deserialize)]
pub struct Nothing;

fn no_batches() -> Batches {
    Batches::new(Arc::new(Schema::empty()), std::iter::empty())
}

impl BatchReader for Nothing {
    type Partition = ();

    fn partitions(&self) -> Result<Vec<()>> {
        Ok(Vec::new())
    }

    fn read(&self, _partition: (), _task: &TaskContext) -> Result<Batches> {
        Ok(no_batches())
    }
}

impl StreamReader for Nothing {
    type Offset = u64;
    type Partition = ();

    fn initial_offset(&self) -> Result<u64> {
        Ok(0)
    }

    fn latest_offset(&mut self, start: u64) -> Result<u64> {
        Ok(start)
    }

    fn partitions(&self, _start: u64, _end: u64) -> Result<Vec<()>> {
        Ok(Vec::new())
    }

    fn read(&self, _partition: (), _task: &TaskContext) -> Result<Batches> {
        Ok(no_batches())
    }
}

impl Writer for Nothing {
    type Message = ();
    type DataWriter = Nothing;

    fn data_writer(&self, _task: &TaskContext, _epoch: Option<u64>) -> Result<Nothing> {
        Ok(Nothing)
    }

    fn commit(&mut self, _epoch: Option<u64>, _messages: Vec<()>) -> Result<()> {
        Ok(())
    }

    fn abort(&mut self, _epoch: Option<u64>, _messages: Vec<Option<()>>) -> Result<()> {
        Ok(())
    }
}

impl DataWriter for Nothing {
    type Message = ();

    fn write(&mut self, _batch: RecordBatch) -> Result<()> {
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        Ok(())
    }

    fn abort(&mut self) -> Result<()> {
        Ok(())
    }
}

// The one `spark_ds_init` of the test binary, so that the macro's whole expansion compiles
// (with its check that the function has the header's type).
crate::export!(Everything: batch_read, micro_batch_read, batch_write, truncate);
