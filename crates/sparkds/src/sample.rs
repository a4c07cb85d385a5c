//! Deterministic sample rows for a schema: what `sparkds roundtrip` and `sparkds check` write.

use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder,
    Float64Builder, Int16Builder, Int32Builder, Int64Builder, Int8Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{new_null_array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef, TimeUnit};

use crate::error::{Error, Result};

/// `rows` rows for `schema`, starting at row `first`: row `i` holds values derived from `i`,
/// and each nullable column is null in exactly one row of the batch (column `c` in row
/// `c % rows`), so that null handling is exercised.
///
/// # Errors
///
/// A usage error for a type without sample values (nested types, when not nullable).
pub fn rows(schema: &SchemaRef, first: i64, rows: usize) -> Result<RecordBatch> {
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (c, field) in schema.fields().iter().enumerate() {
        let null_row = (field.is_nullable() && rows > 0).then(|| c % rows);
        let value = |i: usize| (null_row != Some(i)).then_some(first + i as i64);
        macro_rules! column {
            ($builder:ty, $f:expr) => {{
                let mut b = <$builder>::new();
                for i in 0..rows {
                    b.append_option(value(i).map($f));
                }
                Arc::new(b.finish()) as ArrayRef
            }};
        }
        let array = match field.data_type() {
            DataType::Boolean => column!(BooleanBuilder, |v: i64| v % 2 == 0),
            DataType::Int8 => column!(Int8Builder, |v: i64| (v % 100) as i8),
            DataType::Int16 => column!(Int16Builder, |v: i64| v as i16),
            DataType::Int32 => column!(Int32Builder, |v: i64| v as i32),
            DataType::Int64 => column!(Int64Builder, |v: i64| v),
            DataType::Float32 => column!(Float32Builder, |v: i64| v as f32 + 0.5),
            DataType::Float64 => column!(Float64Builder, |v: i64| v as f64 + 0.25),
            DataType::Utf8 => column!(StringBuilder, |v: i64| format!("row {v}")),
            DataType::Binary => column!(BinaryBuilder, |v: i64| v.to_le_bytes()[..2].to_vec()),
            DataType::Date32 => column!(Date32Builder, |v: i64| 19_000 + v as i32),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                let mut b = TimestampMicrosecondBuilder::new();
                for i in 0..rows {
                    b.append_option(value(i).map(|v| 1_700_000_000_000_000 + v * 1_000_000));
                }
                Arc::new(b.finish().with_timezone_opt(tz.clone()))
            }
            DataType::Decimal128(p, s) => {
                let mut b = Decimal128Builder::new();
                for i in 0..rows {
                    b.append_option(value(i).map(|v| i128::from(v) * 125));
                }
                Arc::new(
                    b.finish()
                        .with_precision_and_scale(*p, *s)
                        .map_err(|e| Error::usage(format!("column `{}`: {e}", field.name())))?,
                )
            }
            other if field.is_nullable() => new_null_array(other, rows),
            other => {
                return Err(Error::usage(format!(
                    "column `{}` has the type {other}, for which sparkds makes no sample values; write your own batches with the Rust API",
                    field.name()
                )))
            }
        };
        columns.push(array);
    }
    RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| Error::usage(format!("cannot build sample rows: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{Field, Schema};

    #[test]
    fn sample_rows_have_one_null_per_nullable_column() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let batch = rows(&schema, 10, 3).expect("sample rows");
        assert_eq!(
            crate::render::batches(&[batch]),
            "+----+--------+\n| id | name   |\n+----+--------+\n| 10 | row 10 |\n| 11 | NULL   |\n| 12 | row 12 |\n+----+--------+"
        );
    }
}
