//! Rows to batches and back, for a connector whose client gives values one by one (a database
//! cursor) or takes them so (bound parameters): [`Scalar`], a value of a client, and
//! [`RowBatcher`], which builds batches of a schema of `bigint`, `double`, `string` and
//! `binary` columns from them, in batches of a bounded size.
//!
//! ```
//! use std::sync::Arc;
//! use spark_datasource::arrow_schema::{DataType, Field, Schema};
//! use spark_datasource::kit::rows::{RowBatcher, Scalar};
//!
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("id", DataType::Int64, false),
//!     Field::new("name", DataType::Utf8, true),
//! ]));
//! let mut rows = RowBatcher::new(schema, 2)?;
//! let mut full = Vec::new();
//! for (id, name) in [(1, Some("a")), (2, None), (3, Some("c"))] {
//!     rows.push(0, Scalar::Int(id))?;
//!     rows.push(1, name.map_or(Scalar::Null, Scalar::Text))?;
//!     full.extend(rows.end_row()?);
//! }
//! full.extend(rows.finish()?);
//! assert_eq!(full.iter().map(|b| b.num_rows()).collect::<Vec<_>>(), vec![2, 1]);
//! assert_eq!(Scalar::of(full[0].column(1).as_ref(), 1)?, Scalar::Null);
//! # Ok::<(), spark_datasource::Error>(())
//! ```

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, SchemaRef};

use super::schema::type_name;
use crate::filters::Literal;
use crate::{Error, Result};

/// A value as a client gives or takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar<'a> {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Bytes(&'a [u8]),
}

impl<'a> Scalar<'a> {
    /// The value at `row` of a `bigint`, `double`, `string` or `binary` column.
    ///
    /// # Errors
    /// For a column of another type.
    pub fn of(array: &'a dyn Array, row: usize) -> Result<Scalar<'a>> {
        if array.is_null(row) {
            return Ok(Scalar::Null);
        }
        Ok(match array.data_type() {
            DataType::Int64 => Scalar::Int(array.as_primitive::<Int64Type>().value(row)),
            DataType::Float64 => Scalar::Real(array.as_primitive::<Float64Type>().value(row)),
            DataType::Utf8 => Scalar::Text(array.as_string::<i32>().value(row)),
            DataType::Binary => Scalar::Bytes(array.as_binary::<i32>().value(row)),
            other => {
                return Err(Error::msg(format!(
                    "a column of type {} cannot be written here: cast it to bigint, double, \
                     string or binary",
                    type_name(other)
                )))
            }
        })
    }

    /// A literal of a filter: integers of any width and booleans (1, 0) as `Int`, floats as
    /// `Real`; `None` for the types that have no scalar here (decimals, dates, timestamps).
    pub fn literal(literal: &'a Literal) -> Option<Scalar<'a>> {
        Some(match literal {
            l if l.is_null() => Scalar::Null,
            Literal::Boolean(Some(v)) => Scalar::Int(i64::from(*v)),
            Literal::Float32(Some(v)) => Scalar::Real(f64::from(*v)),
            Literal::Float64(Some(v)) => Scalar::Real(*v),
            Literal::Utf8(Some(v)) => Scalar::Text(v),
            Literal::Binary(Some(v)) => Scalar::Bytes(v),
            other => Scalar::Int(other.as_i64()?),
        })
    }

    /// What the value is, for a message.
    fn kind(&self) -> &'static str {
        match self {
            Scalar::Null => "NULL",
            Scalar::Int(_) => "an integer",
            Scalar::Real(_) => "a real number",
            Scalar::Text(_) => "text",
            Scalar::Bytes(_) => "bytes",
        }
    }
}

/// Builds batches of a schema row by row.
pub struct RowBatcher {
    schema: SchemaRef,
    columns: Vec<Builder>,
    rows: usize,
    batch_rows: usize,
}

enum Builder {
    Int(Int64Builder),
    Real(Float64Builder),
    Text(StringBuilder),
    Bytes(BinaryBuilder),
}

impl RowBatcher {
    /// Batches of `schema` of at most `batch_rows` rows.
    ///
    /// # Errors
    /// When a column is not `bigint`, `double`, `string` or `binary`.
    pub fn new(schema: SchemaRef, batch_rows: usize) -> Result<RowBatcher> {
        let columns = schema.fields().iter().map(|f| {
            Ok(match f.data_type() {
                DataType::Int64 => Builder::Int(Int64Builder::new()),
                DataType::Float64 => Builder::Real(Float64Builder::new()),
                DataType::Utf8 => Builder::Text(StringBuilder::new()),
                DataType::Binary => Builder::Bytes(BinaryBuilder::new()),
                other => {
                    return Err(Error::msg(format!(
                        "column `{}` is {}: rows build bigint, double, string and binary columns",
                        f.name(),
                        type_name(other)
                    )))
                }
            })
        });
        Ok(RowBatcher {
            columns: columns.collect::<Result<_>>()?,
            schema,
            rows: 0,
            batch_rows: batch_rows.max(1),
        })
    }

