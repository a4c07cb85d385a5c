//! JSON records as Arrow batches of a schema, with arrow-json's decoder: a field that a record
//! lacks or holds `null` is NULL (an error in a column that is not nullable), a field the
//! schema lacks is left out, and numbers and booleans read into a `string` column as their
//! text.
//!
//! | Spark type | JSON |
//! |------------|------|
//! | `boolean` | `true`, `false` |
//! | `int`, `bigint`, `float`, `double` | numbers |
//! | `decimal(p,s)` | numbers or strings of digits |
//! | `string` | strings; numbers and booleans as their text |
//! | `binary` | strings of hexadecimal digits (decode base64 into a hex or a `string` column yourself) |
//! | `date` | `"2024-01-31"` |
//! | `timestamp` | RFC 3339 strings, `"2024-01-31T12:00:00Z"` (a string without an offset is UTC) |
//! | `array<T>` | arrays |
//! | `struct<...>` | objects |
//! | `map<string,T>` | objects |

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_json::reader::{Decoder, ReaderBuilder};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use serde_json::Value;
use spark_datasource::{Error, Result};

/// The builder of batches of a schema from JSON records.
pub struct Records {
    decoder: Decoder,
    /// The schema asked for; the decoder's has its timestamps at `+00:00` (see `decodable`).
    schema: SchemaRef,
    batch_rows: usize,
    /// Records pushed in all, and before the batch being built, for messages.
    pushed: u64,
    batch_first: u64,
}

impl Records {
    /// Batches of `schema` of about `batch_rows` records each.
    ///
    /// # Errors
    /// A type of `schema` that the decoder cannot read from JSON.
    pub fn new(schema: SchemaRef, batch_rows: usize) -> Result<Records> {
        let decoder = ReaderBuilder::new(Arc::new(Schema::new(decodable(schema.fields()))))
            .with_batch_size(batch_rows.max(1))
            .with_coerce_primitive(true)
            .build_decoder()
            .map_err(|e| Error::msg(format!("cannot read JSON records into the schema: {e}")))?;
        Ok(Records {
            decoder,
            schema,
            batch_rows: batch_rows.max(1),
            pushed: 0,
            batch_first: 0,
        })
    }

    /// Adds `records`; a batch once there are `batch_rows` or more.
    ///
    /// # Errors
    /// A record that does not fit the schema, named by its place among all records pushed.
    pub fn push(&mut self, records: &[Value]) -> Result<Option<RecordBatch>> {
        let first = self.pushed;
        // arrow-json leaves a NULL in a column that is not nullable to the batch's check, which
        // cannot say which record: look first.
        for (i, record) in records.iter().enumerate() {
            let missing = self.schema.fields().iter().find(|field| {
                !field.is_nullable() && record.get(field.name()).is_none_or(Value::is_null)
            });
            if let Some(field) = missing {
                return Err(Error::msg(format!(
                    "record {} has no `{}`, which the schema says is not nullable: make the \
                     column nullable, or read the records that have it",
                    first + i as u64 + 1,
                    field.name()
                )));
            }
        }
        if self.schema.fields().is_empty() {
            // `count(*)`: batches of no column, only a row count, which arrow-json does not make.
            self.pushed += records.len() as u64;
            if self.pushed - self.batch_first >= self.batch_rows as u64 {
                return self.flush();
            }
            return Ok(None);
        }
        self.decoder.serialize(records).map_err(|e| {
            Error::msg(format!(
                "a record among records {} to {} does not fit the schema: {e}",
                first + 1,
                first + records.len() as u64
            ))
        })?;
        self.pushed += records.len() as u64;
        if self.decoder.len() >= self.batch_rows {
            return self.flush();
        }
        Ok(None)
    }

    /// The batch of the records pushed since the last one, if any.
    ///
    /// # Errors
    /// A record that does not fit the schema.
    pub fn flush(&mut self) -> Result<Option<RecordBatch>> {
        let (first, last) = (self.batch_first + 1, self.pushed);
        self.batch_first = self.pushed;
        if self.schema.fields().is_empty() {
            let rows = (last + 1 - first) as usize;
            let options = RecordBatchOptions::new().with_row_count(Some(rows));
            let batch = RecordBatch::try_new_with_options(self.schema.clone(), vec![], &options)?;
            return Ok((rows > 0).then_some(batch));
        }
        let Some(batch) = self.decoder.flush().map_err(|e| {
            Error::msg(format!(
                "a record among records {first} to {last} does not fit the schema: {e}"
            ))
        })?
        else {
            return Ok(None);
        };
        // The same values, with the time zones asked for.
        let columns = batch
            .columns()
            .iter()
            .zip(self.schema.fields())
            .map(|(column, field)| arrow_cast::cast(column, field.data_type()))
            .collect::<std::result::Result<Vec<ArrayRef>, _>>()?;
        Ok(Some(RecordBatch::try_new(self.schema.clone(), columns)?))
    }
}

