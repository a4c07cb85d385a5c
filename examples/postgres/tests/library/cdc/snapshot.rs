//! The initial snapshot.
