//! The exported function table, `SparkDsLibrary`, and `spark_ds_init`.
//!
//! The table declares every function of the header. The functions of the capabilities that
//! this library declares are set, for `crate::connector::Source`; the others stay NULL. The
//! capabilities are the crate's Cargo features, chosen when the project was generated.

use std::ffi::c_int;
use std::mem::size_of;

use super::entry::source;
use super::ffi::{
    SparkDsHost, SparkDsLibrary, SPARK_DS_ABI_VERSION, SPARK_DS_BATCH_READ, SPARK_DS_BATCH_WRITE,
    SPARK_DS_MICRO_BATCH_READ, SPARK_DS_STREAMING_WRITE, SPARK_DS_TRUNCATE,
};
use super::guard::{guard, last_error};
use super::host;
use crate::api::{Error, Result};
#[allow(unused_imports)]
use crate::connector::Source;

#[cfg(not(any(
    feature = "batch_read",
    feature = "micro_batch_read",
    feature = "batch_write",
    feature = "streaming_write"
)))]
compile_error!(
    "a data source declares at least one capability: enable one of the features batch_read, \
     micro_batch_read, batch_write or streaming_write"
);

#[cfg(all(
    feature = "truncate",
    not(any(feature = "batch_write", feature = "streaming_write"))
))]
compile_error!("the feature truncate needs a write capability: batch_write or streaming_write");

const fn bit(enabled: bool, capability: u64) -> u64 {
    if enabled {
        capability
    } else {
        0
    }
}

/// The capabilities that `create` returns: exactly the enabled features.
pub const CAPABILITIES: u64 = bit(cfg!(feature = "batch_read"), SPARK_DS_BATCH_READ)
    | bit(
        cfg!(feature = "micro_batch_read"),
        SPARK_DS_MICRO_BATCH_READ,
    )
    | bit(cfg!(feature = "batch_write"), SPARK_DS_BATCH_WRITE)
    | bit(cfg!(feature = "streaming_write"), SPARK_DS_STREAMING_WRITE)
    | bit(cfg!(feature = "truncate"), SPARK_DS_TRUNCATE);

/// The table that `spark_ds_init` returns.
pub static LIBRARY: SparkDsLibrary = table();

#[allow(unused_mut)]
const fn table() -> SparkDsLibrary {
    let mut table = SparkDsLibrary {
        size: size_of::<SparkDsLibrary>() as i64,
        abi_version: SPARK_DS_ABI_VERSION,
        last_error: Some(last_error),
        create: Some(source::create::<Source>),
        schema: Some(source::schema::<Source>),
        create_reader: None,
        create_stream_reader: None,
        create_writer: None,
        close: Some(source::close::<Source>),
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
    };
    #[cfg(any(feature = "batch_read", feature = "micro_batch_read"))]
    {
        table.read = Some(super::entry::read::read::<Source>);
    }
    #[cfg(feature = "batch_read")]
    {
        use super::entry::batch_read::*;
        table.create_reader = Some(create_reader::<Source>);
        table.partitions = Some(partitions::<Source>);
        table.serialize_reader = Some(serialize_reader::<Source>);
        table.close_reader = Some(close_reader::<Source>);
    }
    #[cfg(feature = "push_limit")]
    {
        table.push_limit = Some(super::entry::batch_read::push_limit::<Source>);
    }
    #[cfg(feature = "prune_columns")]
    {
        table.prune_columns = Some(super::entry::batch_read::prune_columns::<Source>);
    }
    #[cfg(feature = "micro_batch_read")]
    {
        use super::entry::stream_read::*;
        table.create_stream_reader = Some(create_stream_reader::<Source>);
        table.initial_offset = Some(initial_offset::<Source>);
        table.latest_offset = Some(latest_offset::<Source>);
        table.stream_partitions = Some(stream_partitions::<Source>);
        table.serialize_stream_reader = Some(serialize_stream_reader::<Source>);
        table.commit_offset = Some(commit_offset::<Source>);
        table.close_stream_reader = Some(close_stream_reader::<Source>);
    }
    #[cfg(any(feature = "batch_write", feature = "streaming_write"))]
    {
        use super::entry::write::*;
        table.create_writer = Some(create_writer::<Source>);
        table.serialize_writer = Some(serialize_writer::<Source>);
        table.commit = Some(commit::<Source>);
        table.abort = Some(abort::<Source>);
        table.close_writer = Some(close_writer::<Source>);
        table.create_data_writer = Some(create_data_writer::<Source>);
        table.write = Some(write::<Source>);
        table.commit_data_writer = Some(commit_data_writer::<Source>);
        table.abort_data_writer = Some(abort_data_writer::<Source>);
        table.close_data_writer = Some(close_data_writer::<Source>);
    }
    table
}

/// The one exported function: keeps the host, and returns the table.
///
/// # Safety
/// As `spark_ds_init` of `spark_datasource.h`: `host` valid until the library is unloaded,
/// `library` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn spark_ds_init(
    host: *const SparkDsHost,
    library: *mut *const SparkDsLibrary,
) -> c_int {
    // SAFETY: forwarded contract.
    guard("spark_ds_init", || unsafe { init(host, library) })
}

unsafe fn init(host: *const SparkDsHost, library: *mut *const SparkDsLibrary) -> Result<()> {
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
    // SAFETY: forwarded contract: the host outlives every use.
    unsafe { host::install(host) };
    // SAFETY: non-null and valid for writes (the caller's contract).
    unsafe { library.write(&LIBRARY) };
    Ok(())
}
