//! Rows as the conformance kit compares them: each row one line of its values, sorted (the
//! partitions of a read come in any order), and the filters made of the values of a row.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;
use spark_datasource_core::filters::{col, Filter, Literal, Value};

use crate::error::{Error, Result};

/// The rows of `batches`, each its values joined by ` | ` (NULL as `NULL`), sorted.
pub(crate) fn sorted_rows(batches: &[RecordBatch]) -> Result<Vec<String>> {
    let options = FormatOptions::new().with_null("NULL");
    let mut rows = Vec::new();
    for batch in batches {
        let columns = batch
            .columns()
            .iter()
            .map(|c| as_utc_instants(c.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        let formatters = columns
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::usage(format!("cannot show the rows read: {e}")))?;
        for row in 0..batch.num_rows() {
            let values: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            rows.push(values.join(" | "));
        }
    }
    rows.sort();
    Ok(rows)
}

/// A timestamp column with a time zone as the same instants without one, shown in UTC: arrow's
/// display parses a named zone ("UTC", "Europe/Paris") only with chrono-tz, which the host does
/// not build, and the kit compares instants, which the zone does not change.
fn as_utc_instants(column: &dyn Array) -> Result<arrow_array::ArrayRef> {
    let data = column.to_data();
    let data = match column.data_type() {
        DataType::Timestamp(unit, Some(_)) => data
            .into_builder()
            .data_type(DataType::Timestamp(*unit, None))
            .build()
            .map_err(|e| Error::usage(format!("cannot show the rows read: {e}")))?,
        _ => data,
    };
    Ok(arrow_array::make_array(data))
}

/// The rows of `batches` that Spark's evaluation of `filter` keeps, as [`sorted_rows`].
pub(crate) fn filter_rows(filter: &Filter, batches: &[RecordBatch]) -> Result<Vec<String>> {
    let kept = batches
        .iter()
        .map(|b| spark_datasource_eval::filter_batch(std::slice::from_ref(filter), b))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| {
            Error::usage(format!(
                "cannot evaluate `{}`: {e}",
                crate::filters::sql(filter)
            ))
        })?;
    sorted_rows(&kept)
}

/// The value of `array` at `row` as a literal of its type: `None` when it is null or of a type
/// that the kit makes no filters of.
pub(crate) fn literal_at(array: &dyn Array, row: usize) -> Option<Literal> {
    if array.is_null(row) {
        return None;
    }
    Some(match array.data_type() {
        DataType::Boolean => Literal::Boolean(Some(array.as_boolean().value(row))),
        DataType::Int8 => Literal::Int8(Some(array.as_primitive::<Int8Type>().value(row))),
        DataType::Int16 => Literal::Int16(Some(array.as_primitive::<Int16Type>().value(row))),
        DataType::Int32 => Literal::Int32(Some(array.as_primitive::<Int32Type>().value(row))),
        DataType::Int64 => Literal::Int64(Some(array.as_primitive::<Int64Type>().value(row))),
        DataType::Float32 => Literal::Float32(Some(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => Literal::Float64(Some(array.as_primitive::<Float64Type>().value(row))),
        DataType::Date32 => Literal::Date32(Some(array.as_primitive::<Date32Type>().value(row))),
        DataType::Utf8 => Literal::Utf8(Some(array.as_string::<i32>().value(row).to_string())),
        DataType::Binary => Literal::Binary(Some(array.as_binary::<i32>().value(row).to_vec())),
        _ => return None,
    })
}

/// Comparisons of column `name` with `literal`, as Spark pushes them: `=`, `<=>`, `<`, `>=`,
/// `NOT =`, `IN` with a NULL, `IS NOT NULL`, and for a string its first character as a prefix,
/// its last as a suffix and itself as a part.
pub(crate) fn comparisons(name: &str, literal: Literal) -> Vec<Filter> {
    let value = || Value::Literal(literal.clone());
    let mut filters = vec![
        Filter::Eq(col(name), value()),
        Filter::NullSafeEq(col(name), value()),
        Filter::Lt(col(name), value()),
        Filter::Ge(col(name), value()),
        Filter::Eq(col(name), value()).negate(),
        Filter::In(col(name), vec![value(), Value::Literal(Literal::Null)]),
        Filter::IsNotNull(col(name)),
    ];
    if let Literal::Utf8(Some(text)) = &literal {
        let text_literal = |s: String| Value::Literal(Literal::Utf8(Some(s)));
        let first: String = text.chars().take(1).collect();
        let last: String = text.chars().last().map(String::from).unwrap_or_default();
        filters.push(Filter::StartsWith(col(name), text_literal(first)));
        filters.push(Filter::EndsWith(col(name), text_literal(last)));
        filters.push(Filter::Contains(col(name), text_literal(text.clone())));
    }
    filters
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    #[test]
    fn timestamps_with_a_named_zone_show_as_their_utc_instants() {
        use arrow_array::TimestampMicrosecondArray;
        let zoned = TimestampMicrosecondArray::from(vec![Some(0), None]).with_timezone("UTC");
        let schema = Schema::new(vec![Field::new("at", zoned.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(zoned)]).unwrap();
        assert_eq!(
            sorted_rows(&[batch]).unwrap(),
            ["1970-01-01T00:00:00", "NULL"]
        );
    }

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int64Array::from(vec![3, 1, 2])),
                Arc::new(StringArray::from(vec![Some("c"), None, Some("ab")])),
            ],
        )
        .expect("a batch")
    }

    #[test]
    fn rows_are_lines_of_values_sorted() -> Result<()> {
        assert_eq!(sorted_rows(&[batch()])?, ["1 | NULL", "2 | ab", "3 | c"]);
        Ok(())
    }

    #[test]
    fn spark_keeps_the_rows_where_a_filter_is_true() -> Result<()> {
        let filter = Filter::Gt(col("id"), 1_i64.into());
        assert_eq!(filter_rows(&filter, &[batch()])?, ["2 | ab", "3 | c"]);
        // NOT (name = 'c') is NULL on the NULL name: that row is not kept.
        let not = Filter::Eq(col("name"), "c".into()).negate();
        assert_eq!(filter_rows(&not, &[batch()])?, ["2 | ab"]);
        Ok(())
    }

    #[test]
    fn filters_are_made_of_a_value_of_its_type() {
        let batch = batch();
        assert_eq!(
            literal_at(batch.column(0).as_ref(), 2),
            Some(Literal::Int64(Some(2)))
        );
        assert_eq!(literal_at(batch.column(1).as_ref(), 1), None);
        let text = literal_at(batch.column(1).as_ref(), 2).expect("a value");
        let filters = comparisons("name", text);
        assert_eq!(filters.len(), 10);
        assert_eq!(
            filters[7],
            Filter::StartsWith(col("name"), Value::Literal(Literal::Utf8(Some("a".into()))))
        );
    }
}
