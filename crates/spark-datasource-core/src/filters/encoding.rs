//! The binary encoding of `spark_datasource_filters.h`, version 1: [`decode`] for libraries,
//! [`encode`] for hosts. The header is the specification; the codes below are its `#define`s.

use super::{Column, Filter, Literal, Value, MAX_DEPTH};
use crate::error::{Error, Result};

mod op {
    pub const EQ: u8 = 1;
    pub const NULL_SAFE_EQ: u8 = 2;
    pub const LT: u8 = 3;
    pub const LE: u8 = 4;
    pub const GT: u8 = 5;
    pub const GE: u8 = 6;
    pub const IN: u8 = 7;
    pub const IS_NULL: u8 = 8;
    pub const IS_NOT_NULL: u8 = 9;
    pub const AND: u8 = 10;
    pub const OR: u8 = 11;
    pub const NOT: u8 = 12;
    pub const STARTS_WITH: u8 = 13;
    pub const ENDS_WITH: u8 = 14;
    pub const CONTAINS: u8 = 15;
    pub const ALWAYS_TRUE: u8 = 16;
    pub const ALWAYS_FALSE: u8 = 17;
}

mod kind {
    pub const COLUMN: u8 = 0;
    pub const LITERAL: u8 = 1;
}

mod ty {
    pub const NULL: u8 = 0;
    pub const BOOLEAN: u8 = 1;
    pub const INT8: u8 = 2;
    pub const INT16: u8 = 3;
    pub const INT32: u8 = 4;
    pub const INT64: u8 = 5;
    pub const FLOAT32: u8 = 6;
    pub const FLOAT64: u8 = 7;
    pub const DECIMAL128: u8 = 8;
    pub const UTF8: u8 = 9;
    pub const BINARY: u8 = 10;
    pub const DATE32: u8 = 11;
    pub const TIMESTAMP: u8 = 12;
    pub const TIMESTAMP_NTZ: u8 = 13;
}

/// The smallest predicate: its length and its operator.
const MIN_PREDICATE: usize = 5;

/// Decodes a message of the encoding: the conjuncts that a host pushes, in order.
///
/// A predicate with an operator, value kind or literal type that this crate does not know, a
/// string literal that is not UTF-8, or a nesting deeper than [`MAX_DEPTH`] becomes
/// [`Filter::Unsupported`]; the others decode regardless. It never panics, whatever the bytes.
///
/// # Errors
/// A malformed message, with the offset of the byte where it went wrong:
/// "malformed filters at byte 4: a predicate of 9 bytes, but 3 bytes are left".
pub fn decode(bytes: &[u8]) -> Result<Vec<Filter>> {
    let mut reader = Reader { bytes, at: 0 };
    let count = reader.u32()? as usize;
    // Each predicate takes at least MIN_PREDICATE bytes: this bounds the allocation.
    if count > reader.left() / MIN_PREDICATE {
        return Err(reader.error(format!(
            "{count} predicates cannot fit in the {} bytes left",
            reader.left()
        )));
    }
    let mut filters = Vec::with_capacity(count);
    for _ in 0..count {
        filters.push(reader.predicate(1)?);
    }
    if reader.left() > 0 {
        return Err(reader.error(format!(
            "{} bytes after the last of {count} predicates",
            reader.left()
        )));
    }
    Ok(filters)
}

