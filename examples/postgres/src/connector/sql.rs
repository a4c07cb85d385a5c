//! The SQL of a read: identifiers quoted, and the values of pushed filters and partition
//! bounds bound as parameters, never written into the text.
//!
//! `COPY (SELECT ...) TO STDOUT` takes no parameters (PostgreSQL plans COPY's query without
//! a parameter list), so a read binds each value with `$n` to `set_config('sparkds.p<n>', ...)`
//! in the same session, and the query reads it back once, as an initplan:
//! `(SELECT current_setting('sparkds.p<n>')::<type>)`. The value crosses as a typed binary
//! parameter and is rendered to text by the server itself, whose renderings of these types
//! read back exactly (`extra_float_digits=3`, ISO dates, hex bytea: see `connect.rs`).
//!
//! A filter is accepted only where PostgreSQL gives Spark's answer on every row:
//! - comparisons, `<=>` (`IS NOT DISTINCT FROM`), `IN`, `IS [NOT] NULL`, `AND`, `OR`, `NOT`:
//!   three-valued in both;
//! - integers, `real` and `double precision` (NaN equals NaN and sorts above every number in
//!   both, and -0 equals 0), `numeric(p,s)` (exact; not an unconstrained `numeric`, whose
//!   values a read rounds), booleans, dates, timestamps, `bytea` (unsigned bytes in both);
//! - `text` and `varchar` compared `COLLATE "C"`, which is byte order, Spark's order of UTF-8
//!   strings, and only when the database is UTF-8; `STARTS_WITH`, `ENDS_WITH`, `CONTAINS` on
//!   them. Not `char(n)`: PostgreSQL compares it without its trailing spaces, Spark with them;
//! - a column against a literal of its own type. Arrays, and two columns, are left to Spark.

use std::error::Error as StdError;

use bytes::BytesMut;
use serde::{Deserialize, Serialize};
use spark_datasource::filters::{Column, Filter, Literal, Value};
use tokio_postgres::types::{IsNull, ToSql, Type};

use super::time::{date_to_postgres, timestamp_to_postgres};
use super::types::Kind;

/// The values that one read binds, at most: each is a column of the statement that binds
/// them, where PostgreSQL allows 1,664 (`MaxTupleAttributeNumber`). A filter past it is left
/// to Spark.
pub const MAX_PARAMS: usize = 1_600;

/// `name` as a quoted identifier.
pub fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A value bound as a parameter, in the binary form of its type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Param {
    Int64(i64),
    Float32(f32),
    Float64(f64),
    Bool(bool),
    Text(String),
    Bytes(Vec<u8>),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since 1970-01-01T00:00:00.
    Timestamp(i64),
    /// Microseconds since 1970-01-01T00:00:00Z.
    TimestampTz(i64),
    /// The text of a decimal, read back as `numeric`.
    Numeric(String),
}

impl Param {
    /// The type of the parameter in `$n::<type>`.
    fn bound_as(&self) -> &'static str {
        match self {
            Param::Int64(_) => "int8",
            Param::Float32(_) => "float4",
            Param::Float64(_) => "float8",
            Param::Bool(_) => "bool",
            Param::Text(_) | Param::Numeric(_) => "text",
            Param::Bytes(_) => "bytea",
            Param::Date(_) => "date",
            Param::Timestamp(_) => "timestamp",
            Param::TimestampTz(_) => "timestamptz",
        }
    }

    /// Whether PostgreSQL holds the value: a date or a timestamp past its range cannot be
    /// bound (shifted to its epoch, it would be another value, or fail the statement).
    pub fn is_bindable(&self) -> bool {
        match self {
            Param::Date(days) => date_to_postgres(*days).is_some(),
            Param::Timestamp(micros) | Param::TimestampTz(micros) => {
                timestamp_to_postgres(*micros).is_some()
            }
            _ => true,
        }
    }

    /// The type that the query reads it back as.
    fn read_as(&self) -> &'static str {
        match self {
            Param::Numeric(_) => "numeric",
            other => other.bound_as(),
        }
    }
}

