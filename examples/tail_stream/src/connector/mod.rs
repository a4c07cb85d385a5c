//! A streaming data source over an append-only directory of text files, like `tail -F` on
//! log files: each micro-batch reads the complete lines appended since the previous one.
//!
//! - Reads (`stream`): an offset is, for each file, the byte position after its last complete
//!   line that the stream has reached (`offsets`), so the same offset range always reads the
//!   same lines, and a query restarted from its checkpoint reads each line exactly once.
//!   `commit_offset` records the position that Spark will not ask for again, and with
//!   `delete_consumed=true` removes the files read to their end that are no longer written.
//! - Writes (`write`): each epoch of a streaming query becomes one JSON-lines file, published
//!   with one atomic rename; an epoch replayed after a restart finds its file and writes nothing.
//!
//! Rows: `file` (the file's name), `position` (the byte where the line begins in the file) and
//! `line` (its text, without the line break).
//!
//! Options: `path` (required), `max_lines_per_trigger` (read at most that many lines per
//! micro-batch; default: everything available), `delete_consumed` (default `false`).

mod offsets;
mod stream;
mod write;

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use spark_datasource::{DataSource, Options, Result};

/// Every option; Spark adds `checkpointLocation` to streaming writes.
const OPTIONS: &[&str] = &[
    "path",
    "max_lines_per_trigger",
    "delete_consumed",
    "checkpointLocation",
];

/// The data source: the options of the query, checked by the operation that uses them.
pub struct Source {
    options: Options,
}

impl DataSource for Source {
    fn create(_name: &str, options: Options) -> Result<Self> {
        options.expect_only(OPTIONS)?;
        Ok(Source { options })
    }

    fn schema(&self) -> Result<SchemaRef> {
        Ok(schema())
    }
}

/// The columns of a read: where each line comes from, and its text.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("file", DataType::Utf8, false),
        Field::new("position", DataType::Int64, false),
        Field::new("line", DataType::Utf8, false),
    ]))
}
