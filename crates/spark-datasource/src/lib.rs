//! Build an Apache Spark native data source in Rust: a shared library that exports
//! `spark_ds_init` and the function table of `spark_datasource.h`, and exchanges data with
//! Spark only as Arrow C data interface streams.
//!
//! Implement the traits of this crate for your source, then name it and its capabilities once:
//!
//! ```ignore
//! spark_datasource::export!(connector::Source: batch_read, push_limit, prune_columns);
//! ```
//!
//! The macro builds the table at compile time and exports `spark_ds_init`; every function of
//! it runs behind a panic guard, and every batch that leaves is checked. The capabilities are:
//!
//! | name in `export!`   | header bit                  | trait to implement        |
//! |---------------------|-----------------------------|---------------------------|
//! | `batch_read`        | `SPARK_DS_BATCH_READ`       | [`BatchRead`]             |
//! | `micro_batch_read`  | `SPARK_DS_MICRO_BATCH_READ` | [`StreamRead`]            |
//! | `batch_write`       | `SPARK_DS_BATCH_WRITE`      | [`Write`]                 |
//! | `streaming_write`   | `SPARK_DS_STREAMING_WRITE`  | [`Write`]                 |
//! | `truncate`          | `SPARK_DS_TRUNCATE`         | (a writer that overwrites) |
//! | `push_limit`        | (pushdown of batch reads)   | [`BatchReader::push_limit`] |
//! | `prune_columns`     | (pushdown of batch reads)   | [`BatchReader::prune_columns`] |
//! | `push_filters`      | (extension: `spark_ds_filters_init`) | [`BatchReader::push_filters`] |
//!
//! The header that this crate implements is [`HEADER`], the file `spark_datasource.h` of this
//! crate; a library in another language compiles against the same file.
//!
//! One Cargo feature, off by default: `filter-evaluation`, the SQL evaluation of pushed filters
//! on Arrow batches (`filters::evaluate`, `filters::filter_batch`), for a reader that filters
//! its rows itself; see [`filters`].

mod bench_entry;
mod datasource;
mod ffi;
pub mod filters;
pub mod kit;
mod macros;

pub use datasource::log;
pub use datasource::{
    is_secret_key, BatchRead, BatchReader, BatchSender, Batches, DataSource, DataWriter, Error,
    OptionValue, Options, Producer, Result, Secret, StreamRead, StreamReader, TaskContext, Write,
    WriteInfo, WriteMode, Writer, DEFAULT_BATCHES_AHEAD, REDACTED, SPARK_OPTIONS,
};

pub use filters::Filter;
/// The specification's table of capabilities and the functions each requires
/// (`spark-datasource-core`'s, which the host checks libraries with).
pub use spark_datasource_core::capabilities;

/// The arrow-rs crates of this crate's API, so that a data source builds batches and schemas
/// with the same version.
pub use arrow_array;
pub use arrow_schema;

/// The text of `spark_datasource.h`, version 1, that this crate implements.
pub const HEADER: &str = include_str!("../spark_datasource.h");

/// The text of `spark_datasource_filters.h`, the filter pushdown extension (version
/// [`filters::FILTERS_VERSION`]), which a library opts into with `push_filters` in `export!`.
pub const FILTERS_HEADER: &str = include_str!("../spark_datasource_filters.h");

/// `SPARK_DS_ABI_VERSION`: the version of the interface that this crate implements.
pub const ABI_VERSION: i32 = spark_datasource_abi::v1::SPARK_DS_ABI_VERSION;

/// What `export!` expands to. Not part of the API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::bench_entry::{bench, write_task, BenchTable};
    pub use crate::ffi::entry::partition_read::{read_batch, read_stream};
    pub use crate::ffi::entry::{Export, ReadPartition};
    pub use crate::ffi::filters::{filter_table, filters_init};
    pub use crate::ffi::library::{
        base, declared, init, names, with_batch_read, with_micro_batch_read, with_prune_columns,
        with_push_limit, with_write,
    };
    pub use spark_datasource_abi::bench::SparkDsBenchCall;
    pub use spark_datasource_abi::filters::{SparkDsFilterTable, SparkDsFiltersInitFunction};
    pub use spark_datasource_abi::v1::{SparkDsHost, SparkDsInitFunction, SparkDsLibrary};
}