/// `fields` with every timestamp's zone `+00:00`: arrow-json names a zone such as `UTC` only
/// with the `chrono-tz` feature of arrow (its own database of zones, a megabyte more in every
/// library), and Spark's timestamps are UTC instants whatever their zone's name.
fn decodable(fields: &Fields) -> Vec<Field> {
    fields
        .iter()
        .map(|field| {
            field
                .as_ref()
                .clone()
                .with_data_type(decodable_type(field.data_type()))
        })
        .collect()
}

fn decodable_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Timestamp(unit, Some(_)) => DataType::Timestamp(*unit, Some("+00:00".into())),
        DataType::List(element) => DataType::List(Arc::new(
            element
                .as_ref()
                .clone()
                .with_data_type(decodable_type(element.data_type())),
        )),
        DataType::Struct(fields) => DataType::Struct(decodable(fields).into()),
        DataType::Map(entries, sorted) => DataType::Map(
            Arc::new(
                entries
                    .as_ref()
                    .clone()
                    .with_data_type(decodable_type(entries.data_type())),
            ),
            *sorted,
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Int64Type, TimestampMicrosecondType};
    use arrow_array::Array;
    use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
    use serde_json::json;

    use super::*;

    fn schema() -> SchemaRef {
        let label = Field::new("element", DataType::Utf8, true);
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("title", DataType::Utf8, true),
            Field::new("open", DataType::Boolean, true),
            Field::new("day", DataType::Date32, true),
            Field::new(
                "at",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new("amount", DataType::Decimal128(10, 2), true),
            Field::new("labels", DataType::List(Arc::new(label)), true),
            Field::new(
                "user",
                DataType::Struct(Fields::from(vec![Field::new(
                    "login",
                    DataType::Utf8,
                    true,
                )])),
                true,
            ),
        ]))
    }

    #[test]
    fn records_read_with_nulls_missing_fields_and_every_kind() -> Result<()> {
        let mut records = Records::new(schema(), 10)?;
        let rows = [
            json!({"id": 1, "title": "a", "open": true, "day": "2024-01-31",
                   "at": "2024-01-31T12:00:00Z", "amount": "12.34", "labels": ["x", null],
                   "user": {"login": "ann"}, "ignored": [1, 2]}),
            json!({"id": 2, "title": 7, "open": null}),
        ];
        assert!(records.push(&rows)?.is_none());
        let batch = records.flush()?.ok_or_else(|| Error::msg("a batch"))?;
        assert_eq!(batch.num_rows(), 2);
        let ids = batch.column(0).as_primitive::<Int64Type>();
        assert_eq!(ids.values(), &[1, 2]);
        let titles = batch.column(1).as_string::<i32>();
        assert_eq!((titles.value(0), titles.value(1)), ("a", "7"));
        assert!(batch.column(2).is_null(1));
        assert_eq!(batch.column(3).as_primitive::<Date32Type>().value(0), 19753);
        let at = batch.column(4).as_primitive::<TimestampMicrosecondType>();
        assert_eq!(at.value(0), 1_706_702_400_000_000);
        assert!(batch.column(6).is_null(1) && batch.column(7).is_null(1));
        Ok(())
    }

    #[test]
    fn a_record_without_a_field_that_is_not_nullable_is_named() -> Result<()> {
        let mut records = Records::new(schema(), 10)?;
        records.push(&[json!({"id": 1})])?;
        let error = records
            .push(&[json!({"title": "no id"})])
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "record 2 has no `id`, which the schema says is not nullable: make the column \
                 nullable, or read the records that have it"
            )
        );
        records.push(&[json!({"id": "x"})])?;
        let error = records.flush().err().map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.starts_with("a record among records 1 to 2")),
            "{error:?}"
        );
        Ok(())
    }

    #[test]
    fn records_of_no_column_are_counted() -> Result<()> {
        let mut records = Records::new(Arc::new(Schema::empty()), 3)?;
        assert!(records.push(&[json!({"id": 1}), json!({})])?.is_none());
        assert_eq!(records.push(&[json!(2)])?.map(|b| b.num_rows()), Some(3));
        assert_eq!(records.push(&[json!(3)])?, None);
        assert_eq!(records.flush()?.map(|b| b.num_rows()), Some(1));
        assert_eq!(records.flush()?, None);
        Ok(())
    }

    #[test]
    fn a_batch_comes_once_there_are_enough_records() -> Result<()> {
        let mut records = Records::new(schema(), 2)?;
        assert!(records.push(&[json!({"id": 1})])?.is_none());
        let batch = records.push(&[json!({"id": 2}), json!({"id": 3})])?;
        assert_eq!(batch.map(|b| b.num_rows()), Some(3));
        Ok(())
    }
}
