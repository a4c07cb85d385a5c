//! Cells of text or JSON converted to the values of a column, as Spark's CSV and JSON readers
//! convert them, and the columns of a batch built from them.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::builder::TimestampMicrosecondBuilder;
use arrow_array::builder::{BooleanBuilder, Date32Builder, Decimal128Builder, Float64Builder};
use arrow_array::builder::{Int32Builder, Int64Builder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, TimeUnit};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::Value as Json;

use super::datetime::{self, Offset, Pattern};

/// The options that say how text becomes values, under Spark's names.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ValueOptions {
    /// `nullValue`: the text of a null (default: empty).
    pub null_value: String,
    /// `emptyValue`: what a quoted empty CSV value (`""`) reads as (default: empty, which is
    /// then the `nullValue` too).
    pub empty_value: String,
    /// `nanValue`, `positiveInf`, `negativeInf`: the text of the special doubles.
    pub nan_value: String,
    pub positive_inf: String,
    pub negative_inf: String,
    /// `dateFormat`: without it, `yyyy-MM-dd`, and Spark's lenient dates when reading.
    pub date_format: Option<Pattern>,
    /// `timestampFormat`: without it, Spark's lenient ISO 8601 timestamps.
    pub timestamp_format: Option<Pattern>,
    /// `timeZone`: the offset of a timestamp without one.
    pub zone: Offset,
}

impl Default for ValueOptions {
    fn default() -> Self {
        ValueOptions {
            null_value: String::new(),
            empty_value: String::new(),
            nan_value: "NaN".to_string(),
            positive_inf: "Inf".to_string(),
            negative_inf: "-Inf".to_string(),
            date_format: None,
            timestamp_format: None,
            zone: 0,
        }
    }
}

