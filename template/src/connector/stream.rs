//! Micro-batch reads: the sample's endless sequence, which grows by `rows_per_micro_batch`
//! rows each time Spark asks for the latest offset. An offset is a row count, so reading the
//! same offset range again returns the same rows, and a query restarted from its checkpoint reads
//! every row exactly once.

use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};

use super::sample::{self, RowRange};
use super::Source;
use spark_datasource::kit::schema::Scan;
use spark_datasource::{
    log, Batches, DataSource, Error, Result, StreamRead, StreamReader, TaskContext,
};

/// The options of a streaming read.
const OPTIONS: &[&str] = &["rows_per_micro_batch", "num_partitions", "batch_rows"];

/// The reader of the stream.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    rows_per_micro_batch: u64,
    num_partitions: u64,
    batch_rows: u64,
    /// The source's columns and those Spark reads.
    scan: Scan,
}

/// A position in the stream: the number of rows before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offset {
    pub rows: u64,
}

impl StreamRead for Source {
    type Reader = Reader;

    fn stream_reader(&self, schema: SchemaRef) -> Result<Reader> {
        self.options.expect_only(OPTIONS)?;
        let reader = Reader {
            rows_per_micro_batch: self.options.get_or("rows_per_micro_batch", 10_u64)?,
            num_partitions: self.options.get_or("num_partitions", 2_u64)?,
            batch_rows: self.options.get_or("batch_rows", sample::BATCH_ROWS)?,
            scan: Scan::new(self.schema()?, schema)?,
        };
        if reader.num_partitions == 0 || reader.batch_rows == 0 {
            return Err(Error::Option(
                "options `num_partitions` and `batch_rows` must be at least 1".to_string(),
            ));
        }
        Ok(reader)
    }
}

impl StreamReader for Reader {
    type Offset = Offset;
    type Partition = RowRange;

    fn initial_offset(&self) -> Result<Offset> {
        Ok(Offset { rows: 0 })
    }

    fn latest_offset(&mut self, start: Offset) -> Result<Offset> {
        Ok(Offset {
            rows: start.rows + self.rows_per_micro_batch,
        })
    }

    fn partitions(&self, start: Offset, end: Offset) -> Result<Vec<RowRange>> {
        if end.rows < start.rows {
            return Err(Error::msg(format!(
                "the end offset {} is before the start offset {}",
                end.rows, start.rows
            )));
        }
        Ok(sample::split(start.rows..end.rows, self.num_partitions))
    }

    fn read(&self, partition: RowRange, _task: &TaskContext) -> Result<Batches> {
        sample::batches(partition, &self.scan.read, self.batch_rows)
    }

    fn commit(&mut self, end: Offset) -> Result<()> {
        // The sequence is computed, so there is nothing to discard; a source that buffers data
        // would free what lies before `end` here.
        log::debug(&format!("committed the stream up to row {}", end.rows));
        Ok(())
    }
}
