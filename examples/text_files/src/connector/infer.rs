//! Type inference as Spark's CSV and JSON readers do it: each value gets the narrowest type
//! that reads it, trying the types from the column's type so far upwards, and two types merge
//! into the narrowest one that holds both (`int` → `bigint` → `decimal` → `double`; `date` →
//! `timestamp`; anything with a mismatch → `string`). A column with no value is `string`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field};
use serde_json::Value;

use super::datetime;
use super::values::{java_double, same, ValueOptions};

/// The largest precision of a Spark decimal.
const MAX_PRECISION: u8 = 38;

/// A column's type while inference runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inferred {
    /// No value seen yet.
    Null,
    Int,
    Long,
    /// A decimal of that precision and scale: integers too large for a bigint.
    Decimal(u8, i8),
    Double,
    Date,
    Timestamp,
    Boolean,
    String,
}

impl Inferred {
    /// The Arrow type of the column: `string` where no value was seen.
    pub fn data_type(self) -> DataType {
        match self {
            Inferred::Null | Inferred::String => DataType::Utf8,
            Inferred::Int => DataType::Int32,
            Inferred::Long => DataType::Int64,
            Inferred::Decimal(p, s) => DataType::Decimal128(p, s),
            Inferred::Double => DataType::Float64,
            Inferred::Date => DataType::Date32,
            Inferred::Timestamp => DataType::Timestamp(
                arrow_schema::TimeUnit::Microsecond,
                Some(std::sync::Arc::from("UTC")),
            ),
            Inferred::Boolean => DataType::Boolean,
        }
    }
}

/// The type of a column of CSV text after `field`, given its type so far. Null values
/// (`None`), empty text, and the `nullValue` text leave the type as it was.
pub fn csv_field(so_far: Inferred, field: Option<&str>, options: &ValueOptions) -> Inferred {
    let Some(field) = field else { return so_far };
    if field.is_empty() || same(field, &options.null_value) {
        return so_far;
    }
    // Given `double` so far, there is no point in trying `int`: start where the column is.
    let seen = match so_far {
        Inferred::Null | Inferred::Int => try_int(field, options),
        Inferred::Long => try_long(field, options),
        Inferred::Decimal(..) => try_decimal(field, options),
        Inferred::Double => try_double(field, options),
        Inferred::Date => try_date(field, options),
        Inferred::Timestamp => try_timestamp(field, options),
        Inferred::Boolean => try_boolean(field),
        Inferred::String => Inferred::String,
    };
    merge(so_far, seen)
}

fn try_int(field: &str, options: &ValueOptions) -> Inferred {
    if field.parse::<i32>().is_ok() {
        Inferred::Int
    } else {
        try_long(field, options)
    }
}

fn try_long(field: &str, options: &ValueOptions) -> Inferred {
    if field.parse::<i64>().is_ok() {
        Inferred::Long
    } else {
        try_decimal(field, options)
    }
}

/// Integers too large for a bigint are decimals of scale 0, up to 38 digits; a number with a
/// fraction or an exponent is a double (Spark keeps decimals for integers, as other formats
/// read them poorly).
fn try_decimal(field: &str, options: &ValueOptions) -> Inferred {
    match integer_precision(field) {
        Some(precision) if precision <= MAX_PRECISION => Inferred::Decimal(precision, 0),
        _ => try_double(field, options),
    }
}

/// The number of significant digits of an optionally signed integer, or `None` for other text.
fn integer_precision(field: &str) -> Option<u8> {
    let digits = field.strip_prefix(['-', '+']).unwrap_or(field);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = digits.trim_start_matches('0').len().max(1);
    u8::try_from(significant).ok()
}

fn try_double(field: &str, options: &ValueOptions) -> Inferred {
    if java_double(field).is_some()
        || same(field, &options.nan_value)
        || same(field, &options.positive_inf)
        || same(field, &options.negative_inf)
    {
        Inferred::Double
    } else {
        // Spark 4.3 tries a date before a timestamp, whatever its option `prefersDate` says.
        try_date(field, options)
    }
}

fn try_date(field: &str, options: &ValueOptions) -> Inferred {
    let date = match &options.date_format {
        Some(pattern) => pattern.date(field),
        None => datetime::iso_date(field),
    };
    if date.is_some() {
        Inferred::Date
    } else {
        try_timestamp(field, options)
    }
}

fn try_timestamp(field: &str, options: &ValueOptions) -> Inferred {
    // Spark tries its default (lenient) format first, then `timestampFormat`.
    let lenient = datetime::lenient_timestamp(field, options.zone).is_some();
    let patterned = options
        .timestamp_format
        .as_ref()
        .is_some_and(|p| p.timestamp(field, options.zone).is_some());
    if lenient || patterned {
        Inferred::Timestamp
    } else {
        try_boolean(field)
    }
}

