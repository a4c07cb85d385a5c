//! Filter pushdown, the extension of `spark_datasource_filters.h`: `spark_ds_filters_init` and
//! the checks of its table (`SparkDsFilterTable` of `spark-datasource-abi`, version 1
//! (rule 29), and the check that every row a reader returns satisfies the filters it accepted
//! (rule 31). Calling `push_filters` and checking its answer (rule 30) is `calls::push_filters`:
//! this module is below the library and the calls, which both use it.
//!
//! The extension lives outside the version-1 table of `spark_datasource.h`: a library opts in by
//! exporting `spark_ds_filters_init`, and a library without it loads and runs as before. The
//! predicates are the [`Filter`]s of `spark-datasource-core` (the SDK's), sent in the header's
//! binary encoding ([`encode`]).

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Fields};

use spark_datasource_abi::filters::{
    PushFilters, SparkDsFilterTable, SparkDsFiltersInitFunction, SPARK_DS_FILTERS_VERSION,
};
use spark_datasource_abi::v1::SparkDsHost;

use crate::error::{Error, Result, Violation};

/// The predicates and their encoding (`spark-datasource-core`, the SDK's), and their
/// evaluation with SQL semantics (`spark-datasource-eval`), so that a host's users build filters
/// with the same types.
pub use spark_datasource_core::filters::{col, decode, encode, Column, Filter, Literal, Value};
pub use spark_datasource_eval::{evaluate, filter_batch};

/// The rule of the extension's table: `spark_ds_filters_init` succeeds with a table whose size
/// and version are those of the header.
pub const RULE_TABLE: u32 = 29;
/// The rule of `push_filters`'s answer: the sink called once, with one byte, 0 or 1, per filter.
pub const RULE_ANSWER: u32 = 30;
/// The rule of the rows: a returned row satisfies every accepted filter.
pub const RULE_ROWS: u32 = 31;

/// `SPARK_DS_FILTERS_VERSION`: the version of the table that this host reads.
pub const FILTERS_VERSION: i32 = SPARK_DS_FILTERS_VERSION;

/// The version-1 size of the table: what a table of version 1 or later covers.
const TABLE_SIZE: usize = std::mem::size_of::<SparkDsFilterTable>();

/// What the host keeps of a library's filter table.
#[derive(Clone, Copy)]
pub(crate) struct FilterTable {
    /// NULL (`None`) means that the library pushes no filter after all.
    pub push_filters: Option<PushFilters>,
}

/// Calls `spark_ds_filters_init` once with `host` and reads its table (rule 29).
///
/// # Safety
///
/// `init` is the library's `spark_ds_filters_init`; `host` is the host that `spark_ds_init`
/// received, valid for as long as the library is loaded.
pub(crate) unsafe fn init(
    init: SparkDsFiltersInitFunction,
    host: *const SparkDsHost,
) -> Result<FilterTable> {
    const FUNCTION: &str = "spark_ds_filters_init";
    let mut table: *const SparkDsFilterTable = std::ptr::null();
    crate::isolate::breadcrumb(FUNCTION);
    // SAFETY: `host` lives as long as the library (the caller's duty); `table` is valid for
    // writes.
    let rc = unsafe { init(host, &mut table) };
    if rc != 0 {
        return Err(Violation::new(
            FUNCTION,
            RULE_TABLE,
            format!(
                "returned {rc}; it must return 0 and a table, or the library must not export it"
            ),
        )
        .into());
    }
    if table.is_null() {
        return Err(Violation::new(
            FUNCTION,
            RULE_TABLE,
            "returned 0 but a NULL table; write the address of the table to `*table`",
        )
        .into());
    }
    // SAFETY: a non-NULL table starts with its size and its version in every version of the
    // header; the rest is read only once `size` says it is there.
    let (size, version) = unsafe { ((*table).size, (*table).version) };
    let word = std::mem::size_of::<usize>() as i64;
    if size < TABLE_SIZE as i64 || size % word != 0 {
        return Err(Violation::new(
            FUNCTION,
            RULE_TABLE,
            format!(
                "the table's size is {size}; it must be a multiple of {word} and at least {TABLE_SIZE}, sizeof(SparkDsFilterTable) of version 1"
            ),
        )
        .into());
    }
    if version < FILTERS_VERSION {
        return Err(Violation::new(
            FUNCTION,
            RULE_TABLE,
            format!(
                "the table declares version {version}; set it to SPARK_DS_FILTERS_VERSION ({FILTERS_VERSION})"
            ),
        )
        .into());
    }
    // SAFETY: `size` covers the version-1 table, so `push_filters` is readable; a later version
    // only appends fields, which this host does not read.
    let push_filters = unsafe { (*table).push_filters };
    Ok(FilterTable { push_filters })
}