/// One value of a parsed line, before it is converted to the type of its column: it borrows
/// the line's text where it can, so that a read allocates nothing for most values.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    /// A null: the `nullValue`, an empty CSV value, a JSON null or a missing key.
    Null,
    /// The text of a CSV value, or a JSON string.
    Text(Cow<'a, str>),
    /// Any other JSON value, as the line wrote it.
    Json(Cow<'a, str>),
}

/// Whether two short texts are equal: compared inline, as a call to `memcmp` for every cell
/// of a file costs more than the comparison (a quarter of a read of flights.csv).
#[inline]
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

/// The types that a read converts text to, with their Spark names, for error messages.
pub const READABLE_TYPES: &str = "int, bigint, decimal, double, boolean, string, date, timestamp";

/// A double as Java's `Double.parseDouble` reads it, which is what Spark uses: surrounding
/// whitespace, a `d` or `f` suffix, `NaN` and `Infinity` are accepted; Rust's `inf` and `nan`
/// are not.
pub fn java_double(text: &str) -> Option<f64> {
    let text = text.trim_matches(|c: char| c <= ' ');
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned == "NaN" {
        return Some(f64::NAN);
    }
    if unsigned == "Infinity" {
        return Some(if text.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    let number = text.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(text);
    if number.is_empty()
        || !number
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    number.parse().ok()
}

/// A double of CSV text: the `nanValue`, `positiveInf` or `negativeInf`, or as Java reads it.
#[inline]
fn text_double(t: &str, options: &ValueOptions) -> Option<f64> {
    if same(t, &options.nan_value) {
        Some(f64::NAN)
    } else if same(t, &options.positive_inf) {
        Some(f64::INFINITY)
    } else if same(t, &options.negative_inf) {
        Some(f64::NEG_INFINITY)
    } else {
        java_double(t)
    }
}

/// The unscaled value of `text` as a decimal of `precision` and `scale`, rounding half up as
/// Spark does, or `None` for text that is not a number or does not fit.
pub fn decimal(text: &str, precision: u8, scale: i8) -> Option<i128> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i32>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // digits × 10^(exponent - fraction digits) = unscaled × 10^-scale
    let digits: String = [whole, fraction].concat();
    let shift = i32::from(scale)
        .checked_add(exponent)?
        .checked_sub(i32::try_from(fraction.len()).ok()?)?;
    let digits = digits.trim_start_matches('0');
    let mut unscaled: i128 = 0;
    let kept = if shift >= 0 {
        digits.len()
    } else {
        digits.len().saturating_sub(shift.unsigned_abs() as usize)
    };
    for b in digits[..kept].bytes() {
        unscaled = unscaled
            .checked_mul(10)?
            .checked_add(i128::from(b - b'0'))?;
    }
    if shift > 0 {
        unscaled = unscaled.checked_mul(10_i128.checked_pow(shift as u32)?)?;
    } else if kept < digits.len() && digits.as_bytes()[kept] >= b'5' {
        unscaled += 1;
    }
    if unscaled >= 10_i128.pow(u32::from(precision)) {
        return None;
    }
    Some(if negative { -unscaled } else { unscaled })
}

/// A value converted to its column's type; a string borrows the line where its cell did.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Null,
    Int32(i32),
    Int64(i64),
    Float64(f64),
    Boolean(bool),
    Utf8(Cow<'a, str>),
    Date32(i32),
    Timestamp(i64),
    Decimal(i128),
    Json(Json),
}

/// Builds one column from the values of a batch's rows.
pub struct ColumnBuilder {
    field: Arc<Field>,
    builder: Builder,
    /// The rows of a batch, for the capacity of the next one.
    rows: usize,
}

enum Builder {
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float64(Float64Builder),
    Boolean(BooleanBuilder),
    Utf8(StringBuilder),
    Date32(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder),
    Decimal(Decimal128Builder),
    /// Structs and arrays of JSON lines: the values of the batch, decoded by `arrow-json` when
    /// the batch is finished.
    Nested(Vec<Json>),
}

impl ColumnBuilder {
    /// A builder for `field`, whose type must be one of [`READABLE_TYPES`].
    ///
    /// # Errors
    /// A type that text cannot be read as.
    #[cfg(test)]
    pub fn new(field: Arc<Field>) -> Result<Self, String> {
        Self::with_capacity(field, 0)
    }

    /// A builder for `field` that holds `rows` values without growing, and starts each batch
    /// after [`finish`](Self::finish) with room for as many: Arrow's builders give up their
    /// buffers when they finish, and would grow them again, copy after copy, for every batch.
    ///
    /// # Errors
    /// A type that text cannot be read as.
    pub fn with_capacity(field: Arc<Field>, rows: usize) -> Result<Self, String> {
        let builder = Builder::new(&field, rows, 0)?;
        Ok(ColumnBuilder {
            field,
            builder,
            rows,
        })
    }

    /// The value of `cell` in this column's type, or why it is none.
    ///
    /// # Errors
    /// A cell that is not a value of the column's type, or a null in a non-nullable column.
    pub fn convert<'a>(&self, cell: Cell<'a>, options: &ValueOptions) -> Result<Value<'a>, String> {
        let name = self.field.name();
        if cell == Cell::Null {
            if !self.field.is_nullable() {
                return Err(format!(
                    "column `{name}` is declared not null, but the line has no value for it"
                ));
            }
            return Ok(Value::Null);
        }
        let wrong = |cell: &Cell, what: &str| {
            let shown = match cell {
                Cell::Text(text) => format!("`{text}`"),
                Cell::Json(text) => format!("`{text}`"),
                Cell::Null => "null".to_string(),
            };
            format!(
                "column `{name}`: {shown} is not {what}; fix the line, read the column as \
                 string with .schema(...), or read with mode=PERMISSIVE to get null"
            )
        };
        // Text moves into a string column without a copy; so does the text of a JSON value,
        // which Spark reads as the line wrote it.
        let cell = match (&self.builder, cell) {
            (Builder::Utf8(_), Cell::Text(t) | Cell::Json(t)) => return Ok(Value::Utf8(t)),
            (_, cell) => cell,
        };
        let json: Option<Json> = match (&self.builder, &cell) {
            // A number of a numeric column is read from its text without a JSON value.
            (Builder::Nested(_), _) => None,
            (_, Cell::Json(text)) if self.json_number(text).is_some() => None,
            (_, Cell::Json(text)) => serde_json::from_str(text).ok(),
            _ => None,
        };
        let value = match (&self.builder, &cell) {
            (Builder::Nested(_), Cell::Json(text)) => {
                fit(text, self.field.data_type()).map(Value::Json)
            }
            (_, Cell::Json(text)) => self
                .json_number(text)
                .or_else(|| self.json_scalar(json.as_ref())),
            (Builder::Int32(_), Cell::Text(t)) => t.parse().ok().map(Value::Int32),
            (Builder::Int64(_), Cell::Text(t)) => t.parse().ok().map(Value::Int64),
            (Builder::Float64(_), Cell::Text(t)) => text_double(t, options).map(Value::Float64),
            (Builder::Boolean(_), Cell::Text(t)) => {
                if t.eq_ignore_ascii_case("true") {
                    Some(Value::Boolean(true))
                } else if t.eq_ignore_ascii_case("false") {
                    Some(Value::Boolean(false))
                } else {
                    None
                }
            }
            (Builder::Date32(_), Cell::Text(t)) => match &options.date_format {
                Some(pattern) => pattern.date(t),
                None => datetime::iso_date(t).or_else(|| datetime::lenient_date(t)),
            }
            .map(Value::Date32),
            (Builder::Timestamp(_), Cell::Text(t)) => options
                .timestamp_format
                .as_ref()
                .and_then(|p| p.timestamp(t, options.zone))
                .or_else(|| datetime::lenient_timestamp(t, options.zone))
                .map(Value::Timestamp),
            (Builder::Decimal(_), Cell::Text(t)) => self.decimal(t),
            _ => None,
        };
        value.ok_or_else(|| {
            let what = match &self.builder {
                Builder::Int32(_) => "an int".to_string(),
                Builder::Int64(_) => "a bigint".to_string(),
                Builder::Float64(_) => "a double".to_string(),
                Builder::Boolean(_) => "a boolean".to_string(),
                Builder::Utf8(_) => "a string".to_string(),
                Builder::Date32(_) => match &options.date_format {
                    Some(p) => format!("a date of the format `{}`", p.text()),
                    None => "a date such as 2024-01-31".to_string(),
                },
                Builder::Timestamp(_) => match &options.timestamp_format {
                    Some(p) => format!("a timestamp of the format `{}`", p.text()),
                    None => "a timestamp such as 2024-01-31T12:00:00Z".to_string(),
                },
                Builder::Decimal(_) | Builder::Nested(_) => {
                    format!("a {}", self.field.data_type())
                }
            };
            wrong(&cell, &what)
        })
    }

    /// Appends the value of `cell` when it is of a common kind (a null, text in a number or
    /// string column, a JSON number in a number column) and converts: straight from the text
    /// into the builder. `false` when [`convert`](Self::convert) must say what it is.
    #[inline]
    pub fn append_fast(&mut self, cell: &Cell<'_>, options: &ValueOptions) -> bool {
        let appended = match (&mut self.builder, cell) {
            (builder, Cell::Null) if self.field.is_nullable() => {
                builder.append_null();
                true
            }
            (Builder::Utf8(b), Cell::Text(t) | Cell::Json(t)) => {
                b.append_value(t);
                true
            }
            (Builder::Int32(b), Cell::Text(t)) => t.parse().map(|v| b.append_value(v)).is_ok(),
            (Builder::Int64(b), Cell::Text(t)) => t.parse().map(|v| b.append_value(v)).is_ok(),
            (Builder::Float64(b), Cell::Text(t)) => {
                text_double(t, options).map(|v| b.append_value(v)).is_some()
            }
            _ => false,
        };
        appended || self.append_json_number(cell)
    }

    /// A JSON number in an integer or double column, appended as [`json_number`](Self::json_number)
    /// reads it.
    fn append_json_number(&mut self, cell: &Cell<'_>) -> bool {
        let Cell::Json(text) = cell else {
            return false;
        };
        if !text.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            return false;
        }
        match &mut self.builder {
            Builder::Int32(b) => text.parse().map(|v| b.append_value(v)).is_ok(),
            Builder::Int64(b) => text.parse().map(|v| b.append_value(v)).is_ok(),
            Builder::Float64(b) => text
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .map(|v| b.append_value(v))
                .is_some(),
            _ => false,
        }
    }

    /// A JSON number in an integer or double column, read from the line's text: the same value
    /// as `json_scalar`'s (both parse to the nearest double; an integer with a fraction or an
    /// exponent is none of these, and goes to `json_scalar`).
    #[inline]
    fn json_number(&self, text: &str) -> Option<Value<'static>> {
        if !text.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            return None;
        }
        match &self.builder {
            Builder::Int32(_) => text.parse().ok().map(Value::Int32),
            Builder::Int64(_) => text.parse().ok().map(Value::Int64),
            // serde_json refuses a number past the doubles, which Rust reads as infinite.
            Builder::Float64(_) => text
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .map(Value::Float64),
            _ => None,
        }
    }

    /// A JSON number or boolean in a column of that type.
    fn json_scalar(&self, json: Option<&Json>) -> Option<Value<'static>> {
        match (&self.builder, json?) {
            (Builder::Int32(_), Json::Number(n)) => n
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .map(Value::Int32),
            (Builder::Int64(_), Json::Number(n)) => n.as_i64().map(Value::Int64),
            (Builder::Float64(_), Json::Number(n)) => n.as_f64().map(Value::Float64),
            (Builder::Boolean(_), Json::Bool(b)) => Some(Value::Boolean(*b)),
            (Builder::Decimal(_), Json::Number(n)) => self.decimal(&n.to_string()),
            _ => None,
        }
    }

    fn decimal(&self, text: &str) -> Option<Value<'static>> {
        match self.field.data_type() {
            DataType::Decimal128(p, s) => decimal(text, *p, *s).map(Value::Decimal),
            _ => None,
        }
    }

    /// Appends a value that [`convert`](Self::convert) returned.
    pub fn push(&mut self, value: Value<'_>) {
        match (&mut self.builder, value) {
            (Builder::Int32(b), Value::Int32(v)) => b.append_value(v),
            (Builder::Int64(b), Value::Int64(v)) => b.append_value(v),
            (Builder::Float64(b), Value::Float64(v)) => b.append_value(v),
            (Builder::Boolean(b), Value::Boolean(v)) => b.append_value(v),
            (Builder::Utf8(b), Value::Utf8(v)) => b.append_value(v),
            (Builder::Date32(b), Value::Date32(v)) => b.append_value(v),
            (Builder::Timestamp(b), Value::Timestamp(v)) => b.append_value(v),
            (Builder::Decimal(b), Value::Decimal(v)) => b.append_value(v),
            (Builder::Nested(values), Value::Json(v)) => values.push(v),
            // A null, or (never: `convert` gives the builder's own type) another type.
            (builder, _) => builder.append_null(),
        }
    }

    /// The column of the values pushed so far; the builder starts a new one.
    ///
    /// # Errors
    /// Nested values that `arrow-json` cannot decode as the column's type, or a decimal type
    /// that Arrow refuses.
    pub fn finish(&mut self) -> Result<ArrayRef, String> {
        let array = self.finish_batch()?;
        // The next batch's buffers, at the size of this one's (strings: their bytes too).
        let bytes = array.as_string_opt::<i32>().map_or(0, |a| a.values().len());
        self.builder = Builder::new(&self.field, self.rows, bytes)?;
        Ok(array)
    }

    fn finish_batch(&mut self) -> Result<ArrayRef, String> {
        Ok(match &mut self.builder {
            Builder::Int32(b) => Arc::new(b.finish()),
            Builder::Int64(b) => Arc::new(b.finish()),
            Builder::Float64(b) => Arc::new(b.finish()),
            Builder::Boolean(b) => Arc::new(b.finish()),
            Builder::Utf8(b) => Arc::new(b.finish()),
            Builder::Date32(b) => Arc::new(b.finish()),
            Builder::Decimal(b) => {
                let (p, s) = match self.field.data_type() {
                    DataType::Decimal128(p, s) => (*p, *s),
                    _ => (38, 0),
                };
                let decimals = b.finish().with_precision_and_scale(p, s);
                Arc::new(decimals.map_err(|e| format!("column `{}`: {e}", self.field.name()))?)
            }
            Builder::Timestamp(b) => {
                let tz = match self.field.data_type() {
                    DataType::Timestamp(_, tz) => tz.clone(),
                    _ => None,
                };
                Arc::new(b.finish().with_timezone_opt(tz))
            }
            Builder::Nested(values) => {
                let name = self.field.name().clone();
                let rows: Vec<serde_json::Map<String, Json>> = std::mem::take(values)
                    .into_iter()
                    .map(|v| std::iter::once((name.clone(), v)).collect())
                    .collect();
                let schema = Arc::new(arrow_schema::Schema::new(vec![self.field.clone()]));
                let decoded = arrow_json::ReaderBuilder::new(schema)
                    .with_batch_size(rows.len().max(1))
                    .build_decoder()
                    .and_then(|mut decoder| {
                        decoder.serialize(&rows)?;
                        decoder.flush()
                    })
                    .map_err(|e| format!("column `{name}`: {e}"))?;
                match decoded {
                    Some(batch) => batch.column(0).clone(),
                    None => arrow_array::new_empty_array(self.field.data_type()),
                }
            }
        })
    }
}