/// Encodes `filters` as a message of the encoding, the bytes a host passes to `push_filters`.
/// [`Filter::Unsupported`] is written back as the bytes it holds.
///
/// # Errors
/// What the encoding cannot hold: a column with an empty path, a decimal precision outside 1 to
/// 38 or a scale outside 0 to the precision, a predicate, list or string longer than
/// `u32::MAX`, or an `Unsupported` with no bytes.
pub fn encode(filters: &[Filter]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    put_len(&mut out, filters.len(), "the message")?;
    for filter in filters {
        predicate(&mut out, filter)?;
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/// What stops decoding one predicate: a malformed message (an error for the whole message),
/// or something this crate does not know (that predicate becomes `Unsupported`).
enum Stop {
    Malformed(Error),
    Unknown,
}

impl From<Error> for Stop {
    fn from(error: Error) -> Self {
        Stop::Malformed(error)
    }
}

type Step<T> = std::result::Result<T, Stop>;

struct Reader<'a> {
    /// The whole message, so that offsets count from its start.
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn error(&self, message: String) -> Error {
        self.error_at(self.at, message)
    }

    fn error_at(&self, at: usize, message: String) -> Error {
        Error::msg(format!("malformed filters at byte {at}: {message}"))
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.left() {
            return Err(self.error(format!(
                "{what} needs {n} bytes, but {} are left",
                self.left()
            )));
        }
        let taken = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>("a byte")?[0])
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array("a u32")?))
    }

    fn flag(&mut self, what: &str) -> Result<bool> {
        let at = self.at;
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(self.error_at(at, format!("{what} must be 0 or 1, got {other}"))),
        }
    }

    /// A length-prefixed predicate at nesting `depth` (1 for a conjunct): its length is checked
    /// against what is left, then it is decoded within exactly those bytes.
    fn predicate(&mut self, depth: usize) -> Result<Filter> {
        let start = self.at;
        let length = self.u32()? as usize;
        if length > self.left() {
            return Err(self.error_at(
                start,
                format!(
                    "a predicate of {length} bytes, but {} bytes are left",
                    self.left()
                ),
            ));
        }
        if length == 0 {
            return Err(self.error_at(start, "a predicate of 0 bytes has no operator".into()));
        }
        let body_start = self.at;
        let end = body_start + length;
        let mut body = Reader {
            bytes: &self.bytes[..end],
            at: body_start,
        };
        self.at = end;
        let unsupported = || Filter::Unsupported(self.bytes[body_start..end].to_vec());
        if depth > MAX_DEPTH {
            return Ok(unsupported());
        }
        match body.operator(depth) {
            Ok(filter) if body.left() == 0 => Ok(filter),
            Ok(_) => Err(body.error(format!(
                "{} bytes after the operands of the predicate that starts at byte {start}",
                body.left()
            ))),
            Err(Stop::Unknown) => Ok(unsupported()),
            Err(Stop::Malformed(error)) => Err(error),
        }
    }

    fn operator(&mut self, depth: usize) -> Step<Filter> {
        let code = self.u8()?;
        let two = |r: &mut Self| -> Step<(Value, Value)> { Ok((r.value()?, r.value()?)) };
        Ok(match code {
            op::EQ => two(self).map(|(a, b)| Filter::Eq(a, b))?,
            op::NULL_SAFE_EQ => two(self).map(|(a, b)| Filter::NullSafeEq(a, b))?,
            op::LT => two(self).map(|(a, b)| Filter::Lt(a, b))?,
            op::LE => two(self).map(|(a, b)| Filter::Le(a, b))?,
            op::GT => two(self).map(|(a, b)| Filter::Gt(a, b))?,
            op::GE => two(self).map(|(a, b)| Filter::Ge(a, b))?,
            op::STARTS_WITH => two(self).map(|(a, b)| Filter::StartsWith(a, b))?,
            op::ENDS_WITH => two(self).map(|(a, b)| Filter::EndsWith(a, b))?,
            op::CONTAINS => two(self).map(|(a, b)| Filter::Contains(a, b))?,
            op::IN => {
                let value = self.value()?;
                let at = self.at;
                let count = self.u32()? as usize;
                // A value takes at least 2 bytes (its kind and a literal's type).
                if count > self.left() / 2 {
                    return Err(Stop::Malformed(self.error_at(
                        at,
                        format!(
                            "IN with {count} values cannot fit in the {} bytes left",
                            self.left()
                        ),
                    )));
                }
                let mut list = Vec::with_capacity(count);
                for _ in 0..count {
                    list.push(self.value()?);
                }
                Filter::In(value, list)
            }
            op::IS_NULL => Filter::IsNull(self.value()?),
            op::IS_NOT_NULL => Filter::IsNotNull(self.value()?),
            op::AND => Filter::And(
                Box::new(self.predicate(depth + 1)?),
                Box::new(self.predicate(depth + 1)?),
            ),
            op::OR => Filter::Or(
                Box::new(self.predicate(depth + 1)?),
                Box::new(self.predicate(depth + 1)?),
            ),
            op::NOT => Filter::Not(Box::new(self.predicate(depth + 1)?)),
            op::ALWAYS_TRUE => Filter::AlwaysTrue,
            op::ALWAYS_FALSE => Filter::AlwaysFalse,
            _ => return Err(Stop::Unknown),
        })
    }

    fn value(&mut self) -> Step<Value> {
        match self.u8()? {
            kind::COLUMN => Ok(Value::Column(self.column()?)),
            kind::LITERAL => Ok(Value::Literal(self.literal()?)),
            _ => Err(Stop::Unknown),
        }
    }

    fn column(&mut self) -> Result<Column> {
        let at = self.at;
        let parts = self.u32()? as usize;
        if parts == 0 {
            return Err(self.error_at(at, "a column with no name".into()));
        }
        // A part takes at least its 4-byte length.
        if parts > self.left() / 4 {
            return Err(self.error_at(
                at,
                format!(
                    "a column of {parts} names cannot fit in the {} bytes left",
                    self.left()
                ),
            ));
        }
        let mut path = Vec::with_capacity(parts);
        for _ in 0..parts {
            let length = self.u32()? as usize;
            let name_at = self.at;
            let bytes = self.take(length, "a column name")?;
            let name = std::str::from_utf8(bytes).map_err(|e| {
                self.error_at(name_at, format!("a column name that is not UTF-8: {e}"))
            })?;
            path.push(name.to_owned());
        }
        Ok(Column { path })
    }

    /// A literal: its type code (with precision and scale for a decimal), its null flag, and
    /// its value unless null.
    fn literal(&mut self) -> Step<Literal> {
        let code = self.u8()?;
        let decimal = if code == ty::DECIMAL128 {
            Some(self.decimal_type()?)
        } else {
            None
        };
        if code > ty::TIMESTAMP_NTZ {
            return Err(Stop::Unknown);
        }
        let null_at = self.at;
        let null = self.flag("the null flag of a literal")?;
        if code == ty::NULL {
            return if null {
                Ok(Literal::Null)
            } else {
                Err(Stop::Malformed(self.error_at(
                    null_at,
                    "a literal of type NULL must be NULL".into(),
                )))
            };
        }
        self.literal_value(code, null, decimal)
    }

    /// The precision and scale after a decimal's type code, which must be a decimal of Spark.
    fn decimal_type(&mut self) -> Step<(u8, u8)> {
        let at = self.at;
        let precision = self.u8()?;
        let scale = self.u8()?;
        if !(1..=38).contains(&precision) || scale > precision {
            return Err(Stop::Malformed(self.error_at(
                at,
                format!("decimal({precision},{scale}) is not a decimal of Spark"),
            )));
        }
        Ok((precision, scale))
    }

    /// The value of a literal of type `code` (not NULL), none when `null`.
    fn literal_value(&mut self, code: u8, null: bool, decimal: Option<(u8, u8)>) -> Step<Literal> {
        macro_rules! number {
            ($variant:ident, $rust:ty) => {
                Literal::$variant(if null {
                    None
                } else {
                    Some(<$rust>::from_le_bytes(self.array("a literal")?))
                })
            };
        }
        Ok(match code {
            ty::BOOLEAN => Literal::Boolean(if null {
                None
            } else {
                Some(self.flag("a boolean literal")?)
            }),
            ty::INT8 => number!(Int8, i8),
            ty::INT16 => number!(Int16, i16),
            ty::INT32 => number!(Int32, i32),
            ty::INT64 => number!(Int64, i64),
            ty::FLOAT32 => Literal::Float32(if null {
                None
            } else {
                Some(f32::from_bits(u32::from_le_bytes(self.array("a literal")?)))
            }),
            ty::FLOAT64 => Literal::Float64(if null {
                None
            } else {
                Some(f64::from_bits(u64::from_le_bytes(self.array("a literal")?)))
            }),
            ty::DECIMAL128 => {
                let (precision, scale) = decimal.unwrap_or((38, 0));
                Literal::Decimal128 {
                    value: if null {
                        None
                    } else {
                        Some(i128::from_le_bytes(self.array("a literal")?))
                    },
                    precision,
                    scale,
                }
            }
            ty::UTF8 => Literal::Utf8(if null {
                None
            } else {
                let bytes = self.bytes_value()?;
                // Not UTF-8: the predicate is left to Spark, as the header allows.
                Some(String::from_utf8(bytes.to_vec()).map_err(|_| Stop::Unknown)?)
            }),
            ty::BINARY => Literal::Binary(if null {
                None
            } else {
                Some(self.bytes_value()?.to_vec())
            }),
            ty::DATE32 => number!(Date32, i32),
            ty::TIMESTAMP => number!(Timestamp, i64),
            ty::TIMESTAMP_NTZ => number!(TimestampNtz, i64),
            _ => return Err(Stop::Unknown),
        })
    }

    fn bytes_value(&mut self) -> Result<&'a [u8]> {
        let length = self.u32()? as usize;
        self.take(length, "a string literal")
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