fn try_boolean(field: &str) -> Inferred {
    if field.eq_ignore_ascii_case("true") || field.eq_ignore_ascii_case("false") {
        Inferred::Boolean
    } else {
        Inferred::String
    }
}

/// The type of a JSON column after `value`: Spark's JSON inference, which reads numbers as
/// `bigint` (or `decimal` past it) and `double`, and leaves strings strings.
pub fn json_field(so_far: Inferred, value: &Value) -> Inferred {
    let seen = match value {
        Value::Null => return so_far,
        Value::Bool(_) => Inferred::Boolean,
        Value::Number(n) if n.is_i64() => Inferred::Long,
        Value::Number(n) if n.is_u64() => {
            Inferred::Decimal(integer_precision(&n.to_string()).unwrap_or(20), 0)
        }
        Value::Number(_) => Inferred::Double,
        // Objects and arrays are `JsonType`s; a scalar column that meets one is a string.
        Value::String(_) | Value::Array(_) | Value::Object(_) => Inferred::String,
    };
    merge(so_far, seen)
}

/// The type of a JSON scalar from its text (`null`, `true`, `false`, a number or a string, as
/// the line wrote it): what [`json_field`] gives for its value, with no JSON value made.
pub fn json_text(text: &str) -> Inferred {
    match text.as_bytes().first() {
        Some(b'"') => Inferred::String,
        Some(b't' | b'f') => Inferred::Boolean,
        Some(b'n') | None => Inferred::Null,
        // serde_json's numbers: an integer is an i64, else a u64, else (like any number with a
        // fraction or an exponent) a double.
        Some(_) if text.contains(['.', 'e', 'E']) => Inferred::Double,
        Some(_) if text.parse::<i64>().is_ok() => Inferred::Long,
        Some(_) if text.parse::<u64>().is_ok() => {
            Inferred::Decimal(integer_precision(text).unwrap_or(20), 0)
        }
        Some(_) => Inferred::Double,
    }
}

/// The narrowest type that holds values of both `a` and `b`, as Spark merges the types of two
/// rows (or two files).
pub fn merge(a: Inferred, b: Inferred) -> Inferred {
    use Inferred::*;
    match (a, b) {
        (a, b) if a == b => a,
        (Null, t) | (t, Null) => t,
        (Int, Long) | (Long, Int) => Long,
        (Int | Long, Double) | (Double, Int | Long) => Double,
        (Decimal(..), Double) | (Double, Decimal(..)) => Double,
        (Int, Decimal(p, s)) | (Decimal(p, s), Int) => wider_decimal((10, 0), (p, s)),
        (Long, Decimal(p, s)) | (Decimal(p, s), Long) => wider_decimal((20, 0), (p, s)),
        (Decimal(p1, s1), Decimal(p2, s2)) => wider_decimal((p1, s1), (p2, s2)),
        // Spark 4 reads a column of dates and timestamps as timestamps.
        (Date, Timestamp) | (Timestamp, Date) => Timestamp,
        _ => String,
    }
}

/// The decimal that holds both: the larger scale and the larger integral part, or a double past
/// 38 digits.
fn wider_decimal((p1, s1): (u8, i8), (p2, s2): (u8, i8)) -> Inferred {
    let scale = s1.max(s2);
    let range = (p1 as i16 - s1 as i16).max(p2 as i16 - s2 as i16);
    if range + scale as i16 > MAX_PRECISION as i16 {
        Inferred::Double
    } else {
        Inferred::Decimal((range + scale as i16) as u8, scale)
    }
}

/// A JSON column's type while inference runs: Spark's JSON reader infers objects as structs
/// and arrays as arrays.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonType {
    Scalar(Inferred),
    /// Fields by name: Spark orders them so.
    Struct(BTreeMap<String, JsonType>),
    Array(Box<JsonType>),
}

impl JsonType {
    /// The type of one JSON value.
    pub fn of(value: &Value) -> JsonType {
        match value {
            Value::Object(object) => JsonType::Struct(
                object
                    .iter()
                    .map(|(k, v)| (k.clone(), JsonType::of(v)))
                    .collect(),
            ),
            Value::Array(values) => JsonType::Array(Box::new(
                values
                    .iter()
                    .fold(JsonType::Scalar(Inferred::Null), |t, v| {
                        t.merge(JsonType::of(v))
                    }),
            )),
            scalar => JsonType::Scalar(json_field(Inferred::Null, scalar)),
        }
    }

