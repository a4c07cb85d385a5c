//! sparkds: drives a native data source library the way Spark does, and checks every rule of
//! the interface on the way (`conformance.md`).
//!
//! A library is loaded with the platform's dynamic loader, exactly as Spark loads it, so any
//! library built against `spark_datasource.h` can be tested, whatever its language. The drivers
//! run each protocol of the interface, with the driver side and the executor side apart (the
//! executors only get byte arrays, and each task runs on its own thread):
//!
//! - [`Library::batch_read`]: options, a user schema, pruned columns and a limit;
//! - [`Library::stream_read`]: micro-batches, and a restart from the last committed offset;
//! - [`Library::batch_write`] and [`Library::streaming_write`]: tasks, a failing task, modes;
//! - [`check`]: every protocol of every declared capability, optionally each in a child
//!   process, so that a library that aborts the process is reported rather than fatal.
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
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
pub mod check;
pub mod cli;
pub mod ddl;
mod error;
mod import;
pub mod isolate;
mod library;
mod locate;
pub mod package;
mod read;
pub mod render;
pub mod sample;
mod sink;
mod stream;
mod task;
pub mod verify;
mod write;

/// The arrow-rs crates of sparkds's API, so that tests build batches with the same version.
pub use arrow_array;
pub use arrow_schema;
pub use error::{Error, Result, Violation};
pub use library::{Capabilities, Library, LogLevel, LogMessage, SPARK_VERSION};
pub use locate::{build_current_cdylib, cdylib, library_file_name, profile_dir, sparkds_binary};
pub use read::{BatchRead, BatchReadOutcome, PartitionRead};
pub use stream::{MicroBatch, StreamRead, StreamReadOutcome};
pub use write::{BatchWrite, StreamingWrite, WriteMode, WriteOutcome};
