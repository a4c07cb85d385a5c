//! The SQL of a read, on the kit's `WHERE` (`spark_datasource::kit::sql`): identifiers quoted,
//! and the values of pushed filters and partition bounds either written as constants whose
//! text is exact (integers, booleans, decimals, dates, timestamps: `inline`) or bound, never
//! written into the text as a string that an escape could change.
//! What is PostgreSQL's own here: how values reach a COPY, and which comparisons it evaluates
//! as Spark does (`exact`).
//!
//! `COPY (SELECT ...) TO STDOUT` takes no parameters (PostgreSQL plans COPY's query without
//! a parameter list), so a read binds each other value (texts, bytes, floating-point numbers)
//! with `$n` to `set_config('sparkds.p<n>', ...)` in the same session, and the query's
//! placeholder reads it back once, as an initplan: `(SELECT current_setting('sparkds.p<n>')::
//! <type>)`. The value crosses as a typed binary parameter and is rendered to text by the
//! server itself, whose renderings of these types read back exactly (`extra_float_digits=3`,
//! hex bytea: see `connect.rs`).

use std::error::Error as StdError;

use bytes::BytesMut;
use serde::{Deserialize, Serialize};
use spark_datasource::filters::Literal;
use spark_datasource::kit::sql::{Dialect, Op, Query, Term};
use tokio_postgres::types::{IsNull, ToSql, Type};

use super::time::{date_literal, date_to_postgres, timestamp_literal, timestamp_to_postgres};
use super::types::Kind;

/// The values that one read binds or writes as constants, at most: each bound one is a column
/// of the statement that binds them, where PostgreSQL allows 1,664 (`MaxTupleAttributeNumber`).
/// A filter past it is left to Spark.
pub const MAX_PARAMS: usize = 1_600;

/// `name` as a quoted identifier.
pub fn quote(name: &str) -> String {
    Dialect::PostgreSql.ident(name)
}

/// A statement of a read, whose placeholders read back what [`Bindings`] binds.
pub fn query() -> Query {
    Query::new(Dialect::PostgreSql).with_placeholders(placeholder)
}

/// The `n`th value of a read, read back as its type: a NULL is written as one, of its type, and
/// never bound.
fn placeholder(n: usize, value: &Literal) -> String {
    let ty = match value {
        Literal::Decimal128 { .. } => "numeric",
        other => bound_as(other),
    };
    match value {
        Literal::Null => "NULL".to_string(),
        _ if value.is_null() => format!("NULL::{ty}"),
        _ => inline(value)
            .unwrap_or_else(|| format!("(SELECT current_setting('sparkds.p{n}')::{ty})")),
    }
}

/// A value written into the statement as a constant of its type, where its text is exact
/// and holds no character that a string literal escapes: integers, booleans, decimals, dates
/// and timestamps. The planner then knows the value: bound (a subquery on a setting, once per
/// statement), a partition's bounds read as unknown, and a quarter of a table was planned as
/// 15,000 rows, in parallel workers whose hand-over cost more than the scan. Texts, bytes and
/// floating-point values are bound.
fn inline(value: &Literal) -> Option<String> {
    match value {
        Literal::Boolean(Some(v)) => Some(v.to_string()),
        Literal::Decimal128 {
            value: Some(v),
            scale,
            ..
        } => Some(format!("'{}'::numeric", decimal_text(*v, *scale))),
        Literal::Date32(Some(days)) => date_literal(*days),
        Literal::Timestamp(Some(micros)) => timestamp_literal(*micros, true),
        Literal::TimestampNtz(Some(micros)) => timestamp_literal(*micros, false),
        Literal::Int8(_) | Literal::Int16(_) | Literal::Int32(_) | Literal::Int64(_) => {
            value.as_i64().map(|v| format!("'{v}'::int8"))
        }
        _ => None,
    }
}

/// The type of a literal's parameter, in `$n::<type>` (a decimal crosses as its text).
fn bound_as(value: &Literal) -> &'static str {
    match value {
        Literal::Boolean(_) => "bool",
        Literal::Float32(_) => "float4",
        Literal::Float64(_) => "float8",
        Literal::Utf8(_) | Literal::Decimal128 { .. } => "text",
        Literal::Binary(_) => "bytea",
        Literal::Date32(_) => "date",
        Literal::Timestamp(_) => "timestamptz",
        Literal::TimestampNtz(_) => "timestamp",
        _ => "int8",
    }
}

