//! The exported function table, `SparkDsLibrary`, and the body of `spark_ds_init`.
//!
//! `export!` (in the user's crate) builds the table at compile time from the `const fn`s here:
//! [`base`] for the functions every source has, then one step per capability it names. Each
//! step's trait bound is what makes a missing implementation a compile error at the user's
//! `export!` line, and [`declared`] turns the names into the capability bits, refusing the
//! combinations that the header forbids.

use std::ffi::c_int;
use std::mem::size_of;

use super::entry::{batch_read, partition_read, source, stream_read, write, Export};
use super::guard::{guard, last_error};
use super::host;
use crate::datasource::{BatchRead, DataSource, Error, StreamRead, Write};
use spark_datasource_abi::v1::{
    SparkDsHost, SparkDsLibrary, SPARK_DS_ABI_VERSION, SPARK_DS_BATCH_READ, SPARK_DS_BATCH_WRITE,
    SPARK_DS_MICRO_BATCH_READ, SPARK_DS_STREAMING_WRITE, SPARK_DS_TRUNCATE,
};

/// The names that an `export!` line may use, each as a bit: the capabilities of the header,
/// then the pushdowns, which are functions of the table rather than capabilities.
pub mod names {
    use super::*;

    pub const BATCH_READ: u64 = SPARK_DS_BATCH_READ;
    pub const MICRO_BATCH_READ: u64 = SPARK_DS_MICRO_BATCH_READ;
    pub const BATCH_WRITE: u64 = SPARK_DS_BATCH_WRITE;
    pub const STREAMING_WRITE: u64 = SPARK_DS_STREAMING_WRITE;
    pub const TRUNCATE: u64 = SPARK_DS_TRUNCATE;
    pub const PUSH_LIMIT: u64 = 1 << 32;
    pub const PRUNE_COLUMNS: u64 = 1 << 33;
    /// The extension of `spark_datasource_filters.h`: its own symbol and table.
    pub const PUSH_FILTERS: u64 = 1 << 34;
    /// The bits that are capabilities of the header.
    pub const CAPABILITIES: u64 =
        BATCH_READ | MICRO_BATCH_READ | BATCH_WRITE | STREAMING_WRITE | TRUNCATE;
}

/// The capabilities of an `export!` line that named `union` (the bits of its names, OR-ed) and
/// `sum` (the same bits added, which differs when a name is repeated).
///
/// # Panics
/// At compile time, with the fix in the message, on a combination the header forbids.
pub const fn declared(union: u64, sum: u64) -> u64 {
    use names::*;
    assert!(
        union == sum,
        "export!: a capability is named twice: name each one once"
    );
    assert!(
        union & (BATCH_READ | MICRO_BATCH_READ | BATCH_WRITE | STREAMING_WRITE) != 0,
        "export!: name at least one capability that reads or writes: batch_read, \
         micro_batch_read, batch_write or streaming_write"
    );
    assert!(
        union & TRUNCATE == 0 || union & (BATCH_WRITE | STREAMING_WRITE) != 0,
        "export!: `truncate` lets a writer overwrite: add batch_write or streaming_write, or \
         remove truncate"
    );
    assert!(
        union & (PUSH_LIMIT | PRUNE_COLUMNS | PUSH_FILTERS) == 0 || union & BATCH_READ != 0,
        "export!: push_limit, prune_columns and push_filters are pushdowns of batch reads: add \
         batch_read, or remove them"
    );
    union & CAPABILITIES
}

/// The table of a source that declares no capability yet: `create`, `schema`, `close` and
/// `last_error`; every other function NULL.
pub const fn base<S: DataSource, E: Export>() -> SparkDsLibrary {
    SparkDsLibrary {
        size: size_of::<SparkDsLibrary>() as i64,
        abi_version: SPARK_DS_ABI_VERSION,
        last_error: Some(last_error),
        create: Some(source::create::<S, E>),
        schema: Some(source::schema::<S>),
        create_reader: None,
        create_stream_reader: None,
        create_writer: None,
        close: Some(source::close::<S>),
        push_limit: None,
        prune_columns: None,
        partitions: None,
        serialize_reader: None,
        close_reader: None,
        initial_offset: None,
        latest_offset: None,
        stream_partitions: None,
        serialize_stream_reader: None,
        commit_offset: None,
        close_stream_reader: None,
        read: None,
        serialize_writer: None,
        commit: None,
        abort: None,
        close_writer: None,
        create_data_writer: None,
        write: None,
        commit_data_writer: None,
        abort_data_writer: None,
        close_data_writer: None,
    }
}

