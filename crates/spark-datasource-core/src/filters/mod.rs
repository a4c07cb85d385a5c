//! Filter pushdown's vocabulary: the predicates of `spark_datasource_filters.h`, an extension
//! outside the version-1 table, as a typed tree, and the header's binary encoding of them.
//!
//! Spark offers a batch reader the top-level conjuncts of a query's condition (Data Source V2's
//! `SupportsPushDownV2Filters`); the reader answers, per conjunct, whether it guarantees it on
//! every row it returns. The predicates cross the interface in the header's binary encoding:
//! [`decode`] reads it (a library), [`encode`] writes it (a host). [`IntegerFilter`] turns the
//! conjuncts on one integer column (`id > 10`, `id = 3`, `id IN (..)`, a BETWEEN as two
//! conjuncts) into bounds and a set to plan partitions with.
//!
//! The SQL evaluation of a predicate on Arrow batches is the crate `spark-datasource-eval`, apart
//! so that a library that does not evaluate filters does not build Arrow's kernels.
//!
//! `Filter` implements serde's traits: accepted filters are state of a reader, which crosses to
//! the executors serialized.

mod bounds;
mod encoding;

use serde::{Deserialize, Serialize};

pub use bounds::IntegerFilter;
pub use encoding::{decode, encode};

/// `SPARK_DS_FILTERS_VERSION`: the version of the extension's table, which the SDK exports and
/// hosts read.
pub const FILTERS_VERSION: i32 = 1;

/// A predicate of Spark's V2 set. Operands are [`Value`]s: a column or a literal, on either
/// side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Filter {
    /// `a = b` (`=`): NULL when either side is NULL.
    Eq(Value, Value),
    /// `a <=> b` (`<=>`): TRUE when both are NULL, FALSE when one is.
    NullSafeEq(Value, Value),
    /// `a < b`.
    Lt(Value, Value),
    /// `a <= b`.
    Le(Value, Value),
    /// `a > b`.
    Gt(Value, Value),
    /// `a >= b`.
    Ge(Value, Value),
    /// `a IN (v, ...)`: TRUE when a value equals `a`, else NULL when `a` or a value is NULL,
    /// else FALSE; FALSE with no value.
    In(Value, Vec<Value>),
    /// `a IS NULL`.
    IsNull(Value),
    /// `a IS NOT NULL`.
    IsNotNull(Value),
    /// `p AND q`, three-valued.
    And(Box<Filter>, Box<Filter>),
    /// `p OR q`, three-valued.
    Or(Box<Filter>, Box<Filter>),
    /// `NOT p`, three-valued.
    Not(Box<Filter>),
    /// `a` starts with `b` (strings or binary).
    StartsWith(Value, Value),
    /// `a` ends with `b`.
    EndsWith(Value, Value),
    /// `a` contains `b`.
    Contains(Value, Value),
    /// TRUE.
    AlwaysTrue,
    /// FALSE.
    AlwaysFalse,
    /// A predicate that this crate cannot represent: an operator, value kind or literal type
    /// of a newer encoding, a string literal that is not UTF-8, or a nesting deeper than
    /// [`MAX_DEPTH`]. It holds the predicate's bytes (its operator code first, without its
    /// length), so that [`encode`] writes it back unchanged. Never accept it.
    Unsupported(Vec<u8>),
}

/// The deepest nesting of predicates that [`decode`] represents; deeper ones are
/// [`Filter::Unsupported`], which keeps decoding, evaluating and dropping a tree within a
/// small stack.
pub const MAX_DEPTH: usize = 128;

/// An operand of a predicate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Value {
    /// A column of the reader's schema.
    Column(Column),
    /// A constant.
    Literal(Literal),
}

/// A column, by its path: a top-level column is one name, a nested field the names from the
/// top-level column down (`a.b` is `["a", "b"]`), spelled as in the reader's schema.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Column {
    path: Vec<String>,
}

