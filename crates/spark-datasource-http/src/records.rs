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

use crate::paging::Page;

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

    /// Adds the records of `page`, decoded from their text; the batches of `batch_rows` records
    /// that are then complete.
    ///
    /// # Errors
    /// A page without its records, or a record that does not fit the schema, named by its place
    /// among all records pushed.
    pub fn push(&mut self, page: &Page) -> Result<Vec<RecordBatch>> {
        let records = page.records()?;
        let mut batches = Vec::new();
        for record in records {
            self.pushed += 1;
            if !self.schema.fields().is_empty() {
                let mut text = record.get().as_bytes();
                while !text.is_empty() {
                    let read = self.decoder.decode(text).map_err(|e| self.misfit(&e))?;
                    text = &text[read..];
                    if !text.is_empty() {
                        // The decoder holds as many records as it takes: the batch is full.
                        batches.extend(self.flush()?);
                    }
                }
            }
            if self.pushed - self.batch_first >= self.batch_rows as u64 {
                batches.extend(self.flush()?);
            }
        }
        Ok(batches)
    }

    /// Adds records given as JSON values (built or changed by the connector); the batches that
    /// are then complete.
    ///
    /// # Errors
    /// A record that does not fit the schema, named by its place among all records pushed.
    pub fn push_values(&mut self, records: &[Value]) -> Result<Vec<RecordBatch>> {
        let mut batches = Vec::new();
        for chunk in records.chunks(self.batch_rows) {
            if !self.schema.fields().is_empty() {
                self.decoder.serialize(chunk).map_err(|e| self.misfit(&e))?;
            }
            self.pushed += chunk.len() as u64;
            if self.pushed - self.batch_first >= self.batch_rows as u64 {
                batches.extend(self.flush()?);
            }
        }
        Ok(batches)
    }

    fn misfit(&self, error: &dyn std::fmt::Display) -> Error {
        Error::msg(format!(
            "a record among records {} to {} does not fit the schema: {error}",
            self.batch_first + 1,
            self.pushed
        ))
    }

    /// The records pushed since the last batch.
    pub fn pending(&self) -> u64 {
        self.pushed - self.batch_first
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
        let misfit = |e: arrow_schema::ArrowError| {
            Error::msg(format!(
                "a record among records {first} to {last} does not fit the schema: {e}"
            ))
        };
        // The same values, with the time zones asked for; a NULL in a column that is not
        // nullable (a record without the field) is refused here.
        let columns = batch
            .columns()
            .iter()
            .zip(self.schema.fields())
            .map(|(column, field)| arrow_cast::cast(column, field.data_type()))
            .collect::<std::result::Result<Vec<ArrayRef>, _>>()
            .map_err(misfit)?;
        RecordBatch::try_new(self.schema.clone(), columns)
            .map(Some)
            .map_err(misfit)
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

    fn page(body: &str) -> Page {
        Page::for_tests(body)
    }

    #[test]
    fn records_read_with_nulls_missing_fields_and_every_kind() -> Result<()> {
        let mut records = Records::new(schema(), 10)?;
        let body = r#"[
            {"id": 1, "title": "a", "open": true, "day": "2024-01-31",
             "at": "2024-01-31T12:00:00Z", "amount": "12.34", "labels": ["x", null],
             "user": {"login": "ann"}, "ignored": [1, 2]},
            {"id": 2, "title": 7, "open": null}
        ]"#;
        assert!(records.push(&page(body))?.is_empty());
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
    fn a_record_that_does_not_fit_is_named_by_its_place() -> Result<()> {
        let mut records = Records::new(schema(), 10)?;
        records.push_values(&[json!({"id": 1}), json!({"title": "no id"})])?;
        let error = records.flush().err().map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.starts_with("a record among records 1 to 2")
                    && e.contains("non-nullable")),
            "{error:?}"
        );
        records.push(&page(r#"[{"id": "x"}]"#))?;
        let error = records.flush().err().map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.starts_with("a record among records 3 to 3")),
            "{error:?}"
        );
        Ok(())
    }

    #[test]
    fn records_of_no_column_are_counted() -> Result<()> {
        let mut records = Records::new(Arc::new(Schema::empty()), 3)?;
        assert!(records.push(&page(r#"[{"id": 1}, {}]"#))?.is_empty());
        let batches = records.push(&page("[2, 3]"))?;
        assert_eq!(
            batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
            [3]
        );
        assert_eq!(records.flush()?.map(|b| b.num_rows()), Some(1));
        assert_eq!(records.flush()?, None);
        Ok(())
    }

    #[test]
    fn batches_come_once_there_are_enough_records() -> Result<()> {
        let mut records = Records::new(schema(), 2)?;
        assert!(records.push(&page(r#"[{"id": 1}]"#))?.is_empty());
        let batches = records.push(&page(r#"[{"id": 2}, {"id": 3}, {"id": 4}, {"id": 5}]"#))?;
        assert_eq!(
            batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
            [2, 2]
        );
        assert_eq!(records.flush()?.map(|b| b.num_rows()), Some(1));
        Ok(())
    }
}
