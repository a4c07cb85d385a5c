//! Tests: hardening. What a native data source must survive inside every executor of a cluster,
//! checked on the libraries of this repository and on generated projects:
//!
//! - `memcheck`: valgrind on `cargo sparkds check --in-process` (every protocol of every
//!   declared capability) for the C and Rust examples, the C fixture and a generated project with
//!   every capability; the C libraries also built with `-fsanitize=address,undefined`.
//! - `generated_input`: property-based inputs through the C interface of a built library:
//!   options, opaque bytes (partitions, reader and writer state, offsets, commit messages),
//!   schemas and batches. Every case works or fails with a message.
//! - `concurrency`: many threads at once on one loaded library, compared with a sequential run.
//!
//! Long runs are behind environment variables, described in `book/src/security/hardening.md`:
//! `SPARKDS_HARDENING_FULL=1` (every generated variant under valgrind) and
//! `SPARKDS_PROPTEST_CASES=<n>` (cases per generated-input property).

mod concurrency;
mod generated_input;
mod helpers;
mod memcheck;
mod raw;
