//! Rendering and parsing of workflows.