/// Whether PostgreSQL holds the value: a date or a timestamp past its range cannot be bound
/// (shifted to its epoch, it would be another value, or fail the statement), nor a text with
/// a NUL character.
pub fn is_bindable(value: &Literal) -> bool {
    match value {
        Literal::Date32(Some(days)) => date_to_postgres(*days).is_some(),
        Literal::Timestamp(Some(micros)) | Literal::TimestampNtz(Some(micros)) => {
            timestamp_to_postgres(*micros).is_some()
        }
        Literal::Utf8(Some(text)) => !text.contains('\0'),
        _ => true,
    }
}

/// A value that a read binds, in the binary form of its type (`bound_as`).
#[derive(Debug)]
pub struct Param(Literal);

/// What binding a value that `is_bindable` refuses, or a NULL, says; `exact` refuses them, and
/// NULLs are not bound.
const UNBINDABLE: &str = "a NULL, or a date or timestamp outside PostgreSQL's range";

impl ToSql for Param {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match &self.0 {
            Literal::Boolean(Some(v)) => out.extend_from_slice(&[u8::from(*v)]),
            Literal::Float32(Some(v)) => out.extend_from_slice(&v.to_be_bytes()),
            Literal::Float64(Some(v)) => out.extend_from_slice(&v.to_be_bytes()),
            Literal::Decimal128 {
                value: Some(v),
                scale,
                ..
            } => out.extend_from_slice(decimal_text(*v, *scale).as_bytes()),
            Literal::Utf8(Some(v)) => out.extend_from_slice(v.as_bytes()),
            Literal::Binary(Some(v)) => out.extend_from_slice(v),
            Literal::Date32(Some(days)) => {
                let days = date_to_postgres(*days).ok_or(UNBINDABLE)?;
                out.extend_from_slice(&days.to_be_bytes())
            }
            Literal::Timestamp(Some(micros)) | Literal::TimestampNtz(Some(micros)) => {
                let micros = timestamp_to_postgres(*micros).ok_or(UNBINDABLE)?;
                out.extend_from_slice(&micros.to_be_bytes())
            }
            other => out.extend_from_slice(&other.as_i64().ok_or(UNBINDABLE)?.to_be_bytes()),
        }
        Ok(IsNull::No)
    }

    // The SQL casts each parameter to the type its literal encodes (`bound_as`).
    fn accepts(_ty: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// What a read binds before its COPY: the values of its query (NULLs are written, not bound),
/// and the session's time zone when a `timestamp` reads as an instant.
#[derive(Debug, Default)]
pub struct Bindings {
    /// The statement: `SELECT set_config('sparkds.p1', $1::int8::text, false), ...`.
    pub statement: String,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// The time zone, bound as text.
    pub zone: Option<String>,
}

impl Bindings {
    /// The bindings of `values`, the parameters of a query from [`query`], and of `zone`.
    pub fn new(values: &[Literal], zone: Option<String>) -> Bindings {
        let mut settings = Vec::new();
        let mut params = Vec::new();
        let bound = |value: &Literal| !value.is_null() && inline(value).is_none();
        for (i, value) in values.iter().enumerate().filter(|(_, v)| bound(v)) {
            params.push(Param(value.clone()));
            let (n, ty) = (params.len(), bound_as(value));
            let setting = format!("set_config('sparkds.p{}', ${n}::{ty}::text, false)", i + 1);
            settings.push(setting);
        }
        if zone.is_some() {
            let n = params.len() + 1;
            settings.push(format!("set_config('TimeZone', ${n}::text, false)"));
        }
        Bindings {
            statement: format!("SELECT {}", settings.join(", ")),
            params,
            zone,
        }
    }

    /// Whether there is anything to bind.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty() && self.zone.is_none()
    }

    /// The parameters of the statement.
    pub fn values(&self) -> Vec<&(dyn ToSql + Sync)> {
        let params = self.params.iter().map(|p| p as &(dyn ToSql + Sync));
        params.chain(self.zone.iter().map(|z| z as _)).collect()
    }
}

