//! sparkds: drives a native data source library the way Spark does, and checks every rule of
//! the interface on the way (the book's rules chapter, [`rules`]).
//!
//! A library is loaded with the platform's dynamic loader, exactly as Spark loads it, so any
//! library built against `spark_datasource.h` can be tested, whatever its language. The drivers
//! run each protocol of the interface, with the driver side and the executor side apart (the
//! executors only get byte arrays, and each task runs on its own thread):
//!
//! - [`Library::batch_read`]: options, a user schema, filters, pruned columns and a limit;
//! - [`Library::stream_read`]: micro-batches, and a restart from the last committed offset;
//! - [`Library::batch_write`] and [`Library::streaming_write`]: tasks, a failing task, modes;
//! - [`check`]: every protocol of every declared capability, optionally each in a child
//!   process, so that a library that aborts the process is reported rather than fatal;
//! - [`steps`]: the same protocols one call at a time, with handles that live across calls
//!   and batches read in place, for a host driven from outside, such as the JNI library of the
//!   JVM plugin.
//!
//! # What is checked
//!
//! Each violation names the function, the place and the rule, by number and title, with where
//! the book explains it ([`rules`]), such as "`read` (partition 1): batch 0, column `id`: array
//! offset is 3; exported arrays must have offset 0 (rule 13: offset 0 at every level; see
//! `<BOOK_URL>reference/rules.html#rule-13`)", with the book's address ([`rules::BOOK_URL`]).
//! The host checks:
//!
//! - loading (rules 1-4): `spark_ds_init` exported, returning 0 and the same table twice; the
//!   table's `size` (at least up to `read`, pointer-aligned; functions beyond it are NULL); its
//!   `abi_version`; `create` and `close` set; no capability declared whose required functions
//!   are NULL, no unknown capability bit, no `SPARK_DS_TRUNCATE` without a write capability;
//! - errors (rules 7, 8): a failing function has a UTF-8 `last_error`, and so does a failing
//!   `get_schema` or `get_next` with `get_last_error`; a failing create function leaves its
//!   handle out-parameter untouched;
//! - crashes (rule 9), in a child process: which function aborted the process;
//! - sinks (rule 10): called during the call, on the calling thread, with a valid length; the
//!   functions that return one byte array call it exactly once;
//! - Arrow structs (rules 11-20), read raw before arrow-rs sees them: not released when
//!   returned; `release` sets itself to NULL; moved batches released exactly once by `write`;
//!   offset 0 at every level; string, binary and list offsets from 0 and non-decreasing;
//!   `null_count` exact (counted from the validity bitmap); no null rows and no validity buffer
//!   in the batch's struct; every column of the batch's length, children long enough for their
//!   parents; no null in a non-nullable column; only the types of version 1 (no dictionary,
//!   large or view types, microsecond timestamps, map children named `entries`/`key`/`value`);
//!   buffers aligned to their element width; `validate_full` of arrow-rs; the stream's schema
//!   equal to the schema asked for (after pruning); the end of the stream repeated;
//! - handles and protocol (rules 21-23, 25): no NULL handle with success, no handle returned
//!   while another of its kind with the same address is open (data writers of an epoch are all
//!   open at once); the host closes each handle exactly once, in order, and never unloads a
//!   library; an accepted limit never exceeded per partition; a killed task stops within one
//!   batch; a micro-batch replayed by a new query gives the same rows;
//! - filter pushdown, the extension of `spark_datasource_filters.h` (rules 29-31,
//!   numbered after the 28 rules of version 1), for a library that
//!   exports `spark_ds_filters_init` (one that does not is driven exactly as before):
//!   - rule 29, the filter table: `spark_ds_filters_init`, called once after `spark_ds_init`
//!     with the same host, returns 0 and a non-NULL table whose `size` is a multiple of the
//!     pointer size and at least `sizeof(SparkDsFilterTable)` of version 1, and whose `version`
//!     is at least `SPARK_DS_FILTERS_VERSION` (1); the host reads only the fields that fit in
//!     `size`, and a NULL `push_filters` pushes nothing;
//!   - rule 30, the answer of `push_filters`: a call that returns 0 has called its sink exactly
//!     once, with one byte per filter of the message, each 0 (not accepted) or 1 (accepted);
//!   - rule 31, the rows: every row that `read` returns makes every accepted filter TRUE (SQL
//!     semantics, [`filters::evaluate`]); a filter on a column pruned after it was accepted is
//!     not checked, since the batches no longer hold it.
//!
//!   The host pushes a limit only when every filter was accepted ([`BatchRead::filters`]).
//!
//! No message of the host repeats the value of a secret option (a key with `password`, `token`,
//! `url`, ...): see [`redact`].
//!
//! Not checked, because a host cannot see it: whether buffers are as long as the arrays say
//! (rule 20's other half; the C data interface carries no buffer sizes), reads of `SparkDsHost`
//! beyond its size (5), function signatures (6: compile against the header with
//! `-Werror=incompatible-pointer-types`), Arrow out-parameters left untouched on failure (8), and
//! whether written data stays invisible before `commit` (24: that needs the source's storage).
//!
//! ```no_run
//! # fn main() -> Result<(), sparkds::Error> {
//! use sparkds::{cdylib, render, Library};
//!
//! let library = Library::load(cdylib("spark_datasource_my_source")?)?;
//! let read = library.batch_read().option("end", "10").run()?;
//! println!("{}", render::schema(&read.schema));
//! println!("{}", render::batches(&read.batches()));
//! # Ok(()) }
//! ```

mod artifacts;
mod batch_read;
mod builders;
mod calls;
pub mod check;
pub mod ddl;
mod error;
pub mod filters;
mod import;
pub mod isolate;
mod library;
pub mod redact;
pub mod render;
pub mod rules;
pub mod sample;
mod sink;
pub mod steps;
mod stream_read;
mod task;
pub mod testing;
pub mod version;
mod write;

/// The arrow-rs crates of sparkds's API, so that tests build batches with the same version.
pub use arrow_array;
pub use arrow_schema;
pub use artifacts::{
    build_current_cdylib, cdylib, given_cdylib, library_file_name, profile_dir, sparkds_binary,
    BINARY,
};
pub use batch_read::{BatchRead, BatchReadOutcome, PartitionRead};
pub use error::{Error, Result, Violation};
pub use library::{
    CallObserver, Capabilities, HostOptions, Library, LogFunction, LogLevel, LogMessage,
    SPARK_VERSION,
};
/// How the host opens a library, and the package crate and the JNI library a package
/// (`spark-datasource-core`'s).
pub use spark_datasource_core::file::open_regular;
pub use stream_read::{MicroBatch, StreamRead, StreamReadOutcome};
pub use write::{BatchWrite, StreamingWrite, WriteMode, WriteOutcome};
