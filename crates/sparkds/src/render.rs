//! Deterministic text renderings, for snapshots (insta) and for the `sparkds` command.

use arrow_array::RecordBatch;
use arrow_cast::display::FormatOptions;
use arrow_cast::pretty::pretty_format_batches_with_options;
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

/// The schema as Spark's `df.printSchema()` prints it:
///
/// ```text
/// root
///  |-- id: long (nullable = false)
///  |-- name: string (nullable = true)
/// ```
pub fn schema(schema: &Schema) -> String {
    let mut out = String::from("root\n");
    for field in schema.fields() {
        field_tree(&mut out, field, 1);
    }
    out
}

fn field_tree(out: &mut String, field: &Field, depth: usize) {
    out.push_str(&" |   ".repeat(depth - 1));
    out.push_str(&format!(
        " |-- {}: {} (nullable = {})\n",
        field.name(),
        spark_type(field.data_type()),
        field.is_nullable()
    ));
    match field.data_type() {
        DataType::Struct(fields) => {
            for f in fields {
                field_tree(out, f, depth + 1);
            }
        }
        DataType::List(f) => field_tree(out, f, depth + 1),
        DataType::Map(entries, _) => {
            if let DataType::Struct(kv) = entries.data_type() {
                for f in kv {
                    field_tree(out, f, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// The Spark SQL name of an Arrow type of version 1 (Arrow's own name for the others).
pub fn spark_type(t: &DataType) -> String {
    match t {
        DataType::Null => "void".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Int8 => "byte".into(),
        DataType::Int16 => "short".into(),
        DataType::Int32 => "integer".into(),
        DataType::Int64 => "long".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Utf8 => "string".into(),
        DataType::Binary => "binary".into(),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => "timestamp".into(),
        DataType::Timestamp(TimeUnit::Microsecond, None) => "timestamp_ntz".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})"),
        DataType::List(_) => "array".into(),
        DataType::Struct(_) => "struct".into(),
        DataType::Map(_, _) => "map".into(),
        other => format!("{other} (not a type of version 1)"),
    }
}

/// The schema on one line, `id int64 not null, name utf8`, for messages.
pub fn schema_line(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| {
            format!(
                "{} {}{}",
                f.name(),
                f.data_type(),
                if f.is_nullable() { "" } else { " not null" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The batches as a table (arrow-cast's pretty format), nulls shown as `NULL` as Spark shows
/// them. Empty input gives an empty table.
pub fn batches(batches: &[RecordBatch]) -> String {
    let options = FormatOptions::default().with_null("NULL");
    let batches: Vec<RecordBatch> = batches.iter().map(utc_as_offset).collect();
    match pretty_format_batches_with_options(&batches, &options) {
        Ok(table) => table.to_string(),
        Err(e) => format!("(cannot format the batches: {e})"),
    }
}

/// `batch` with its `timestamp[us, tz=UTC]` columns, the timestamps of version 1, labelled
/// `+00:00` instead: the same instants, in a time zone that arrow-cast formats without the
/// time zone database (which would weigh on every build of sparkds for one name).
fn utc_as_offset(batch: &RecordBatch) -> RecordBatch {
    let is_utc = |tz: &str| matches!(tz, "UTC" | "Etc/UTC" | "Z" | "GMT" | "Etc/GMT");
    let relabel = |t: &DataType| match t {
        DataType::Timestamp(unit, Some(tz)) if is_utc(tz) => {
            Some(DataType::Timestamp(*unit, Some("+00:00".into())))
        }
        _ => None,
    };
    if !batch
        .schema()
        .fields()
        .iter()
        .any(|f| relabel(f.data_type()).is_some())
    {
        return batch.clone();
    }
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        match relabel(field.data_type()) {
            Some(t) => {
                // Only the label of the time zone changes: the values are instants either way.
                let data = column.to_data().into_builder().data_type(t.clone()).build();
                match data {
                    Ok(data) => {
                        fields.push(field.as_ref().clone().with_data_type(t));
                        columns.push(arrow_array::make_array(data));
                    }
                    Err(_) => return batch.clone(),
                }
            }
            None => {
                fields.push(field.as_ref().clone());
                columns.push(column.clone());
            }
        }
    }
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(std::sync::Arc::new(Schema::new(fields)), columns, &options)
        .unwrap_or_else(|_| batch.clone())
}

/// Byte arrays (partitions, offsets, messages), one per line with its index, as UTF-8 when
/// printable, else in hexadecimal.
pub fn partitions<B: AsRef<[u8]>>(partitions: &[B]) -> String {
    partitions
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{i}: {}\n", bytes(p.as_ref())))
        .collect()
}

/// A byte array as text: UTF-8 when printable, else `0x` and hexadecimal.
pub fn bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(char::is_control) => s.to_string(),
        _ => {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            format!("0x{hex}")
        }
    }
}

/// The rows like Spark's `df.show(n)`: a table of the first `n` rows of `batches`, whose
/// schema is `schema`, then "only showing top n rows" when there are more.
pub fn show(schema: &SchemaRef, batches: &[RecordBatch], n: usize) -> String {
    let total: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let mut taken = vec![RecordBatch::new_empty(schema.clone())];
    let mut left = n;
    for b in batches {
        let k = b.num_rows().min(left);
        taken.push(b.slice(0, k));
        left -= k;
    }
    let mut out = self::batches(&taken);
    out.push('\n');
    if total > n {
        out.push_str(&format!("only showing top {n} rows\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::Int64Array;

    #[test]
    fn a_schema_prints_like_print_schema() {
        let s = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]);
        assert_eq!(
            schema(&s),
            "root\n |-- id: long (nullable = false)\n |-- name: string (nullable = true)\n"
        );
    }

    #[test]
    fn bytes_are_text_when_printable_else_hex() {
        assert_eq!(bytes(b"0..5"), "0..5");
        assert_eq!(bytes(&[0, 1, 255]), "0x0001ff");
        assert_eq!(partitions(&[b"a".to_vec(), b"b".to_vec()]), "0: a\n1: b\n");
    }

    #[test]
    fn timestamps_in_utc_print_without_the_time_zone_database() {
        use arrow_array::TimestampMicrosecondArray;
        let column = TimestampMicrosecondArray::from(vec![Some(1_700_000_000_000_000), None])
            .with_timezone("UTC");
        let batch = RecordBatch::try_from_iter([("at", Arc::new(column) as _)]).unwrap();
        let table = batches(&[batch]);
        assert!(table.contains("2023-11-14T22:13:20Z"), "{table}");
        assert!(table.contains("NULL"), "{table}");
    }

    #[test]
    fn show_of_no_rows_prints_the_header() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        assert_eq!(show(&schema, &[], 20), "+----+\n| id |\n+----+\n+----+\n");
    }

    #[test]
    fn show_truncates_like_spark() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
        )
        .expect("a valid batch");
        assert_eq!(
            show(&schema, &[batch], 2),
            "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n+----+\nonly showing top 2 rows\n"
        );
    }
}
