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
//! - `crash`: a child process killed (SIGKILL) at every step of the sample's write and commit
//!   protocol, and inside the calls after them; the table then reads as old or new contents.
//!
//! Long runs are behind environment variables, described in `book/src/security/hardening.md`:
//! `SPARKDS_HARDENING_FULL=1` (every generated variant under valgrind),
//! `SPARKDS_PROPTEST_CASES=<n>` (cases per generated-input property) and
//! `SPARKDS_CRASH_KILLS=<n>` (kills after each step of a write).

mod concurrency;
mod crash;
mod generated_input;
mod helpers;
mod memcheck;
mod raw;