impl Column {
    /// The top-level column `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Column {
            path: vec![name.into()],
        }
    }

    /// The field at `path` (at least one name).
    ///
    /// # Panics
    /// When `path` is empty: a column has a name.
    pub fn nested<S: Into<String>>(path: impl IntoIterator<Item = S>) -> Self {
        let path: Vec<String> = path.into_iter().map(Into::into).collect();
        assert!(!path.is_empty(), "a column path has at least one name");
        Column { path }
    }

    /// The names from the top-level column down.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// The name of a top-level column; `None` for a nested field.
    pub fn name(&self) -> Option<&str> {
        match self.path.as_slice() {
            [name] => Some(name),
            _ => None,
        }
    }

    /// Whether this is the top-level column `name`.
    pub fn is(&self, name: &str) -> bool {
        self.name() == Some(name)
    }
}

impl std::fmt::Display for Column {
    /// The path as SQL writes it: names joined by dots, each in backquotes when it needs them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, name) in self.path.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            let plain = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if plain {
                f.write_str(name)?;
            } else {
                write!(f, "`{}`", name.replace('`', "``"))?;
            }
        }
        Ok(())
    }
}

/// A constant of one of the types of version 1, exactly: `None` is a NULL of that type.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Literal {
    /// The NULL of type `void`.
    Null,
    /// `boolean`.
    Boolean(Option<bool>),
    /// `tinyint`.
    Int8(Option<i8>),
    /// `smallint`.
    Int16(Option<i16>),
    /// `int`.
    Int32(Option<i32>),
    /// `bigint`.
    Int64(Option<i64>),
    /// `float`: the exact bits, NaN and infinities included. Serialized as its bits, since a
    /// format such as JSON has no NaN or infinity (serde_json writes them as `null`).
    #[serde(with = "float_bits::f32")]
    Float32(Option<f32>),
    /// `double`: the exact bits, serialized as its bits.
    #[serde(with = "float_bits::f64")]
    Float64(Option<f64>),
    /// `decimal(precision, scale)`: the unscaled value, `value / 10^scale`.
    Decimal128 {
        /// The unscaled value.
        value: Option<i128>,
        /// 1 to 38.
        precision: u8,
        /// 0 to `precision`.
        scale: u8,
    },
    /// `string`.
    Utf8(Option<String>),
    /// `binary`.
    Binary(Option<Vec<u8>>),
    /// `date`: days since 1970-01-01.
    Date32(Option<i32>),
    /// `timestamp`: microseconds since 1970-01-01T00:00:00Z.
    Timestamp(Option<i64>),
    /// `timestamp_ntz`: microseconds since 1970-01-01T00:00:00, in no time zone.
    TimestampNtz(Option<i64>),
}

/// Floats serialized as their IEEE 754 bits: a reader's state in JSON keeps NaN, infinities
/// and -0.0 exactly.
mod float_bits {
    pub mod f32 {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        pub fn serialize<S: Serializer>(v: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
            v.map(f32::to_bits).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
            Ok(Option::<u32>::deserialize(d)?.map(f32::from_bits))
        }
    }

    pub mod f64 {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
            v.map(f64::to_bits).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
            Ok(Option::<u64>::deserialize(d)?.map(f64::from_bits))
        }
    }
}

impl Literal {
    /// Whether this is a NULL, of any type.
    pub fn is_null(&self) -> bool {
        match self {
            Literal::Null => true,
            Literal::Boolean(v) => v.is_none(),
            Literal::Int8(v) => v.is_none(),
            Literal::Int16(v) => v.is_none(),
            Literal::Int32(v) => v.is_none(),
            Literal::Int64(v) => v.is_none(),
            Literal::Float32(v) => v.is_none(),
            Literal::Float64(v) => v.is_none(),
            Literal::Decimal128 { value, .. } => value.is_none(),
            Literal::Utf8(v) => v.is_none(),
            Literal::Binary(v) => v.is_none(),
            Literal::Date32(v) => v.is_none(),
            Literal::Timestamp(v) | Literal::TimestampNtz(v) => v.is_none(),
        }
    }

    /// The value of a non-null integer literal of any width (`tinyint` to `bigint`).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Literal::Int8(Some(v)) => Some(v.into()),
            Literal::Int16(Some(v)) => Some(v.into()),
            Literal::Int32(Some(v)) => Some(v.into()),
            Literal::Int64(Some(v)) => Some(v),
            _ => None,
        }
    }
}

