//! The conjuncts on one integer column as bounds and a set: what a connector plans with when
//! its data is ordered or partitioned by that column.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::{Filter, Literal, Value};

/// The values of one integer column that a set of predicates keeps: the ids in
/// `[min, max]`, and, after an `=` or an `IN`, only those of a finite set. A row whose column
/// is NULL is never kept, since none of these predicates is TRUE on a NULL.
///
/// ```
/// use spark_datasource_core::filters::{col, Filter, IntegerFilter};
///
/// // WHERE id BETWEEN 10 AND 20 AND id IN (5, 12, 15) AND label = 'x'
/// let filters = [
///     Filter::Ge(col("id"), 10i64.into()),
///     Filter::Le(col("id"), 20i64.into()),
///     Filter::In(col("id"), vec![5i64.into(), 12i64.into(), 15i64.into()]),
///     Filter::Eq(col("label"), "x".into()),
/// ];
/// let (ids, accepted) = IntegerFilter::from_filters("id", &filters);
/// assert_eq!(accepted, [true, true, true, false]);
/// assert_eq!(ids.ranges(0, 100), [12..13, 15..16]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegerFilter {
    min: i64,
    max: i64,
    /// Sorted, without repeats, within `[min, max]`.
    values: Option<Vec<i64>>,
}

impl Default for IntegerFilter {
    fn default() -> Self {
        Self::all()
    }
}

impl IntegerFilter {
    /// Every value: no predicate yet.
    pub fn all() -> Self {
        IntegerFilter {
            min: i64::MIN,
            max: i64::MAX,
            values: None,
        }
    }

    /// No value: a predicate that is never TRUE.
    pub fn none() -> Self {
        IntegerFilter {
            min: 0,
            max: -1,
            values: None,
        }
    }

    /// Folds the conjuncts `filters` on the top-level column `column` into one filter, and says
    /// which of them it expresses exactly: the answers of `push_filters` for a reader that
    /// returns only the rows whose value the filter keeps.
    pub fn from_filters(column: &str, filters: &[Filter]) -> (IntegerFilter, Vec<bool>) {
        let mut result = IntegerFilter::all();
        let accepted = filters.iter().map(|f| result.accept(column, f)).collect();
        (result, accepted)
    }

    /// Narrows this filter by `filter` when it is exactly a condition on `column` (`=`, `<=>`
    /// with a value, `<`, `<=`, `>`, `>=` with an integer literal of any width on either side,
    /// `IN` of integer literals, `AND` of those, `ALWAYS_TRUE`, `ALWAYS_FALSE`), and returns
    /// whether it did; otherwise it is unchanged and returns `false`.
    pub fn accept(&mut self, column: &str, filter: &Filter) -> bool {
        match condition(column, filter) {
            Some(condition) => {
                *self = self.intersect(&condition);
                true
            }
            None => false,
        }
    }

    /// The smallest value kept (meaningless when [`IntegerFilter::is_empty`]).
    pub fn min(&self) -> i64 {
        self.min
    }

    /// The largest value kept (meaningless when [`IntegerFilter::is_empty`]).
    pub fn max(&self) -> i64 {
        self.max
    }

    /// The only values kept, sorted, after an `=` or `IN`; `None` for every value in
    /// `[min, max]`.
    pub fn values(&self) -> Option<&[i64]> {
        self.values.as_deref()
    }

    /// Whether no value is kept.
    pub fn is_empty(&self) -> bool {
        self.min > self.max || self.values.as_ref().is_some_and(Vec::is_empty)
    }

    /// Whether `value` is kept.
    pub fn contains(&self, value: i64) -> bool {
        (self.min..=self.max).contains(&value)
            && self
                .values
                .as_ref()
                .is_none_or(|values| values.binary_search(&value).is_ok())
    }

    /// The values kept among `[start, end)`, as sorted, disjoint, non-adjacent ranges: the
    /// reads of a connector whose rows are ordered by the column.
    pub fn ranges(&self, start: i64, end: i64) -> Vec<Range<i64>> {
        let low = start.max(self.min);
        // `max + 1` may not fit an i64: bound in i128 first.
        let high = i128::from(end).min(i128::from(self.max) + 1);
        if self.is_empty() || i128::from(low) >= high {
            return Vec::new();
        }
        let high = high as i64;
        let Some(values) = &self.values else {
            return std::iter::once(low..high).collect();
        };
        let mut ranges: Vec<Range<i64>> = Vec::new();
        for &v in values.iter().filter(|&&v| (low..high).contains(&v)) {
            match ranges.last_mut() {
                Some(last) if last.end == v => last.end = v + 1,
                _ => ranges.push(v..v + 1),
            }
        }
        ranges
    }

