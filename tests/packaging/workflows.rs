//! Workflows.
