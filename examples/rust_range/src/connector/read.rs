//! Batch reads: two partitions, `[0, end/2)` and `[end/2, end)`, each read as one batch.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};

use super::{schema, Source};
use spark_datasource::{BatchRead, BatchReader, Batches, Error, Result, TaskContext};

/// The reader: `RangeReader { end }` of the guide. It crosses to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    end: i64,
}

/// What a task reads: the numbers `[start, end)`. The guide writes it as 16 little-endian
/// bytes; here `spark_datasource` encodes it (as JSON), so it is a plain struct.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    start: i64,
    end: i64,
}

impl BatchRead for Source {
    type Reader = Reader;

    fn reader(&self, requested: SchemaRef) -> Result<Reader> {
        // The guide ignores the schema of the query. A query that gives another schema
        // (`spark.read.schema(...)`) would then get batches that do not match it, which Spark
        // cannot read: say so instead.
        if requested.fields() != schema().fields() {
            return Err(Error::msg(format!(
                "rust_range reads one column, `id bigint not null`, but the query asked for \
                 {} column(s): drop the schema given with .schema(...)",
                requested.fields().len()
            )));
        }
        Ok(Reader { end: self.end })
    }
}

impl BatchReader for Reader {
    type Partition = Partition;

    fn partitions(&self) -> Result<Vec<Partition>> {
        Ok(split(self.end))
    }

    fn read(&self, partition: Partition, _task: &TaskContext) -> Result<Batches> {
        let ids = Int64Array::from_iter_values(partition.start..partition.end);
        let batch = RecordBatch::try_new(schema(), vec![Arc::new(ids)])?;
        Ok(Batches::new(schema(), [Ok(batch)]))
    }
}

/// The two partitions of `[0, end)`: `[0, end/2)` and `[end/2, end)`, as in the guide (for
/// `end` ≤ 1 the first, or both, are empty, and read no rows).
fn split(end: i64) -> Vec<Partition> {
    [(0, end / 2), (end / 2, end)]
        .into_iter()
        .map(|(start, end)| Partition { start, end })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(end: i64) -> Vec<(i64, i64)> {
        split(end).into_iter().map(|p| (p.start, p.end)).collect()
    }

    #[test]
    fn splits_the_range_in_two_halves() {
        assert_eq!(bounds(10), vec![(0, 5), (5, 10)]);
        assert_eq!(bounds(7), vec![(0, 3), (3, 7)]);
    }

    #[test]
    fn a_range_of_one_number_has_an_empty_first_half() {
        assert_eq!(bounds(1), vec![(0, 0), (0, 1)]);
        assert_eq!(bounds(0), vec![(0, 0), (0, 0)]);
    }

    #[test]
    fn a_partition_reads_its_numbers_in_one_batch() -> Result<()> {
        let reader = Reader { end: 10 };
        let task = TaskContext::for_tests(1, 0);
        let batches: Vec<RecordBatch> = reader
            .read(Partition { start: 5, end: 10 }, &task)?
            .collect::<Result<_>>()?;
        assert_eq!(batches.len(), 1);
        let expected = Int64Array::from_iter_values(5..10);
        assert_eq!(
            batches[0].column(0).as_ref(),
            &expected as &dyn arrow_array::Array
        );
        Ok(())
    }
}