/// Literals are equal when they have the same type and the same bits: `NaN` equals the same
/// `NaN`, and `-0.0` differs from `0.0`, as their encodings do.
impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        use Literal::*;
        match (self, other) {
            (Null, Null) => true,
            (Boolean(a), Boolean(b)) => a == b,
            (Int8(a), Int8(b)) => a == b,
            (Int16(a), Int16(b)) => a == b,
            (Int32(a), Int32(b)) => a == b,
            (Int64(a), Int64(b)) => a == b,
            (Float32(a), Float32(b)) => a.map(f32::to_bits) == b.map(f32::to_bits),
            (Float64(a), Float64(b)) => a.map(f64::to_bits) == b.map(f64::to_bits),
            (
                Decimal128 {
                    value: a,
                    precision: p,
                    scale: s,
                },
                Decimal128 {
                    value: b,
                    precision: q,
                    scale: t,
                },
            ) => a == b && p == q && s == t,
            (Utf8(a), Utf8(b)) => a == b,
            (Binary(a), Binary(b)) => a == b,
            (Date32(a), Date32(b)) => a == b,
            (Timestamp(a), Timestamp(b)) => a == b,
            (TimestampNtz(a), TimestampNtz(b)) => a == b,
            _ => false,
        }
    }
}

macro_rules! literal_from {
    ($($rust:ty => $variant:ident),* $(,)?) => {$(
        impl From<$rust> for Literal {
            fn from(value: $rust) -> Self {
                Literal::$variant(Some(value.into()))
            }
        }
    )*};
}

literal_from!(
    bool => Boolean, i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64, f32 => Float32,
    f64 => Float64, String => Utf8, &str => Utf8, Vec<u8> => Binary, &[u8] => Binary,
);

impl From<Column> for Value {
    fn from(column: Column) -> Self {
        Value::Column(column)
    }
}

impl<T: Into<Literal>> From<T> for Value {
    fn from(literal: T) -> Self {
        Value::Literal(literal.into())
    }
}

/// The top-level column `name`, as an operand: `Filter::Gt(col("id"), 10i64.into())`.
pub fn col(name: &str) -> Value {
    Value::Column(Column::new(name))
}

impl Filter {
    /// `p AND q`.
    pub fn and(self, other: Filter) -> Filter {
        Filter::And(Box::new(self), Box::new(other))
    }

    /// `p OR q`.
    pub fn or(self, other: Filter) -> Filter {
        Filter::Or(Box::new(self), Box::new(other))
    }

    /// `NOT p`; `!p` does the same.
    pub fn negate(self) -> Filter {
        Filter::Not(Box::new(self))
    }

    /// The columns this predicate reads, in order of appearance, with repeats.
    pub fn columns(&self) -> Vec<&Column> {
        let mut columns = Vec::new();
        self.visit_columns(&mut |column| columns.push(column));
        columns
    }

    fn visit_columns<'a>(&'a self, visit: &mut dyn FnMut(&'a Column)) {
        let mut value = |v: &'a Value| {
            if let Value::Column(c) = v {
                visit(c);
            }
        };
        match self {
            Filter::Eq(a, b)
            | Filter::NullSafeEq(a, b)
            | Filter::Lt(a, b)
            | Filter::Le(a, b)
            | Filter::Gt(a, b)
            | Filter::Ge(a, b)
            | Filter::StartsWith(a, b)
            | Filter::EndsWith(a, b)
            | Filter::Contains(a, b) => {
                value(a);
                value(b);
            }
            Filter::In(a, list) => {
                value(a);
                list.iter().for_each(value);
            }
            Filter::IsNull(a) | Filter::IsNotNull(a) => value(a),
            Filter::And(p, q) | Filter::Or(p, q) => {
                p.visit_columns(visit);
                q.visit_columns(visit);
            }
            Filter::Not(p) => p.visit_columns(visit),
            Filter::AlwaysTrue | Filter::AlwaysFalse | Filter::Unsupported(_) => {}
        }
    }
}

impl std::ops::Not for Filter {
    type Output = Filter;

    fn not(self) -> Filter {
        self.negate()
    }
}

#[cfg(test)]
mod tests;
