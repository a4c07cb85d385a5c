//! The lazy stream of batches that a read returns.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::Result;

/// The batches that a read returns: a schema and a lazy, fallible sequence of batches of that
/// schema. The C side exports it as an Arrow C stream, checking each batch on the way.
pub struct Batches {
    schema: SchemaRef,
    batches: Box<dyn Iterator<Item = Result<RecordBatch>> + Send>,
}

impl Batches {
    /// Batches of `schema`, produced by `batches` when Spark asks for the next one.
    pub fn new<I>(schema: SchemaRef, batches: I) -> Self
    where
        I: IntoIterator<Item = Result<RecordBatch>>,
        I::IntoIter: Send + 'static,
    {
        Batches {
            schema,
            batches: Box::new(batches.into_iter()),
        }
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.batches.next()
    }
}