    fn intersect(&self, other: &IntegerFilter) -> IntegerFilter {
        let (min, max) = (self.min.max(other.min), self.max.min(other.max));
        if min > max {
            return IntegerFilter::none();
        }
        let values = match (&self.values, &other.values) {
            (None, None) => None,
            (Some(v), None) | (None, Some(v)) => Some(v.clone()),
            (Some(a), Some(b)) => Some(
                a.iter()
                    .filter(|v| b.binary_search(v).is_ok())
                    .copied()
                    .collect(),
            ),
        };
        let values = values.map(|v: Vec<i64>| {
            v.into_iter()
                .filter(|v| (min..=max).contains(v))
                .collect::<Vec<_>>()
        });
        match values {
            Some(values) if values.is_empty() => IntegerFilter::none(),
            values => IntegerFilter { min, max, values },
        }
    }

    fn range(min: i64, max: i64) -> IntegerFilter {
        if min > max {
            IntegerFilter::none()
        } else {
            IntegerFilter {
                min,
                max,
                values: None,
            }
        }
    }

    fn set(mut values: Vec<i64>) -> IntegerFilter {
        values.sort_unstable();
        values.dedup();
        match (values.first(), values.last()) {
            (Some(&min), Some(&max)) => IntegerFilter {
                min,
                max,
                values: Some(values),
            },
            _ => IntegerFilter::none(),
        }
    }
}

/// How a comparison reads once the column is on the left.
#[derive(Clone, Copy)]
enum Op {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    fn flip(self) -> Op {
        match self {
            Op::Eq => Op::Eq,
            Op::Lt => Op::Gt,
            Op::Le => Op::Ge,
            Op::Gt => Op::Lt,
            Op::Ge => Op::Le,
        }
    }
}

/// An integer literal: `Some(Some(v))`, a NULL: `Some(None)`, anything else: `None`.
fn integer(literal: &Literal) -> Option<Option<i64>> {
    match literal {
        Literal::Null
        | Literal::Int8(None)
        | Literal::Int16(None)
        | Literal::Int32(None)
        | Literal::Int64(None) => Some(None),
        _ => literal.as_i64().map(Some),
    }
}

/// The filter of `column op literal` or `literal op column`.
fn comparison(column: &str, op: Op, a: &Value, b: &Value) -> Option<IntegerFilter> {
    let (op, literal) = match (a, b) {
        (Value::Column(c), Value::Literal(l)) if c.is(column) => (op, l),
        (Value::Literal(l), Value::Column(c)) if c.is(column) => (op.flip(), l),
        _ => return None,
    };
    // A comparison with NULL is NULL: never TRUE.
    let Some(v) = integer(literal)? else {
        return Some(IntegerFilter::none());
    };
    Some(match op {
        Op::Eq => IntegerFilter::set(vec![v]),
        Op::Lt => v
            .checked_sub(1)
            .map_or_else(IntegerFilter::none, |m| IntegerFilter::range(i64::MIN, m)),
        Op::Le => IntegerFilter::range(i64::MIN, v),
        Op::Gt => v
            .checked_add(1)
            .map_or_else(IntegerFilter::none, |m| IntegerFilter::range(m, i64::MAX)),
        Op::Ge => IntegerFilter::range(v, i64::MAX),
    })
}

fn condition(column: &str, filter: &Filter) -> Option<IntegerFilter> {
    match filter {
        Filter::Eq(a, b) => comparison(column, Op::Eq, a, b),
        // `<=>` with a value is `=`; with a NULL it is IS NULL, which no bound expresses.
        Filter::NullSafeEq(a, b) => {
            let ((Value::Literal(literal), _) | (_, Value::Literal(literal))) = (a, b) else {
                return None;
            };
            if literal.is_null() {
                None
            } else {
                comparison(column, Op::Eq, a, b)
            }
        }
        Filter::Lt(a, b) => comparison(column, Op::Lt, a, b),
        Filter::Le(a, b) => comparison(column, Op::Le, a, b),
        Filter::Gt(a, b) => comparison(column, Op::Gt, a, b),
        Filter::Ge(a, b) => comparison(column, Op::Ge, a, b),
        Filter::In(Value::Column(c), list) if c.is(column) => {
            let mut values = Vec::with_capacity(list.len());
            for value in list {
                match value {
                    // A NULL in the list makes a non-matching row NULL, still not TRUE.
                    Value::Literal(l) => values.extend(integer(l)?),
                    Value::Column(_) => return None,
                }
            }
            Some(IntegerFilter::set(values))
        }
        Filter::And(p, q) => Some(condition(column, p)?.intersect(&condition(column, q)?)),
        Filter::AlwaysTrue => Some(IntegerFilter::all()),
        Filter::AlwaysFalse => Some(IntegerFilter::none()),
        _ => None,
    }
}
