//! Pushed filters as query parameters: a connector says, rule by rule, which comparison on
//! which column the API evaluates as Spark does, and as which parameter; a filter that a rule
//! takes goes to the API, every other one stays with Spark. `literal op column` is read as
//! `column op' literal` (`5 < id` is `id > 5`).
//!
//! ```
//! use spark_datasource::filters::{col, Filter, Literal, Value};
//! use spark_datasource_http::params::{Kind, Op, Params};
//!
//! let params = Params::new()
//!     .rule("state", Op::Eq, "state", Kind::String)
//!     .rule("updated_at", Op::Ge, "since", Kind::Timestamp);
//! let open = Value::Literal(Literal::Utf8(Some("open".into())));
//! let filters = [
//!     Filter::Eq(col("state"), open),
//!     Filter::Gt(col("id"), Value::Literal(Literal::Int64(Some(3)))),
//! ];
//! let (accepted, query) = params.apply(&filters);
//! assert_eq!(accepted, [true, false]);
//! assert_eq!(query, [("state".to_string(), "open".to_string())]);
//! ```

use serde::{Deserialize, Serialize};
use spark_datasource::filters::{Filter, Literal, Value};

/// A comparison that a parameter of the API makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
    /// `IN (...)`, the values joined by commas.
    In,
}

/// The type of a parameter's value, which the literal must have exactly, and how it is
/// written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// A `string` literal, as it is.
    String,
    /// An `int` or `bigint` literal, in decimal.
    Integer,
    /// A `boolean` literal, `true` or `false`.
    Boolean,
    /// A `date` literal, `2024-01-31`.
    Date,
    /// A `timestamp` literal, `2024-01-31T12:00:00.000000Z`.
    Timestamp,
    /// A `timestamp` literal of whole seconds, `2024-01-31T12:00:00Z`, for an API that reads
    /// seconds only (GitHub's `since`): a literal with a fraction stays with Spark, which the
    /// API would compare without it.
    TimestampSeconds,
}

/// One column, comparison and parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Rule {
    column: String,
    op: Op,
    param: String,
    kind: Kind,
}

/// The rules of an API.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    rules: Vec<Rule>,
}

impl Params {
    /// No rule: every filter stays with Spark.
    pub fn new() -> Params {
        Params::default()
    }

    /// The API evaluates `column op <literal of kind>` as Spark does, with `?param=<literal>`.
    pub fn rule(mut self, column: &str, op: Op, param: &str, kind: Kind) -> Params {
        self.rules.push(Rule {
            column: column.to_string(),
            op,
            param: param.to_string(),
            kind,
        });
        self
    }

    /// For each filter, whether a rule took it, and the query parameters of those taken. A
    /// parameter is taken once: a second filter for it stays with Spark. A NULL literal is
    /// never taken (Spark's comparison with NULL keeps no row; an API's rarely agrees).
    pub fn apply(&self, filters: &[Filter]) -> (Vec<bool>, Vec<(String, String)>) {
        let mut query: Vec<(String, String)> = Vec::new();
        let accepted = filters
            .iter()
            .map(|filter| {
                let Some((param, value)) = self.take(filter) else {
                    return false;
                };
                if query.iter().any(|(p, _)| *p == param) {
                    return false;
                }
                query.push((param, value));
                true
            })
            .collect();
        (accepted, query)
    }

    fn take(&self, filter: &Filter) -> Option<(String, String)> {
        let (column, op, literals) = normalized(filter)?;
        let rule = self
            .rules
            .iter()
            .find(|r| r.op == op && column.is(&r.column))?;
        let values: Vec<String> = literals
            .iter()
            .map(|literal| format(literal, rule.kind))
            .collect::<Option<_>>()?;
        Some((rule.param.clone(), values.join(",")))
    }
}

/// `column op literal(s)`, whichever side the column is on.
fn normalized(filter: &Filter) -> Option<(&spark_datasource::filters::Column, Op, Vec<&Literal>)> {
    use Value::{Column, Literal as Lit};
    let (left, right, op, flipped) = match filter {
        Filter::Eq(a, b) => (a, b, Op::Eq, Op::Eq),
        Filter::Lt(a, b) => (a, b, Op::Lt, Op::Gt),
        Filter::Le(a, b) => (a, b, Op::Le, Op::Ge),
        Filter::Gt(a, b) => (a, b, Op::Gt, Op::Lt),
        Filter::Ge(a, b) => (a, b, Op::Ge, Op::Le),
        Filter::In(Column(column), values) => {
            let literals = values
                .iter()
                .map(|v| match v {
                    Lit(literal) => Some(literal),
                    Column(_) => None,
                })
                .collect::<Option<Vec<_>>>()?;
            return (!literals.is_empty()).then_some((column, Op::In, literals));
        }
        _ => return None,
    };
    match (left, right) {
        (Column(column), Lit(literal)) => Some((column, op, vec![literal])),
        (Lit(literal), Column(column)) => Some((column, flipped, vec![literal])),
        _ => None,
    }
}

