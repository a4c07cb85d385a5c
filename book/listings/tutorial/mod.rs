//! The data source. This folder is the code you edit: replace the sample data with your own
//! source, keeping the traits of `spark_datasource`.
//!
//! The sample reads a sequence of numbers `[0, end)` as the columns `id`, `label` (null in
//! every third row, so that nulls are exercised) and `even`; it has one module per capability
//! that the project was generated with.

mod read;
mod sequence;
mod table;

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use spark_datasource::{DataSource, Options, Result};

/// The data source that the library exports: Spark creates one per query, on the driver,
/// with the options of the query.
pub struct Source {
    options: Options,
}

impl DataSource for Source {
    fn create(_name: &str, options: Options) -> Result<Self> {
        // The options are checked by the operation that uses them (read, stream or write),
        // since each accepts its own.
        Ok(Source { options })
    }

    fn schema(&self) -> Result<SchemaRef> {
        Ok(schema())
    }
}

/// The columns of the data source.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("label", DataType::Utf8, true),
        // The tutorial's new column: computed only when a query selects it (prune_columns).
        Field::new("even", DataType::Boolean, false),
    ]))
}
