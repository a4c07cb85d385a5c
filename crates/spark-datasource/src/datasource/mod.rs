//! The traits that a data source implements: safe Rust that mirrors Data Source V2 and the
//! Python Data Source API. The C side of the crate (`crate::ffi`) turns them into the
//! interface of `spark_datasource.h`; a data source never touches a pointer.
//!
//! | Spark (DSv2 / Python)                      | here                                   |
//! |--------------------------------------------|----------------------------------------|
//! | `TableProvider` / `DataSource`             | [`DataSource`]                         |
//! | `ScanBuilder` + `Batch` / `reader(schema)` | [`BatchRead`], [`BatchReader`]         |
//! | `PartitionReader` on a thread of its own   | [`Producer`], [`BatchSender`]          |
//! | `MicroBatchStream` / `streamReader`        | [`StreamRead`], [`StreamReader`]       |
//! | `BatchWrite` / `writer(schema, overwrite)` | [`Write`], [`Writer`]                  |
//! | `DataWriter`                               | [`DataWriter`]                         |
//!
//! Readers and writers cross from the driver to the executors as bytes, like Python's pickled
//! reader objects: they implement `Serialize` and `Deserialize`, and so do partitions,
//! offsets and commit messages. Keep connections and file handles out of them. A schema
//! (`SchemaRef` included) is serializable, so a reader or writer may keep the one it was
//! created with.

mod batch_read;
mod batches;
mod error;
pub mod log;
mod options;
mod producer;
mod secret;
mod stream_read;
mod task;
mod write;

use arrow_schema::SchemaRef;

pub use batch_read::{BatchRead, BatchReader};
pub use batches::Batches;
pub use error::{Error, Result};
pub use options::{OptionValue, Options, SPARK_OPTIONS};
pub use producer::{BatchSender, Producer, DEFAULT_BATCHES_AHEAD};
pub use secret::{is_secret_key, Secret, REDACTED};
pub use stream_read::{StreamRead, StreamReader};
pub use task::TaskContext;
pub use write::{DataWriter, Write, WriteInfo, WriteMode, Writer};

/// A data source, created on the driver for each query with the options of the query.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is exported by `export!` but does not implement `spark_datasource::DataSource`",
    label = "not a data source",
    note = "implement `spark_datasource::DataSource` for `{Self}`: `create` from the options, and its `schema`"
)]
pub trait DataSource: Sized + 'static {
    /// Creates the data source. `name` is the name the query used. Validate the options here
    /// or in the operation that uses them, with errors that name the option.
    ///
    /// # Errors
    /// An invalid option.
    fn create(name: &str, options: Options) -> Result<Self>;

    /// The schema of the data source: what `spark.read.format(name).load()` reads when the
    /// query gives no schema of its own.
    ///
    /// # Errors
    /// When the schema cannot be determined, for example from a file that does not exist.
    fn schema(&self) -> Result<SchemaRef>;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, Field, Schema, SchemaRef};
    use serde::{Deserialize, Serialize};

    /// A reader that keeps its schema, as readers of typed sources do.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Reader {
        schema: SchemaRef,
        path: String,
    }

    #[test]
    fn a_reader_can_keep_its_schema_across_serialization() {
        let reader = Reader {
            schema: Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                Field::new("label", DataType::Utf8, true),
            ])),
            path: "/data".into(),
        };
        let bytes = serde_json::to_vec(&reader).expect("a reader serializes");
        let back: Reader = serde_json::from_slice(&bytes).expect("and deserializes");
        assert_eq!(back, reader);
    }
}