fn put_len(out: &mut Vec<u8>, length: usize, what: &str) -> Result<()> {
    let length = u32::try_from(length)
        .map_err(|_| Error::msg(format!("{what} is longer than the encoding holds (u32)")))?;
    out.extend_from_slice(&length.to_le_bytes());
    Ok(())
}

fn predicate(out: &mut Vec<u8>, filter: &Filter) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    operator(out, filter)?;
    let length = out.len() - start - 4;
    let length = u32::try_from(length)
        .map_err(|_| Error::msg("a predicate is longer than the encoding holds (u32)"))?;
    out[start..start + 4].copy_from_slice(&length.to_le_bytes());
    Ok(())
}

fn operator(out: &mut Vec<u8>, filter: &Filter) -> Result<()> {
    let mut two = |code: u8, a: &Value, b: &Value| -> Result<()> {
        out.push(code);
        value(out, a)?;
        value(out, b)
    };
    match filter {
        Filter::Eq(a, b) => two(op::EQ, a, b),
        Filter::NullSafeEq(a, b) => two(op::NULL_SAFE_EQ, a, b),
        Filter::Lt(a, b) => two(op::LT, a, b),
        Filter::Le(a, b) => two(op::LE, a, b),
        Filter::Gt(a, b) => two(op::GT, a, b),
        Filter::Ge(a, b) => two(op::GE, a, b),
        Filter::StartsWith(a, b) => two(op::STARTS_WITH, a, b),
        Filter::EndsWith(a, b) => two(op::ENDS_WITH, a, b),
        Filter::Contains(a, b) => two(op::CONTAINS, a, b),
        Filter::In(a, list) => {
            out.push(op::IN);
            value(out, a)?;
            put_len(out, list.len(), "an IN list")?;
            list.iter().try_for_each(|v| value(out, v))
        }
        Filter::IsNull(a) => {
            out.push(op::IS_NULL);
            value(out, a)
        }
        Filter::IsNotNull(a) => {
            out.push(op::IS_NOT_NULL);
            value(out, a)
        }
        Filter::And(p, q) | Filter::Or(p, q) => {
            out.push(if matches!(filter, Filter::And(..)) {
                op::AND
            } else {
                op::OR
            });
            predicate(out, p)?;
            predicate(out, q)
        }
        Filter::Not(p) => {
            out.push(op::NOT);
            predicate(out, p)
        }
        Filter::AlwaysTrue => {
            out.push(op::ALWAYS_TRUE);
            Ok(())
        }
        Filter::AlwaysFalse => {
            out.push(op::ALWAYS_FALSE);
            Ok(())
        }
        Filter::Unsupported(bytes) if bytes.is_empty() => Err(Error::msg(
            "an unsupported predicate with no bytes cannot be encoded: it needs its operator",
        )),
        Filter::Unsupported(bytes) => {
            out.extend_from_slice(bytes);
            Ok(())
        }
    }
}