/// A column of the read: its name in PostgreSQL, its kind, and whether it may be NULL.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    pub name: String,
    pub kind: Kind,
    pub nullable: bool,
}

// ANCHOR: exact
/// Whether PostgreSQL evaluates `term` as Spark does, on every row, with the kit's SQL (the
/// kit writes three-valued logic, `COLLATE "C"` and escaped `LIKE` patterns):
/// - `IS [NOT] NULL` on any column;
/// - a literal of the column's Spark type: integers, `real` and `double precision` (NaN equals
///   NaN and sorts above every number in both, and -0 equals 0), `numeric(p,s)` (exact; not
///   an unconstrained `numeric`, whose values a read rounds), booleans, dates, timestamps (a
///   `timestamp` read as an instant compares in the session's time zone, which made it one),
///   `bytea` (unsigned bytes in both);
/// - `text` and `varchar`, whose byte order under `COLLATE "C"` is Spark's order of UTF-8
///   strings only when the database is UTF-8; `startsWith`, `endsWith`, `contains` on them.
///   Not `char(n)`: PostgreSQL compares it without its trailing spaces, Spark with them; nor
///   the types read as their text (`uuid` does not compare as its text does);
/// - a value that PostgreSQL holds: no NUL in a text, no date past its range.
///
/// Arrays, and two columns, are left to Spark.
pub fn exact(columns: &[ColumnInfo], utf8: bool, term: &Term) -> bool {
    let Some(column) = columns.iter().find(|c| c.name == term.column) else {
        return false;
    };
    let Some(literal) = term.literal else {
        return true;
    };
    let pattern = matches!(term.op, Op::StartsWith | Op::EndsWith | Op::Contains);
    let text = column.kind == Kind::Text { padded: false };
    if (pattern && !text) || (text && !utf8) {
        return false;
    }
    matches_kind(&column.kind, literal) && is_bindable(literal)
}
// ANCHOR_END: exact