/// The JSON `text` of a value in the shape of `data_type`, where Spark's JSON reader reads it:
/// an object for a struct, an array for an array, and any value for a string (as the line
/// wrote it), inside them too; `None` where the value has another shape.
fn fit(text: &str, data_type: &DataType) -> Option<Json> {
    let text = text.trim();
    if text == "null" {
        return Some(Json::Null);
    }
    Some(match data_type {
        DataType::Utf8 if text.starts_with('"') => serde_json::from_str(text).ok()?,
        DataType::Utf8 => Json::String(text.to_string()),
        DataType::Struct(fields) => {
            let object: HashMap<String, &RawValue> = serde_json::from_str(text).ok()?;
            Json::Object(
                fields
                    .iter()
                    .map(|f| {
                        let value = match object.get(f.name()) {
                            Some(raw) => fit(raw.get(), f.data_type())?,
                            None => Json::Null,
                        };
                        Some((f.name().clone(), value))
                    })
                    .collect::<Option<_>>()?,
            )
        }
        DataType::List(element) => {
            let values: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            Json::Array(
                values
                    .iter()
                    .map(|raw| fit(raw.get(), element.data_type()))
                    .collect::<Option<_>>()?,
            )
        }
        _ => {
            let value: Json = serde_json::from_str(text).ok()?;
            if value.is_object() || value.is_array() {
                return None;
            }
            value
        }
    })
}

