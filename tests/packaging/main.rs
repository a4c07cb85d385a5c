//! Tests: packaging.