/// What binding a value that `Param::is_bindable` refuses says; the read checks first.
const OUT_OF_RANGE: &str = "a date or timestamp outside PostgreSQL's range";

impl ToSql for Param {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self {
            Param::Int64(v) => out.extend_from_slice(&v.to_be_bytes()),
            Param::Float32(v) => out.extend_from_slice(&v.to_be_bytes()),
            Param::Float64(v) => out.extend_from_slice(&v.to_be_bytes()),
            Param::Bool(v) => out.extend_from_slice(&[u8::from(*v)]),
            Param::Text(v) | Param::Numeric(v) => out.extend_from_slice(v.as_bytes()),
            Param::Bytes(v) => out.extend_from_slice(v),
            Param::Date(days) => {
                let days = date_to_postgres(*days).ok_or(OUT_OF_RANGE)?;
                out.extend_from_slice(&days.to_be_bytes())
            }
            Param::Timestamp(micros) | Param::TimestampTz(micros) => {
                let micros = timestamp_to_postgres(*micros).ok_or(OUT_OF_RANGE)?;
                out.extend_from_slice(&micros.to_be_bytes())
            }
        }
        Ok(IsNull::No)
    }

    // The SQL casts each parameter to the type its variant encodes (`bound_as`).
    fn accepts(_ty: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// The statement that binds `params` before a read: `set_config('sparkds.p1', $1::int8::text,
/// false), ...`.
pub fn bind_statement(params: &[Param]) -> String {
    let settings: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let n = i + 1;
            format!(
                "set_config('sparkds.p{n}', ${n}::{}::text, false)",
                p.bound_as()
            )
        })
        .collect();
    format!("SELECT {}", settings.join(", "))
}

/// A column of the read: its name in PostgreSQL and its kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    pub name: String,
    pub kind: Kind,
}

/// Builds the condition of a read, collecting the values it binds.
pub struct Condition<'a> {
    columns: &'a [ColumnInfo],
    utf8: bool,
    pub params: Vec<Param>,
}

impl<'a> Condition<'a> {
    /// A condition on `columns`; `utf8` says whether the database is UTF-8.
    pub fn new(columns: &'a [ColumnInfo], utf8: bool) -> Self {
        Condition {
            columns,
            utf8,
            params: Vec::new(),
        }
    }

    /// The SQL that reads back a bound value.
    pub fn bind(&mut self, param: Param) -> String {
        let read_as = param.read_as();
        self.params.push(param);
        format!(
            "(SELECT current_setting('sparkds.p{}')::{read_as})",
            self.params.len()
        )
    }

    /// The SQL of `filter`, or `None` when PostgreSQL cannot evaluate it as Spark does.
    pub fn filter(&mut self, filter: &Filter) -> Option<String> {
        Some(match filter {
            Filter::AlwaysTrue => "TRUE".into(),
            Filter::AlwaysFalse => "FALSE".into(),
            Filter::And(p, q) => format!("({} AND {})", self.filter(p)?, self.filter(q)?),
            Filter::Or(p, q) => format!("({} OR {})", self.filter(p)?, self.filter(q)?),
            Filter::Not(p) => format!("(NOT {})", self.filter(p)?),
            Filter::IsNull(Value::Column(c)) => {
                format!("({} IS NULL)", quote(&self.column(c)?.name))
            }
            Filter::IsNotNull(Value::Column(c)) => {
                format!("({} IS NOT NULL)", quote(&self.column(c)?.name))
            }
            Filter::Eq(a, b) => self.compare("=", a, b)?,
            Filter::NullSafeEq(a, b) => self.compare("IS NOT DISTINCT FROM", a, b)?,
            Filter::Lt(a, b) => self.compare("<", a, b)?,
            Filter::Le(a, b) => self.compare("<=", a, b)?,
            Filter::Gt(a, b) => self.compare(">", a, b)?,
            Filter::Ge(a, b) => self.compare(">=", a, b)?,
            Filter::In(Value::Column(c), values) => {
                let column = self.column(c)?;
                if values.is_empty() {
                    // Spark's IN of no value is FALSE, even for a NULL.
                    return Some("FALSE".into());
                }
                let mut list = Vec::new();
                for value in values {
                    let Value::Literal(literal) = value else {
                        return None;
                    };
                    list.push(self.literal(&column.kind, literal)?);
                }
                format!("({} IN ({}))", self.operand(column)?, list.join(", "))
            }
            Filter::StartsWith(Value::Column(c), Value::Literal(l))
            | Filter::EndsWith(Value::Column(c), Value::Literal(l))
            | Filter::Contains(Value::Column(c), Value::Literal(l)) => {
                let column = self.column(c)?;
                if column.kind != (Kind::Text { padded: false }) || !self.utf8 {
                    return None;
                }
                let Literal::Utf8(Some(text)) = l else {
                    return None;
                };
                let operand = self.operand(column)?;
                let value = self.text(text)?;
                match filter {
                    Filter::StartsWith(..) => format!("starts_with({operand}, {value})"),
                    Filter::EndsWith(..) => {
                        let again = self.text(text)?;
                        format!("(right({operand}, char_length({value})) = {again})")
                    }
                    _ => format!("(strpos({operand}, {value}) > 0)"),
                }
            }
            _ => return None,
        })
    }