    /// The type that holds both, as Spark merges them: structs field by field, arrays by
    /// their elements, and a string where the kinds differ.
    pub fn merge(self, other: JsonType) -> JsonType {
        match (self, other) {
            (JsonType::Scalar(Inferred::Null), t) | (t, JsonType::Scalar(Inferred::Null)) => t,
            (JsonType::Scalar(a), JsonType::Scalar(b)) => JsonType::Scalar(merge(a, b)),
            (JsonType::Struct(mut a), JsonType::Struct(b)) => {
                for (name, t) in b {
                    let merged = match a.remove(&name) {
                        Some(existing) => existing.merge(t),
                        None => t,
                    };
                    a.insert(name, merged);
                }
                JsonType::Struct(a)
            }
            (JsonType::Array(a), JsonType::Array(b)) => JsonType::Array(Box::new(a.merge(*b))),
            _ => JsonType::Scalar(Inferred::String),
        }
    }

    /// The Arrow type, or `None` for a struct with no field, which Spark leaves out.
    pub fn data_type(&self) -> Option<DataType> {
        match self {
            JsonType::Scalar(t) => Some(t.data_type()),
            JsonType::Struct(fields) => {
                let fields: Vec<Field> = fields
                    .iter()
                    .filter_map(|(name, t)| Some(Field::new(name, t.data_type()?, true)))
                    .collect();
                (!fields.is_empty()).then(|| DataType::Struct(fields.into()))
            }
            JsonType::Array(element) => Some(DataType::List(Arc::new(Field::new(
                "element",
                element.data_type()?,
                true,
            )))),
        }
    }
}

/// A deterministic sample of rows at `ratio` (Spark's `samplingRatio`): a row is kept when the
/// next number of a fixed-seed generator falls under the ratio, so inference gives the same
/// schema every time.
pub struct Sampler {
    ratio: f64,
    state: u64,
}