fn value(out: &mut Vec<u8>, value: &Value) -> Result<()> {
    match value {
        Value::Column(column) => {
            if column.path.is_empty() {
                return Err(Error::msg("a column with an empty path cannot be encoded"));
            }
            out.push(kind::COLUMN);
            put_len(out, column.path.len(), "a column path")?;
            for name in &column.path {
                put_len(out, name.len(), "a column name")?;
                out.extend_from_slice(name.as_bytes());
            }
            Ok(())
        }
        Value::Literal(literal) => {
            out.push(kind::LITERAL);
            self::literal(out, literal)
        }
    }
}

fn literal(out: &mut Vec<u8>, literal: &Literal) -> Result<()> {
    /// Writes the type code, the null flag, then the value bytes, if any.
    fn put<const N: usize>(out: &mut Vec<u8>, code: u8, value: Option<[u8; N]>) {
        out.push(code);
        out.push(u8::from(value.is_none()));
        if let Some(bytes) = value {
            out.extend_from_slice(&bytes);
        }
    }
    fn put_bytes(out: &mut Vec<u8>, code: u8, value: Option<&[u8]>) -> Result<()> {
        out.push(code);
        out.push(u8::from(value.is_none()));
        if let Some(bytes) = value {
            put_len(out, bytes.len(), "a string or binary literal")?;
            out.extend_from_slice(bytes);
        }
        Ok(())
    }
    match literal {
        Literal::Null => put::<0>(out, ty::NULL, None),
        Literal::Boolean(v) => put(out, ty::BOOLEAN, v.map(|b| [u8::from(b)])),
        Literal::Int8(v) => put(out, ty::INT8, v.map(i8::to_le_bytes)),
        Literal::Int16(v) => put(out, ty::INT16, v.map(i16::to_le_bytes)),
        Literal::Int32(v) => put(out, ty::INT32, v.map(i32::to_le_bytes)),
        Literal::Int64(v) => put(out, ty::INT64, v.map(i64::to_le_bytes)),
        Literal::Float32(v) => put(out, ty::FLOAT32, v.map(|f| f.to_bits().to_le_bytes())),
        Literal::Float64(v) => put(out, ty::FLOAT64, v.map(|f| f.to_bits().to_le_bytes())),
        Literal::Decimal128 {
            value,
            precision,
            scale,
        } => {
            if !(1..=38).contains(precision) || scale > precision {
                return Err(Error::msg(format!(
                    "decimal({precision},{scale}) is not a decimal of Spark: the precision is 1 \
                     to 38 and the scale 0 to the precision"
                )));
            }
            out.push(ty::DECIMAL128);
            out.push(*precision);
            out.push(*scale);
            out.push(u8::from(value.is_none()));
            if let Some(v) = value {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        Literal::Utf8(v) => put_bytes(out, ty::UTF8, v.as_deref().map(str::as_bytes))?,
        Literal::Binary(v) => put_bytes(out, ty::BINARY, v.as_deref())?,
        Literal::Date32(v) => put(out, ty::DATE32, v.map(i32::to_le_bytes)),
        Literal::Timestamp(v) => put(out, ty::TIMESTAMP, v.map(i64::to_le_bytes)),
        Literal::TimestampNtz(v) => put(out, ty::TIMESTAMP_NTZ, v.map(i64::to_le_bytes)),
    }
    Ok(())
}