    fn column(&self, column: &Column) -> Option<&'a ColumnInfo> {
        let name = column.name()?;
        self.columns.iter().find(|c| c.name == name)
    }

    /// A column as an operand of a comparison; `None` for a type whose comparisons differ.
    fn operand(&self, column: &ColumnInfo) -> Option<String> {
        let name = quote(&column.name);
        match &column.kind {
            Kind::List(_) | Kind::Text { padded: true } => None,
            Kind::Decimal { exact: false, .. } => None,
            Kind::Text { padded: false } if !self.utf8 => None,
            Kind::Text { padded: false } => Some(format!("{name} COLLATE \"C\"")),
            _ => Some(name),
        }
    }

    fn compare(&mut self, op: &str, a: &Value, b: &Value) -> Option<String> {
        let (column, literal, op) = match (a, b) {
            (Value::Column(c), Value::Literal(l)) => (c, l, op),
            (Value::Literal(l), Value::Column(c)) => (c, l, flip(op)),
            _ => return None,
        };
        let column = self.column(column)?;
        let operand = self.operand(column)?;
        let value = self.literal(&column.kind, literal)?;
        Some(format!("({operand} {op} {value})"))
    }

    fn text(&mut self, text: &str) -> Option<String> {
        // PostgreSQL's text holds no NUL character.
        (!text.contains('\0')).then(|| self.bind(Param::Text(text.to_string())))
    }

    /// A literal compared with a column of `kind`: bound, or a typed NULL.
    fn literal(&mut self, kind: &Kind, literal: &Literal) -> Option<String> {
        if let Literal::Null = literal {
            return Some("NULL".into());
        }
        if literal.is_null() {
            // A NULL of the column's type: the comparison is NULL, as in Spark.
            return matches_kind(kind, literal).then(|| format!("NULL::{}", kind.sql_type()));
        }
        if !matches_kind(kind, literal) {
            return None;
        }
        let param = match literal {
            Literal::Boolean(Some(v)) => Param::Bool(*v),
            Literal::Float32(Some(v)) => Param::Float32(*v),
            Literal::Float64(Some(v)) => Param::Float64(*v),
            Literal::Decimal128 {
                value: Some(v),
                scale,
                ..
            } => Param::Numeric(decimal_text(*v, *scale)),
            Literal::Utf8(Some(v)) => return self.text(v),
            Literal::Binary(Some(v)) => Param::Bytes(v.clone()),
            Literal::Date32(Some(v)) => Param::Date(*v),
            Literal::Timestamp(Some(v)) => Param::TimestampTz(*v),
            Literal::TimestampNtz(Some(v)) => Param::Timestamp(*v),
            other => Param::Int64(other.as_i64()?),
        };
        param.is_bindable().then(|| self.bind(param))
    }
}