impl Sampler {
    pub fn new(ratio: f64) -> Self {
        Sampler {
            ratio,
            state: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// Whether to infer from the next row.
    pub fn keep(&mut self) -> bool {
        if self.ratio >= 1.0 {
            return true;
        }
        // xorshift64*: enough for an even sample, and no dependency.
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let next = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((next >> 11) as f64 / (1u64 << 53) as f64) < self.ratio
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn infer(values: &[&str]) -> Inferred {
        let options = ValueOptions::default();
        values
            .iter()
            .fold(Inferred::Null, |t, v| csv_field(t, Some(v), &options))
    }

    #[test]
    fn integers_widen_to_bigint_decimal_and_double() {
        assert_eq!(infer(&["1", "-2", "+3", "007"]), Inferred::Int);
        assert_eq!(infer(&["1", "99999999999"]), Inferred::Long);
        assert_eq!(infer(&["123456789012345678901"]), Inferred::Decimal(21, 0));
        assert_eq!(
            infer(&["5", "123456789012345678901"]),
            Inferred::Decimal(21, 0)
        );
        assert_eq!(infer(&["1.5", "123456789012345678901"]), Inferred::Double);
        // The issue's `precip`: integers for a hundred rows, then a fraction.
        let mut precip = vec!["0"; 256];
        precip.push("0.05");
        assert_eq!(infer(&precip), Inferred::Double);
    }

    #[test]
    fn doubles_are_what_java_reads_as_doubles() {
        for double in [
            "1e5",
            "1.5d",
            " 1",
            "NaN",
            "Infinity",
            "-Infinity",
            "Inf",
            "1e400",
        ] {
            assert_eq!(infer(&[double]), Inferred::Double, "{double}");
        }
        for string in ["0x10", "inf", "nan", "1,5", "1.2.3"] {
            assert_eq!(infer(&[string]), Inferred::String, "{string}");
        }
    }

    #[test]
    fn empty_values_and_the_null_value_do_not_change_a_type() {
        assert_eq!(infer(&["1", "", "2"]), Inferred::Int);
        assert_eq!(infer(&[""]), Inferred::Null);
        assert_eq!(Inferred::Null.data_type(), DataType::Utf8);
        // `NA` is text unless it is the `nullValue`.
        assert_eq!(infer(&["1", "NA"]), Inferred::String);
        let na = ValueOptions {
            null_value: "NA".to_string(),
            ..ValueOptions::default()
        };
        let t = ["1", "NA", "2"]
            .iter()
            .fold(Inferred::Null, |t, v| csv_field(t, Some(v), &na));
        assert_eq!(t, Inferred::Int);
    }

    #[test]
    fn dates_timestamps_and_booleans_are_inferred_and_mixed_types_are_strings() {
        assert_eq!(infer(&["2014-02-01", "2014-12-31"]), Inferred::Date);
        assert_eq!(infer(&["2014-02-01", "2014-2-3"]), Inferred::Timestamp);
        assert_eq!(
            infer(&["2013-01-01", "2013-01-01 10:00:00"]),
            Inferred::Timestamp
        );
        assert_eq!(infer(&["2013-01-01T10:00:00Z"]), Inferred::Timestamp);
        assert_eq!(infer(&["2012/01/01"]), Inferred::String);
        assert_eq!(infer(&["true", "FALSE"]), Inferred::Boolean);
        assert_eq!(infer(&["1", "true"]), Inferred::String);
        assert_eq!(infer(&["2014-02-01", "1"]), Inferred::String);
    }

    #[test]
    fn a_date_format_makes_its_dates_dates() -> Result<(), String> {
        let options = ValueOptions {
            date_format: Some(datetime::Pattern::parse("dateFormat", "yyyy/MM/dd")?),
            ..ValueOptions::default()
        };
        let t = ["2012/01/01", "2012/01/02"]
            .iter()
            .fold(Inferred::Null, |t, v| csv_field(t, Some(v), &options));
        assert_eq!(t, Inferred::Date);
        Ok(())
    }

    #[test]
    fn json_numbers_are_bigint_or_double_and_strings_stay_strings() {
        let infer = |values: &[Value]| values.iter().fold(Inferred::Null, json_field);
        assert_eq!(infer(&[Value::from(1), Value::Null]), Inferred::Long);
        assert_eq!(infer(&[Value::from(1), Value::from(1.5)]), Inferred::Double);
        assert_eq!(infer(&[Value::from("2014-02-01")]), Inferred::String);
        assert_eq!(
            infer(&[Value::from(true), Value::from(1)]),
            Inferred::String
        );
        assert_eq!(infer(&[Value::from(u64::MAX)]), Inferred::Decimal(20, 0));
    }

    #[test]
    fn json_objects_are_structs_and_arrays_arrays_merged_as_spark_merges_them() {
        let t = |text: &str| JsonType::of(&serde_json::from_str(text).expect("JSON"));
        let merged = t(r#"{"b": 1, "c": "x", "l": [1, 2]}"#).merge(t(r#"{"b": 2.5, "l": []}"#));
        assert_eq!(
            merged.data_type().map(|d| d.to_string()),
            Some(
                DataType::Struct(
                    vec![
                        Field::new("b", DataType::Float64, true),
                        Field::new("c", DataType::Utf8, true),
                        Field::new_list("l", Field::new("element", DataType::Int64, true), true),
                    ]
                    .into()
                )
                .to_string()
            )
        );
        assert_eq!(
            t(r#"{"b": 1}"#).merge(t("5")),
            JsonType::Scalar(Inferred::String)
        );
        assert_eq!(
            t(r#"[1, "x"]"#),
            JsonType::Array(Box::new(JsonType::Scalar(Inferred::String)))
        );
        assert_eq!(t("{}").data_type(), None);
        assert_eq!(
            t("[]").data_type(),
            Some(DataType::List(Arc::new(Field::new(
                "element",
                DataType::Utf8,
                true
            ))))
        );
    }

    #[test]
    fn merging_is_symmetric() {
        use Inferred::*;
        let all = [
            Null,
            Int,
            Long,
            Decimal(21, 0),
            Decimal(38, 0),
            Double,
            Date,
            Timestamp,
            Boolean,
            String,
        ];
        for a in all {
            for b in all {
                assert_eq!(merge(a, b), merge(b, a), "{a:?} {b:?}");
            }
        }
        assert_eq!(merge(Long, Decimal(38, 0)), Decimal(38, 0));
        assert_eq!(merge(Decimal(38, 0), Decimal(10, 2)), Double);
    }

    #[test]
    fn sampling_keeps_about_the_ratio_and_is_the_same_every_time() {
        let kept = |ratio| {
            let mut sampler = Sampler::new(ratio);
            (0..10_000).filter(|_| sampler.keep()).count()
        };
        assert!((900..1100).contains(&kept(0.1)), "{}", kept(0.1));
        assert_eq!(kept(0.1), kept(0.1));
        assert_eq!(kept(1.0), 10_000);
    }

    #[test]
    fn a_json_scalar_is_typed_from_its_text_as_from_its_value() {
        let texts = [
            "1",
            "-5",
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551616",
            "-9223372036854775809",
            "1.5",
            "1e3",
            "-2E-2",
            "true",
            "false",
            "null",
            "\"text\"",
        ];
        for text in texts {
            let value: Value = serde_json::from_str(text).expect("JSON");
            assert_eq!(
                json_text(text),
                json_field(Inferred::Null, &value),
                "{text}"
            );
        }
        // serde_json makes `-0` a double, to keep its sign; Spark's parser calls it an
        // integer, and so does the text.
        assert_eq!(json_text("-0"), Inferred::Long);
    }
}