/// Adds the functions of `SPARK_DS_BATCH_READ`.
pub const fn with_batch_read<S: BatchRead, E: Export>(table: SparkDsLibrary) -> SparkDsLibrary {
    SparkDsLibrary {
        create_reader: Some(batch_read::create_reader::<S>),
        partitions: Some(batch_read::partitions::<S>),
        serialize_reader: Some(batch_read::serialize_reader::<S>),
        close_reader: Some(batch_read::close_reader::<S>),
        read: Some(partition_read::read::<E>),
        ..table
    }
}

/// Adds `push_limit`.
pub const fn with_push_limit<S: BatchRead>(table: SparkDsLibrary) -> SparkDsLibrary {
    SparkDsLibrary {
        push_limit: Some(batch_read::push_limit::<S>),
        ..table
    }
}

/// Adds `prune_columns`.
pub const fn with_prune_columns<S: BatchRead>(table: SparkDsLibrary) -> SparkDsLibrary {
    SparkDsLibrary {
        prune_columns: Some(batch_read::prune_columns::<S>),
        ..table
    }
}

/// Adds the functions of `SPARK_DS_MICRO_BATCH_READ`.
pub const fn with_micro_batch_read<S: StreamRead, E: Export>(
    table: SparkDsLibrary,
) -> SparkDsLibrary {
    SparkDsLibrary {
        create_stream_reader: Some(stream_read::create_stream_reader::<S>),
        initial_offset: Some(stream_read::initial_offset::<S>),
        latest_offset: Some(stream_read::latest_offset::<S>),
        stream_partitions: Some(stream_read::stream_partitions::<S>),
        serialize_stream_reader: Some(stream_read::serialize_stream_reader::<S>),
        commit_offset: Some(stream_read::commit_offset::<S>),
        close_stream_reader: Some(stream_read::close_stream_reader::<S>),
        read: Some(partition_read::read::<E>),
        ..table
    }
}

/// Adds the functions of `SPARK_DS_BATCH_WRITE` and `SPARK_DS_STREAMING_WRITE`, which are
/// the same: the epoch tells them apart.
pub const fn with_write<S: Write, E: Export>(table: SparkDsLibrary) -> SparkDsLibrary {
    SparkDsLibrary {
        create_writer: Some(write::create_writer::<S, E>),
        serialize_writer: Some(write::serialize_writer::<S>),
        commit: Some(write::commit::<S>),
        abort: Some(write::abort::<S>),
        close_writer: Some(write::close_writer::<S>),
        create_data_writer: Some(write::create_data_writer::<S>),
        write: Some(write::write::<S>),
        commit_data_writer: Some(write::commit_data_writer::<S>),
        abort_data_writer: Some(write::abort_data_writer::<S>),
        close_data_writer: Some(write::close_data_writer::<S>),
        ..table
    }
}

/// The body of `spark_ds_init`: keeps the host, and returns `table`.
///
/// # Safety
/// As `spark_ds_init` of `spark_datasource.h`: `host` is null or valid until the library is
/// unloaded, `library` is null or valid for writes.
pub unsafe fn init(
    table: &'static SparkDsLibrary,
    host: *const SparkDsHost,
    library: *mut *const SparkDsLibrary,
) -> c_int {
    guard(|| {
        // SAFETY: `host` is valid until the library is unloaded (the caller's contract).
        let host_ref = unsafe { host.as_ref() }.ok_or_else(|| Error::msg("the host is NULL"))?;
        if host_ref.size < 12 || host_ref.abi_version < SPARK_DS_ABI_VERSION {
            return Err(Error::msg(format!(
                "the host supports version {} of the interface; this library implements version \
                 {SPARK_DS_ABI_VERSION}: use a newer Spark",
                host_ref.abi_version
            )));
        }
        if library.is_null() {
            return Err(Error::msg("the library out-parameter is NULL"));
        }
        // SAFETY: the host outlives every use (the caller's contract).
        unsafe { host::install(host) };
        // SAFETY: non-null and valid for writes (the caller's contract).
        unsafe { library.write(table) };
        Ok(())
    })
}