/// Whether `literal` has the type that Spark gives a column of `kind` (an untyped NULL has
/// every type), on the kinds whose comparisons are Spark's.
fn matches_kind(kind: &Kind, literal: &Literal) -> bool {
    use Literal as L;
    let comparable = !matches!(
        kind,
        Kind::Decimal { exact: false, .. }
            | Kind::Text { padded: true }
            | Kind::List(_)
            | Kind::AsText(_)
    );
    if let L::Null = literal {
        return comparable;
    }
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
        Kind::TimestampTz | Kind::LocalTimestamp => matches!(literal, L::Timestamp(_)),
        _ => false,
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
    use spark_datasource::filters::{col, Filter, Value};
    use spark_datasource::kit::sql::accept;

    use super::*;

    fn columns() -> Vec<ColumnInfo> {
        let column = |name: &str, kind| ColumnInfo {
            name: name.into(),
            kind,
            nullable: true,
        };
        vec![
            column("id", Kind::Int64),
            column("name", Kind::Text { padded: false }),
            column("code", Kind::Text { padded: true }),
            column("x", Kind::Float64),
            column("u", Kind::AsText("uuid".into())),
            column("at", Kind::LocalTimestamp),
        ]
    }

    fn render(filters: &[Filter], utf8: bool) -> (Vec<bool>, Query) {
        let columns = columns();
        let exact = |t: &Term| exact(&columns, utf8, t);
        let accepted = accept(filters, Dialect::PostgreSql, &exact);
        let mut query = query();
        query.and_filters(filters, &accepted, &exact);
        (accepted, query)
    }

    #[test]
    fn a_text_reads_its_value_back_from_the_session_and_an_integer_is_a_constant() {
        let filters = [
            Filter::Gt(10i64.into(), col("id")),
            Filter::Lt(col("name"), "b'\\".into()),
        ];
        let (accepted, query) = render(&filters, true);
        assert_eq!(accepted, [true, true]);
        assert_eq!(
            query.sql,
            " WHERE (\"id\" < '10'::int8) AND \
             (\"name\" COLLATE \"C\" < (SELECT current_setting('sparkds.p2')::text))"
        );
        let bindings = Bindings::new(&query.params, None);
        assert_eq!(bindings.params.len(), 1);
        assert_eq!(
            bindings.statement,
            "SELECT set_config('sparkds.p2', $1::text::text, false)"
        );
    }

    #[test]
    fn values_whose_text_is_exact_are_constants_of_their_type() {
        let cases = [
            (
                Literal::Int64(Some(i64::MIN)),
                "'-9223372036854775808'::int8",
            ),
            (Literal::Int32(Some(-7)), "'-7'::int8"),
            (Literal::Boolean(Some(false)), "false"),
            (
                Literal::Decimal128 {
                    value: Some(-12345),
                    precision: 10,
                    scale: 3,
                },
                "'-12.345'::numeric",
            ),
            (Literal::Date32(Some(0)), "'1970-01-01'::date"),
            (Literal::Date32(Some(-719_163)), "'0001-12-31 BC'::date"),
            (
                Literal::TimestampNtz(Some(1_704_103_200_000_001)),
                "'2024-01-01 10:00:00.000001'::timestamp",
            ),
            (
                Literal::Timestamp(Some(-62_135_596_800_000_000 - 1)),
                "'0001-12-31 23:59:59.999999+00 BC'::timestamptz",
            ),
        ];
        for (literal, constant) in cases {
            assert_eq!(inline(&literal).as_deref(), Some(constant), "{literal:?}");
        }
        // Past PostgreSQL's range, a date is bound (and then refused by `is_bindable`).
        assert_eq!(inline(&Literal::Date32(Some(i32::MIN))), None);
        for bound in [
            Literal::Utf8(Some("x".into())),
            Literal::Binary(Some(vec![1])),
            Literal::Float64(Some(0.1)),
        ] {
            assert_eq!(inline(&bound), None, "{bound:?}");
        }
    }

    #[test]
    fn nulls_are_written_and_the_others_bound_in_order_with_the_time_zone() {
        let filter = Filter::In(
            col("name"),
            vec![
                Value::Literal(Literal::Utf8(None)),
                "c".into(),
                Value::Literal(Literal::Null),
            ],
        );
        let (_, query) = render(&[filter], true);
        assert_eq!(
            query.sql,
            " WHERE (\"name\" COLLATE \"C\" IN (NULL::text, \
             (SELECT current_setting('sparkds.p2')::text), NULL))"
        );
        let bindings = Bindings::new(&query.params, Some("Europe/Paris".into()));
        assert_eq!(
            bindings.statement,
            "SELECT set_config('sparkds.p2', $1::text::text, false), \
             set_config('TimeZone', $2::text, false)"
        );
        assert_eq!(bindings.values().len(), 2);
    }

    #[test]
    fn strings_compare_in_byte_order_and_others_are_left_to_spark() {
        let (accepted, query) = render(
            &[
                Filter::Lt(col("name"), "b".into()),
                Filter::Eq(col("code"), "b".into()),
                Filter::Eq(col("u"), "a0ee".into()),
                Filter::StartsWith(col("u"), "a0".into()),
                Filter::Eq(col("name"), "nul\0".into()),
            ],
            true,
        );
        assert_eq!(accepted, [true, false, false, false, false]);
        assert_eq!(
            query.sql,
            " WHERE (\"name\" COLLATE \"C\" < (SELECT current_setting('sparkds.p1')::text))"
        );
        let (accepted, _) = render(&[Filter::Eq(col("name"), "b".into())], false);
        assert_eq!(accepted, [false]);
    }

    #[test]
    fn a_literal_of_another_type_is_left_to_spark() {
        let instant = |l| Filter::Gt(col("at"), Value::Literal(l));
        let (accepted, _) = render(
            &[
                Filter::Eq(col("x"), 1.0f32.into()),
                Filter::Eq(col("id"), col("id")),
                instant(Literal::Timestamp(Some(0))),
                instant(Literal::TimestampNtz(Some(0))),
                instant(Literal::Timestamp(Some(i64::MIN))),
            ],
            true,
        );
        assert_eq!(accepted, [false, false, true, false, false]);
    }

    #[test]
    fn decimals_are_written_with_their_scale() {
        assert_eq!(decimal_text(-12345, 2), "-123.45");
        assert_eq!(decimal_text(5, 3), "0.005");
        assert_eq!(decimal_text(7, 0), "7");
    }
}
