//! Tests: spark.