impl Builder {
    /// An empty builder for `field` with room for `rows` values (and `bytes` of strings).
    fn new(field: &Field, rows: usize, bytes: usize) -> Result<Builder, String> {
        Ok(match field.data_type() {
            DataType::Int32 => Builder::Int32(Int32Builder::with_capacity(rows)),
            DataType::Int64 => Builder::Int64(Int64Builder::with_capacity(rows)),
            DataType::Float64 => Builder::Float64(Float64Builder::with_capacity(rows)),
            DataType::Boolean => Builder::Boolean(BooleanBuilder::with_capacity(rows)),
            DataType::Utf8 => Builder::Utf8(StringBuilder::with_capacity(rows, bytes)),
            DataType::Date32 => Builder::Date32(Date32Builder::with_capacity(rows)),
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                Builder::Timestamp(TimestampMicrosecondBuilder::with_capacity(rows))
            }
            DataType::Struct(_) | DataType::List(_) => Builder::Nested(Vec::with_capacity(rows)),
            DataType::Decimal128(p, s) => Builder::Decimal(
                Decimal128Builder::with_capacity(rows)
                    .with_precision_and_scale(*p, *s)
                    .map_err(|e| format!("column `{}`: {e}", field.name()))?,
            ),
            other => {
                return Err(format!(
                    "column `{}` is {other}, which this data source cannot read from text; use \
                     one of: {READABLE_TYPES}",
                    field.name()
                ))
            }
        })
    }

    fn append_null(&mut self) {
        match self {
            Builder::Int32(b) => b.append_null(),
            Builder::Int64(b) => b.append_null(),
            Builder::Float64(b) => b.append_null(),
            Builder::Boolean(b) => b.append_null(),
            Builder::Utf8(b) => b.append_null(),
            Builder::Date32(b) => b.append_null(),
            Builder::Timestamp(b) => b.append_null(),
            Builder::Decimal(b) => b.append_null(),
            Builder::Nested(values) => values.push(Json::Null),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Cell<'static> {
        Cell::Text(Cow::Owned(s.to_string()))
    }

    fn builder(data_type: DataType) -> ColumnBuilder {
        ColumnBuilder::new(Arc::new(Field::new("c", data_type, true))).expect("readable")
    }

    #[test]
    fn java_doubles() {
        assert_eq!(java_double(" 1.5d "), Some(1.5));
        assert_eq!(java_double("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(java_double("1e5"), Some(100_000.0));
        assert_eq!(java_double("inf"), None);
        assert_eq!(java_double("0x10"), None);
        assert_eq!(java_double(""), None);
    }

    #[test]
    fn decimals_round_half_up_and_refuse_what_does_not_fit() {
        assert_eq!(
            decimal("123456789012345678901", 21, 0),
            Some(123456789012345678901)
        );
        assert_eq!(decimal("-1.25", 5, 1), Some(-13));
        assert_eq!(decimal("1.24", 5, 1), Some(12));
        assert_eq!(decimal("1e3", 5, 0), Some(1000));
        assert_eq!(decimal("100000", 5, 0), None);
        assert_eq!(decimal("1x", 5, 0), None);
        assert_eq!(decimal("1e2147483647", 5, 2), None);
        assert_eq!(decimal("1e-2147483648", 5, 2), Some(0));
    }

    #[test]
    fn a_cell_of_the_wrong_type_names_the_column_and_the_fix() {
        let field = Arc::new(Field::new("age", DataType::Int64, true));
        let builder = ColumnBuilder::new(field).expect("a readable type");
        assert_eq!(
            builder.convert(text("old"), &ValueOptions::default()),
            Err(
                "column `age`: `old` is not a bigint; fix the line, read the column as string \
                 with .schema(...), or read with mode=PERMISSIVE to get null"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_null_in_a_non_nullable_column_is_refused() {
        let field = Arc::new(Field::new("id", DataType::Int64, false));
        let builder = ColumnBuilder::new(field).expect("a readable type");
        assert!(builder
            .convert(Cell::Null, &ValueOptions::default())
            .is_err());
    }

    #[test]
    fn text_converts_as_spark_converts_it() {
        let options = ValueOptions::default();
        let convert = |t: DataType, s: &str| builder(t).convert(text(s), &options);
        assert_eq!(convert(DataType::Int32, "+5"), Ok(Value::Int32(5)));
        assert!(convert(DataType::Int32, " 5").is_err());
        assert_eq!(convert(DataType::Float64, " 5"), Ok(Value::Float64(5.0)));
        assert_eq!(
            convert(DataType::Float64, "-Inf"),
            Ok(Value::Float64(f64::NEG_INFINITY))
        );
        assert_eq!(convert(DataType::Boolean, "TRUE"), Ok(Value::Boolean(true)));
        assert_eq!(
            convert(DataType::Date32, "2014-2-1"),
            Ok(Value::Date32(datetime::days(2014, 2, 1).expect("a date")))
        );
        let utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        assert_eq!(
            convert(utc, "1970-01-01T00:00:01Z"),
            Ok(Value::Timestamp(1_000_000))
        );
    }
}
