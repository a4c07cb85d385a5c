//! Tests: conformance.