    /// Appends the value of `column` in the current row. An integer fits a `double` column (a
    /// number of a `NUMERIC` column); any other value of another kind than its column is an
    /// error that names the column.
    ///
    /// # Errors
    /// A value that the column's type cannot hold.
    pub fn push(&mut self, column: usize, value: Scalar<'_>) -> Result<()> {
        match (&mut self.columns[column], value) {
            (Builder::Int(b), Scalar::Null) => b.append_null(),
            (Builder::Real(b), Scalar::Null) => b.append_null(),
            (Builder::Text(b), Scalar::Null) => b.append_null(),
            (Builder::Bytes(b), Scalar::Null) => b.append_null(),
            (Builder::Int(b), Scalar::Int(v)) => b.append_value(v),
            (Builder::Real(b), Scalar::Real(v)) => b.append_value(v),
            (Builder::Real(b), Scalar::Int(v)) => b.append_value(v as f64),
            (Builder::Text(b), Scalar::Text(v)) => b.append_value(v),
            (Builder::Bytes(b), Scalar::Bytes(v)) => b.append_value(v),
            _ => {
                let field = self.schema.field(column);
                return Err(Error::msg(format!(
                    "column `{}` is {} but a row holds {}: read it cast to that type",
                    field.name(),
                    type_name(field.data_type()),
                    value.kind()
                )));
            }
        }
        Ok(())
    }

    /// Ends the current row; the batch, when it is full.
    ///
    /// # Errors
    /// As [`RowBatcher::finish`].
    pub fn end_row(&mut self) -> Result<Option<RecordBatch>> {
        self.rows += 1;
        match self.rows == self.batch_rows {
            true => self.finish(),
            false => Ok(None),
        }
    }

    /// The rows since the last batch, if any. The row count is kept also without columns
    /// (`count(*)`).
    ///
    /// # Errors
    /// When a row lacks a column's value.
    pub fn finish(&mut self) -> Result<Option<RecordBatch>> {
        if self.rows == 0 {
            return Ok(None);
        }
        let arrays: Vec<ArrayRef> = self
            .columns
            .iter_mut()
            .map(|c| -> ArrayRef {
                match c {
                    Builder::Int(b) => Arc::new(b.finish()),
                    Builder::Real(b) => Arc::new(b.finish()),
                    Builder::Text(b) => Arc::new(b.finish()),
                    Builder::Bytes(b) => Arc::new(b.finish()),
                }
            })
            .collect();
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        self.rows = 0;
        Ok(Some(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &options,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{Field, Schema};

    #[test]
    fn a_value_of_another_kind_names_its_column() -> Result<()> {
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Float64, true)]));
        let mut rows = RowBatcher::new(schema, 10)?;
        rows.push(0, Scalar::Int(3))?;
        let message = rows.push(0, Scalar::Text("x")).unwrap_err().to_string();
        assert_eq!(
            message,
            "column `n` is double but a row holds text: read it cast to that type"
        );
        Ok(())
    }

    #[test]
    fn rows_without_columns_keep_their_count() -> Result<()> {
        let mut rows = RowBatcher::new(Arc::new(Schema::empty()), 10)?;
        for _ in 0..3 {
            assert!(rows.end_row()?.is_none());
        }
        assert_eq!(rows.finish()?.map(|b| b.num_rows()), Some(3));
        assert!(rows.finish()?.is_none());
        Ok(())
    }

    #[test]
    fn literals_and_columns_of_other_types_have_no_scalar() {
        assert_eq!(Scalar::literal(&Literal::Date32(Some(1))), None);
        assert_eq!(
            Scalar::literal(&Literal::Int8(Some(-1))),
            Some(Scalar::Int(-1))
        );
        let dates = arrow_array::Date32Array::from(vec![1]);
        assert!(Scalar::of(&dates, 0).is_err());
    }
}
