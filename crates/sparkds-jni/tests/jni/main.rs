//! The JNI library's logic on real libraries (examples/c_range, the conformance fixture,
//! examples/text_files), through the same functions that the native methods call, and once
//! through a real JVM (`java.rs`).

mod helpers;

mod bench;
mod discovery;
mod filters;
mod java;
mod load;
mod read;
mod violations;
mod write;