/// Encodes `filters` for `push_filters`.
///
/// # Errors
///
/// A filter that the encoding cannot hold (a string longer than 4 GiB), as a usage error.
pub(crate) fn encode_all(filters: &[Filter]) -> Result<Vec<u8>> {
    encode(filters).map_err(|e| Error::usage(format!("cannot encode the filters: {e}")))
}

/// Rule 31 on one batch that `read` returned: every accepted filter is TRUE on every row. A
/// filter on a column the batch does not have (pruned after it was accepted) cannot be checked
/// here, and is skipped. Errors continue "batch N, ...".
pub(crate) fn check_batch(
    accepted: &[Filter],
    batch: &RecordBatch,
    index: usize,
) -> std::result::Result<(), (u32, String)> {
    for filter in accepted {
        if !filter
            .columns()
            .iter()
            .all(|c| has_column(batch.schema().fields(), c))
        {
            continue;
        }
        let mask = evaluate(filter, batch).map_err(|e| {
            (
                RULE_ROWS,
                format!(
                    "batch {index}: the accepted filter `{}` cannot be evaluated on it: {e}",
                    sql(filter)
                ),
            )
        })?;
        // Counted a word at a time: the row is looked for only in a batch that has one.
        if mask.true_count() == mask.len() {
            continue;
        }
        if let Some(row) = (0..mask.len()).find(|&r| !mask.value(r)) {
            return Err((
                RULE_ROWS,
                format!(
                    "batch {index}, row {row}: the accepted filter `{}` is not TRUE; return only rows where every accepted filter is TRUE, or answer 0 for it",
                    sql(filter)
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `fields` has the column at `column`'s path (through structs for nested fields).
pub fn has_column(fields: &Fields, column: &Column) -> bool {
    let mut fields = fields.clone();
    let mut path = column.path().iter().peekable();
    while let Some(name) = path.next() {
        let Some(field) = fields.iter().find(|f| f.name() == name) else {
            return false;
        };
        if path.peek().is_none() {
            return true;
        }
        match field.data_type() {
            DataType::Struct(children) => fields = children.clone(),
            _ => return false,
        }
    }
    false
}

/// A predicate as Spark SQL writes it: `id > 10`, `name LIKE 'a%'` for STARTS_WITH,
/// `CAST('NaN' AS DOUBLE)` for a NaN. What `cargo sparkds show --where` takes back.
pub fn sql(filter: &Filter) -> String {
    let binary = |a: &Value, op: &str, b: &Value| format!("{} {op} {}", value(a), value(b));
    match filter {
        Filter::Eq(a, b) => binary(a, "=", b),
        Filter::NullSafeEq(a, b) => binary(a, "<=>", b),
        Filter::Lt(a, b) => binary(a, "<", b),
        Filter::Le(a, b) => binary(a, "<=", b),
        Filter::Gt(a, b) => binary(a, ">", b),
        Filter::Ge(a, b) => binary(a, ">=", b),
        Filter::In(a, list) => format!(
            "{} IN ({})",
            value(a),
            list.iter().map(value).collect::<Vec<_>>().join(", ")
        ),
        Filter::IsNull(a) => format!("{} IS NULL", value(a)),
        Filter::IsNotNull(a) => format!("{} IS NOT NULL", value(a)),
        Filter::And(p, q) => format!("({}) AND ({})", sql(p), sql(q)),
        Filter::Or(p, q) => format!("({}) OR ({})", sql(p), sql(q)),
        Filter::Not(p) => format!("NOT ({})", sql(p)),
        Filter::StartsWith(a, b) => like(a, b, false, true),
        Filter::EndsWith(a, b) => like(a, b, true, false),
        Filter::Contains(a, b) => like(a, b, true, true),
        Filter::AlwaysTrue => "TRUE".into(),
        Filter::AlwaysFalse => "FALSE".into(),
        Filter::Unsupported(bytes) => format!(
            "<a predicate of operator {} that this host does not know>",
            bytes.first().copied().unwrap_or_default()
        ),
    }
}

/// STARTS_WITH, ENDS_WITH or CONTAINS as a LIKE, when the pattern is a string literal without
/// LIKE's special characters; as the function otherwise.
fn like(a: &Value, b: &Value, before: bool, after: bool) -> String {
    if let Value::Literal(Literal::Utf8(Some(s))) = b {
        if !s.contains(['%', '_', '\\']) {
            let pattern = format!(
                "{}{s}{}",
                if before { "%" } else { "" },
                if after { "%" } else { "" }
            );
            return format!("{} LIKE {}", value(a), quote(&pattern));
        }
    }
    let name = match (before, after) {
        (false, true) => "startswith",
        (true, false) => "endswith",
        _ => "contains",
    };
    format!("{name}({}, {})", value(a), value(b))
}

fn value(v: &Value) -> String {
    match v {
        Value::Column(c) => c.to_string(),
        Value::Literal(l) => literal(l),
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A float literal: its shortest decimal form, or a cast of the text Spark reads as NaN, an
/// infinity or `-0.0`, which SQL has no literal for.
fn float(v: f64, shortest: String, ty: &str) -> String {
    if v.is_nan() {
        format!("CAST('NaN' AS {ty})")
    } else if v.is_infinite() {
        format!("CAST('{}Infinity' AS {ty})", if v < 0.0 { "-" } else { "" })
    } else if v == 0.0 && v.is_sign_negative() {
        format!("CAST('-0.0' AS {ty})")
    } else {
        shortest
    }
}

fn literal(l: &Literal) -> String {
    if l.is_null() {
        return "NULL".into();
    }
    match l {
        Literal::Boolean(Some(b)) => if *b { "TRUE" } else { "FALSE" }.into(),
        Literal::Float32(Some(v)) => float(f64::from(*v), format!("{v:?}"), "FLOAT"),
        Literal::Float64(Some(v)) => float(*v, format!("{v:?}"), "DOUBLE"),
        Literal::Decimal128 {
            value: Some(v),
            scale,
            ..
        } => decimal(*v, *scale),
        Literal::Utf8(Some(s)) => quote(s),
        Literal::Binary(Some(b)) => {
            format!(
                "X'{}'",
                b.iter().map(|x| format!("{x:02X}")).collect::<String>()
            )
        }
        Literal::Date32(Some(days)) => {
            match arrow_array::temporal_conversions::date32_to_datetime(*days) {
                Some(d) => format!("DATE '{}'", d.date()),
                None => format!("DATE_FROM_UNIX_DATE({days})"),
            }
        }
        Literal::Timestamp(Some(us)) | Literal::TimestampNtz(Some(us)) => {
            let ty = if matches!(l, Literal::Timestamp(_)) {
                "TIMESTAMP"
            } else {
                "TIMESTAMP_NTZ"
            };
            match arrow_array::temporal_conversions::timestamp_us_to_datetime(*us) {
                Some(t) => format!("{ty} '{t}'"),
                None => format!("TIMESTAMP_MICROS({us})"),
            }
        }
        other => other
            .as_i64()
            .map(|v| v.to_string())
            .unwrap_or_else(|| format!("{other:?}")),
    }
}

/// `value / 10^scale` in decimal notation, every digit of the scale written.
fn decimal(value: i128, scale: u8) -> String {
    let digits = value.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let sign = if value < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = digits.split_at(digits.len() - scale);
    format!("{sign}{int}.{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_read_as_spark_sql() {
        let f = Filter::Ge(col("id"), 3i64.into())
            .and(Filter::StartsWith(col("name"), "n1".into()).negate());
        assert_eq!(sql(&f), "(id >= 3) AND (NOT (name LIKE 'n1%'))");
        assert_eq!(
            sql(&Filter::In(
                col("x"),
                vec![
                    f64::NAN.into(),
                    (-0.0f64).into(),
                    1.5f64.into(),
                    Literal::Null.into()
                ]
            )),
            "x IN (CAST('NaN' AS DOUBLE), CAST('-0.0' AS DOUBLE), 1.5, NULL)"
        );
        let price = Literal::Decimal128 {
            value: Some(-1205),
            precision: 10,
            scale: 3,
        };
        assert_eq!(
            sql(&Filter::Lt(col("price"), price.into())),
            "price < -1.205"
        );
        assert_eq!(
            sql(&Filter::Eq(
                col("day"),
                Value::Literal(Literal::Date32(Some(19723)))
            )),
            "day = DATE '2024-01-01'"
        );
        assert_eq!(
            sql(&Filter::Gt(
                Value::Column(Column::nested(["a", "b c"])),
                Value::Literal(Literal::Timestamp(Some(1_704_067_200_000_001)))
            )),
            "a.`b c` > TIMESTAMP '2024-01-01 00:00:00.000001'"
        );
        assert_eq!(
            sql(&Filter::Contains(col("s"), "it's".into())),
            "s LIKE '%it''s%'"
        );
        assert_eq!(
            sql(&Filter::EndsWith(col("s"), "5%".into())),
            "endswith(s, '5%')"
        );
    }

    #[test]
    fn a_nested_column_is_found_through_its_structs() {
        use arrow_schema::Field;
        let fields = Fields::from(vec![
            Field::new("id", DataType::Int64, false),
            Field::new(
                "a",
                DataType::Struct(Fields::from(vec![Field::new("b", DataType::Utf8, true)])),
                true,
            ),
        ]);
        assert!(has_column(&fields, &Column::new("id")));
        assert!(has_column(&fields, &Column::nested(["a", "b"])));
        assert!(!has_column(&fields, &Column::nested(["a", "c"])));
        assert!(!has_column(&fields, &Column::nested(["id", "b"])));
        assert!(!has_column(&fields, &Column::new("name")));
    }
}