/// Whether `literal` has the type that Spark gives a column of `kind`.
fn matches_kind(kind: &Kind, literal: &Literal) -> bool {
    use Literal as L;
    match kind {
        Kind::Bool => matches!(literal, L::Boolean(_)),
        Kind::Int16 | Kind::Int32 | Kind::Int64 => {
            matches!(
                literal,
                L::Int8(_) | L::Int16(_) | L::Int32(_) | L::Int64(_)
            )
        }
        Kind::Float32 => matches!(literal, L::Float32(_)),
        Kind::Float64 => matches!(literal, L::Float64(_)),
        Kind::Decimal { exact: true, .. } => matches!(literal, L::Decimal128 { .. }),
        Kind::Text { padded: false } => matches!(literal, L::Utf8(_)),
        Kind::Bytes => matches!(literal, L::Binary(_)),
        Kind::Date => matches!(literal, L::Date32(_)),
        Kind::Timestamp => matches!(literal, L::TimestampNtz(_)),
        Kind::TimestampTz => matches!(literal, L::Timestamp(_)),
        Kind::Decimal { exact: false, .. } | Kind::Text { padded: true } | Kind::List(_) => false,
    }
}

/// `a op b` as `b op' a`.
fn flip(op: &str) -> &str {
    match op {
        "<" => ">",
        "<=" => ">=",
        ">" => "<",
        ">=" => "<=",
        other => other,
    }
}

/// The text of `unscaled / 10^scale`.
fn decimal_text(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (integer, fraction) = digits.split_at(digits.len() - scale);
    format!("{sign}{integer}.{fraction}")
}

#[cfg(test)]
mod tests {
    use spark_datasource::filters::col;

    use super::*;

    fn columns() -> Vec<ColumnInfo> {
        let column = |name: &str, kind| ColumnInfo {
            name: name.into(),
            kind,
        };
        vec![
            column("id", Kind::Int64),
            column("name", Kind::Text { padded: false }),
            column("code", Kind::Text { padded: true }),
            column("x", Kind::Float64),
        ]
    }

    #[test]
    fn a_comparison_binds_its_value() {
        let columns = columns();
        let mut condition = Condition::new(&columns, true);
        let sql = condition.filter(&Filter::Gt(10i64.into(), col("id")));
        assert_eq!(
            sql.as_deref(),
            Some("(\"id\" < (SELECT current_setting('sparkds.p1')::int8))")
        );
        assert_eq!(condition.params, [Param::Int64(10)]);
        assert_eq!(
            bind_statement(&condition.params),
            "SELECT set_config('sparkds.p1', $1::int8::text, false)"
        );
    }

    #[test]
    fn strings_compare_in_byte_order_and_char_columns_are_left_to_spark() {
        let columns = columns();
        let mut condition = Condition::new(&columns, true);
        let sql = condition.filter(&Filter::Lt(col("name"), "b".into()));
        assert_eq!(
            sql.as_deref(),
            Some("(\"name\" COLLATE \"C\" < (SELECT current_setting('sparkds.p1')::text))")
        );
        assert_eq!(condition.filter(&Filter::Eq(col("code"), "b".into())), None);
        assert_eq!(
            Condition::new(&columns, false).filter(&Filter::Eq(col("name"), "b".into())),
            None
        );
    }

    #[test]
    fn a_literal_of_another_type_is_left_to_spark() {
        let columns = columns();
        let mut condition = Condition::new(&columns, true);
        assert_eq!(condition.filter(&Filter::Eq(col("x"), 1.0f32.into())), None);
        assert_eq!(condition.filter(&Filter::Eq(col("id"), col("id"))), None);
    }

    #[test]
    fn decimals_are_written_with_their_scale() {
        assert_eq!(decimal_text(-12345, 2), "-123.45");
        assert_eq!(decimal_text(5, 3), "0.005");
        assert_eq!(decimal_text(7, 0), "7");
    }
}