/// The literal as a parameter of `kind`; `None` when it is NULL or of another type.
fn format(literal: &Literal, kind: Kind) -> Option<String> {
    Some(match (kind, literal) {
        (Kind::String, Literal::Utf8(Some(s))) => s.clone(),
        (Kind::Integer, Literal::Int32(Some(n))) => n.to_string(),
        (Kind::Integer, Literal::Int64(Some(n))) => n.to_string(),
        (Kind::Boolean, Literal::Boolean(Some(b))) => b.to_string(),
        (Kind::Date, Literal::Date32(Some(days))) => civil(i64::from(*days), None),
        (Kind::Timestamp, Literal::Timestamp(Some(micros))) => {
            let day = 86_400_000_000i64;
            civil(micros.div_euclid(day), Some(micros.rem_euclid(day)))
        }
        (Kind::TimestampSeconds, Literal::Timestamp(Some(micros))) if micros % 1_000_000 == 0 => {
            let day = 86_400_000_000i64;
            let text = civil(micros.div_euclid(day), Some(micros.rem_euclid(day)));
            // `...:ss.000000Z` to `...:ssZ`.
            format!("{}Z", &text[..text.len() - 8])
        }
        _ => return None,
    })
}

/// `yyyy-mm-dd`, or `yyyy-mm-ddThh:mm:ss.ffffffZ` with the time of day in microseconds.
fn civil(days: i64, micros: Option<i64>) -> String {
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let date = format!("{year:04}-{month:02}-{day:02}");
    match micros {
        None => date,
        Some(m) => {
            let s = m / 1_000_000;
            format!(
                "{date}T{:02}:{:02}:{:02}.{:06}Z",
                s / 3600,
                s / 60 % 60,
                s % 60,
                m % 1_000_000
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use spark_datasource::filters::col;

    use super::*;

    fn lit(literal: Literal) -> Value {
        Value::Literal(literal)
    }

    fn params() -> Params {
        Params::new()
            .rule("state", Op::Eq, "state", Kind::String)
            .rule("number", Op::In, "numbers", Kind::Integer)
            .rule("updated_at", Op::Gt, "since", Kind::Timestamp)
            .rule("day", Op::Eq, "day", Kind::Date)
    }

    #[test]
    fn a_literal_on_the_left_is_read_as_on_the_right() {
        let at = || lit(Literal::Timestamp(Some(1_706_702_400_000_001)));
        // `ts < updated_at` is `updated_at > ts`.
        let (accepted, query) = params().apply(&[Filter::Lt(at(), col("updated_at"))]);
        assert_eq!(accepted, [true]);
        assert_eq!(
            query,
            [("since".into(), "2024-01-31T12:00:00.000001Z".into())]
        );
        let (accepted, _) = params().apply(&[Filter::Gt(at(), col("updated_at"))]);
        assert_eq!(accepted, [false]);
    }

    #[test]
    fn whole_seconds_only_for_an_api_of_seconds() {
        let seconds = Params::new().rule("at", Op::Ge, "since", Kind::TimestampSeconds);
        let at = |micros| Filter::Ge(col("at"), lit(Literal::Timestamp(Some(micros))));
        let (accepted, query) =
            seconds.apply(&[at(1_706_702_400_000_000), at(1_706_702_400_500_000)]);
        assert_eq!(accepted, [true, false]);
        assert_eq!(query, [("since".into(), "2024-01-31T12:00:00Z".into())]);
    }

    #[test]
    fn only_the_rule_s_type_and_one_filter_a_parameter_are_taken() {
        let open = || Filter::Eq(col("state"), lit(Literal::Utf8(Some("open".into()))));
        let filters = [
            open(),
            open(),
            Filter::Eq(col("state"), lit(Literal::Int64(Some(1)))),
            Filter::Eq(col("state"), lit(Literal::Utf8(None))),
            Filter::In(
                col("number"),
                vec![lit(Literal::Int32(Some(1))), lit(Literal::Int64(Some(7)))],
            ),
            Filter::Eq(col("day"), lit(Literal::Date32(Some(-1)))),
        ];
        let (accepted, query) = params().apply(&filters);
        assert_eq!(accepted, [true, false, false, false, true, true]);
        assert_eq!(
            query,
            [
                ("state".to_string(), "open".to_string()),
                ("numbers".to_string(), "1,7".to_string()),
                ("day".to_string(), "1969-12-31".to_string()),
            ]
        );
    }
}
