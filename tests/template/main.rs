//! Tests: template.
