//! The connector kit: the parts that every database or file connector writes again, so that a
//! connector keeps to its own logic.
//!
//! - [`schema`]: a schema that comes from the options, held by the reader ([`schema::Scan`]),
//!   a requested schema checked against it with the message Spark users expect, projection and
//!   limit on batches of any schema, and the check of a schema to write.
//! - [`sql`]: pushed filters as a parameterized `WHERE` for PostgreSQL and SQLite, accepted only
//!   where a callback of the connector says the backend evaluates them exactly as Spark.
//! - [`partitions`]: range partitions over an integer, date or timestamp column, with the
//!   strides of Spark's JDBC source, NULLs in the first.
//! - [`rows`]: batches built row by row from a client's values, and values of batches to bind.
//! - [`write`](mod@write): the two-phase skeleton of an atomic write around the connector's stage,
//!   publish and discard steps.
//! - [`files`]: that skeleton for tables of files: a part file per task attempt, staged where
//!   no reader looks, published by the connector's rename of a manifest ([`files::Manifest`]).
//!
//! The book's chapter "The connector kit" walks through a SQLite connector written on it
//! (`examples/sqlite`).

pub mod files;
pub mod partitions;
pub mod rows;
pub mod schema;
pub mod sql;
pub mod write;
