//! A native data source for Apache Spark: a shared library that Spark loads by its name, and
//! that exchanges data with Spark as Arrow C data interface streams.
//!
//! - [`connector`]: the data source itself. This is the code you edit.
//! - [`api`]: the traits it implements, which mirror Data Source V2 and the Python Data
//!   Source API.
//! - `abi`: the C interface of `spark_datasource.h` on top of those traits. You never need
//!   to edit it.
//!
//! The capabilities that the library declares to Spark are the Cargo features of this crate,
//! chosen when the project was generated.

mod abi;
pub mod api;
pub mod connector;
