//! The protocols of the interface one step at a time, for a host whose calls come one by one
//! and whose handles live across them, such as the JNI library of the JVM plugin
//! (`crates/sparkds-jni`), where Spark decides when to call what.
//!
//! The drivers of this crate ([`Library::batch_read`](crate::Library::batch_read) and the
//! others) run a whole protocol in one call and copy every batch; these steps return each handle
//! of `spark_datasource.h` as a value that closes it when dropped, and the batches of a stream in
//! place, without a copy. The same checks run on every call (see the crate's documentation):
//! a broken rule is an [`Error::Violation`](crate::Error::Violation) that names the function, the
//! place and the rule. Full validation of the data (`validate_full` of arrow-rs, UTF-8
//! included) costs a pass over every value, so it only runs with [`Checks::full`].
//!
//! Libraries are loaded once and never unloaded, so the steps hold `&'static Library`: leak the
//! library once (`Box::leak`). A host that measures the library loads it with
//! `HostOptions::observer`, which is told the time of every call the steps make into it, the
//! stream's callbacks and releases included (`cargo sparkds bench` sums them).
//!
//! Driver: [`OpenSource::create`], then [`Reader`], [`StreamReader`] or [`Writer`] from it. A
//! source stays open until its readers and writers are dropped, whatever the order of the drops,
//! since the header releases a source only after them. Executor: [`PartitionStream::open`] and
//! [`DataWriter::create`], each with a [`TaskContext`].
//!
//! ```no_run
//! # fn main() -> Result<(), sparkds::Error> {
//! use sparkds::steps::{Checks, OpenSource, PartitionStream, TaskContext, TaskIds};
//!
//! let library: &'static sparkds::Library =
//!     Box::leak(Box::new(sparkds::Library::load("libspark_datasource_c_range.so")?));
//! let source = OpenSource::create(library, "c_range", &[("end".into(), "100".into())])?;
//! let schema = source.schema()?.expect("c_range has a schema");
//! let mut reader = source.create_reader(schema.clone())?;
//! reader.push_limit(10)?;
//! let partitions = reader.partitions()?;
//! let state = reader.serialize()?;
//! let task = TaskContext::new(TaskIds::default(), None);
//! let mut stream =
//!     PartitionStream::open(library, task, schema, state.as_deref(), &partitions[0], Checks::default())?;
//! while let Some(batch) = stream.next_batch()? {
//!     println!("{} rows", batch.num_rows());
//! }
//! # Ok(()) }
//! ```

#[cfg(test)]
mod call_sites;
mod driver;
mod executor;

pub use crate::task::TaskIds;
pub(crate) use driver::{
    commit_offset, finish_write, initial_offset, latest_offset, open_reader, open_stream_reader,
    open_writer, prune_columns, push_limit, reader_partitions, serialize_reader,
    serialize_stream_reader, serialize_writer, stream_partitions,
};
pub use driver::{OpenSource, Pushdowns, Reader, StreamReader, Writer};
pub(crate) use executor::{abort_data_writer, commit_data_writer, open_data_writer, write_batch};
pub use executor::{Batch, DataWriter, PartitionStream, TaskContext};

/// The schema of `columns` of `schema`, in the order asked, and their indices in `schema`: the
/// schema to give [`Reader::prune_columns`] for a projection, and the columns to keep of each
/// batch when the library does not prune.
///
/// # Errors
///
/// A column that `schema` does not have: the message lists those it has.
pub fn project(
    schema: &arrow_schema::Schema,
    columns: &[String],
) -> crate::Result<(arrow_schema::SchemaRef, Vec<usize>)> {
    crate::calls::prune(schema, columns)
}

/// Which checks run besides the cheap ones, which always do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Checks {
    /// Validates every value of every batch read or written (`validate_full` of arrow-rs:
    /// offsets within bounds, UTF-8 strings, decimal precision, ...): a pass over the data.
    pub full: bool,
}
