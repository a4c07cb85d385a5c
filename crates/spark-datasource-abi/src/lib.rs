//! The C interface of Apache Spark native data sources, declared once in Rust: the structs,
//! function types and constants of `spark_datasource.h`, of the filter pushdown extension
//! (`spark_datasource_filters.h`) and of the bench call, on arrow-rs's own structs of the Arrow C
//! data interface ([`FFI_ArrowSchema`](arrow_schema::ffi::FFI_ArrowSchema),
//! [`FFI_ArrowArray`](arrow_data::ffi::FFI_ArrowArray),
//! [`FFI_ArrowArrayStream`](arrow_array::ffi_stream::FFI_ArrowArrayStream)).
//!
//! - [`v1`]: version 1 of `spark_datasource.h`, whose layout is frozen: a later version of the
//!   header gets a module of its own, and this one keeps a library of version 1 loadable;
//! - [`filters`]: the table of the filter pushdown extension, version 1;
//! - [`bench`](mod@bench): the argument of `spark_ds_bench_v1`, the in-process reference of
//!   `cargo sparkds bench` (outside the header);
//! - [`arrow`]: the fields of the Arrow C structs, which arrow-rs keeps private, for a consumer
//!   that checks what a producer wrote before trusting it.
//!
//! The SDK (`spark-datasource`) builds its table and entry points with these declarations and the
//! host (`sparkds`) loads and drives libraries with them, so both sides of the boundary agree by
//! construction. The crate's test compiles `spark_datasource.h` and
//! `spark_datasource_filters.h` with the system C compiler and compares the size of every struct,
//! the offset of every field and the type of every function pointer with these.
//!
//! Why a crate of its own rather than a module of `spark-datasource-core`: the declarations need
//! arrow's C interface structs, and the core is also imported by the package format
//! (`sparkds-package`), which builds no Arrow. The arrow crates and features here are the ones
//! that the SDK turns on already, so a library built with the SDK compiles nothing more.

pub mod arrow;
pub mod bench;
pub mod filters;
pub mod v1;
