//! Tests of the ABI layer against the header itself.

mod capabilities;
mod layout;
mod panics;
