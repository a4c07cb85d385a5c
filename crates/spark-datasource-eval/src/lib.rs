//! The SQL evaluation of pushed filters ([`Filter`], of `spark-datasource-core`) on Arrow
//! batches, with arrow's kernels and Spark's semantics: [`evaluate`] gives the rows where a
//! predicate is TRUE, [`filter_batch`] keeps the rows where every predicate is.
//!
//! A library that filters its rows itself uses it through the SDK's feature `filter-evaluation`
//! (`spark_datasource::filters::filter_batch`); the host (`sparkds`) depends on it directly to
//! check that every row a reader returns satisfies the filters it accepted. It is a crate of its
//! own so that neither turns the other's choice on: its kernels (arrow-ord and arrow-select) are
//! most of a small library's release build.
//!
//! Each predicate evaluates to three-valued logic, kept as two bitmaps, the rows where it is
//! TRUE and the rows where it is FALSE (NULL is neither), so that `AND`, `OR` and `NOT` are bit
//! operations and a row is kept only where the result is TRUE. Comparisons run through
//! `arrow_ord::cmp`, after two normalizations that make arrow's total order Spark's: every NaN
//! becomes the one positive NaN (so NaN equals NaN and is above every other value) and `-0.0`
//! becomes `0.0`; strings compare as their bytes, as Spark's `UTF8String` does.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Datum,
    Decimal128Array, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array,
    RecordBatch, Scalar, TimestampMicrosecondArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_schema::{DataType, TimeUnit};

use spark_datasource_core::filters::{Column, Filter, Literal, Value, MAX_DEPTH};
use spark_datasource_core::{Error, Result};

#[cfg(test)]
mod tests;

/// An error of arrow-rs, as this crate's error, with its message.
fn arrow_error(error: arrow_schema::ArrowError) -> Error {
    Error::msg(error.to_string())
}

/// The rows of `batch` where `filter` is TRUE: a mask with no nulls, for
/// `arrow_select::filter`. FALSE and NULL rows are both `false`.
///
/// # Errors
/// A column that `batch` does not have, operands whose types cannot be compared (a literal
/// that does not fit the column's type, such as `300` for a `tinyint`), or a
/// [`Filter::Unsupported`].
pub fn evaluate(filter: &Filter, batch: &RecordBatch) -> Result<BooleanArray> {
    let truth = truth(filter, batch, 0)?;
    Ok(BooleanArray::new(truth.t, None))
}

/// The rows of `batch` where every one of `filters` is TRUE: what a reader returns after
/// accepting these conjuncts.
///
/// # Errors
/// As [`evaluate`].
pub fn filter_batch(filters: &[Filter], batch: &RecordBatch) -> Result<RecordBatch> {
    if filters.is_empty() {
        return Ok(batch.clone());
    }
    let mut keep = BooleanBuffer::new_set(batch.num_rows());
    for filter in filters {
        keep = &keep & &truth(filter, batch, 0)?.t;
    }
    arrow_select::filter::filter_record_batch(batch, &BooleanArray::new(keep, None))
        .map_err(arrow_error)
}

/// Three-valued truth per row: `t` where TRUE, `f` where FALSE, neither where NULL.
struct Truth {
    t: BooleanBuffer,
    f: BooleanBuffer,
}

impl Truth {
    fn constant(value: Option<bool>, rows: usize) -> Truth {
        let bits = |set: bool| {
            if set {
                BooleanBuffer::new_set(rows)
            } else {
                BooleanBuffer::new_unset(rows)
            }
        };
        Truth {
            t: bits(value == Some(true)),
            f: bits(value == Some(false)),
        }
    }

    fn from_array(array: &BooleanArray) -> Truth {
        let values = array.values();
        match array.nulls() {
            None => Truth {
                t: values.clone(),
                f: !values,
            },
            Some(nulls) => Truth {
                t: values & nulls.inner(),
                f: &!values & nulls.inner(),
            },
        }
    }

    fn and(self, other: Truth) -> Truth {
        Truth {
            t: &self.t & &other.t,
            f: &self.f | &other.f,
        }
    }

    fn or(self, other: Truth) -> Truth {
        Truth {
            t: &self.t | &other.t,
            f: &self.f & &other.f,
        }
    }

    fn not(self) -> Truth {
        Truth {
            t: self.f,
            f: self.t,
        }
    }

    /// A truth computed on one row (both operands literals) repeated on `rows` rows.
    fn broadcast(self, rows: usize) -> Truth {
        let value = if self.t.value(0) {
            Some(true)
        } else if self.f.value(0) {
            Some(false)
        } else {
            None
        };
        Truth::constant(value, rows)
    }
}

fn truth(filter: &Filter, batch: &RecordBatch, depth: usize) -> Result<Truth> {
    if depth > MAX_DEPTH {
        return Err(Error::msg(format!(
            "a predicate nested deeper than {MAX_DEPTH} levels: do not accept it"
        )));
    }
    let rows = batch.num_rows();
    let recurse = |p: &Filter| truth(p, batch, depth + 1);
    Ok(match filter {
        Filter::Eq(a, b) => compare(batch, a, b, arrow_ord::cmp::eq)?,
        Filter::NullSafeEq(a, b) => compare(batch, a, b, arrow_ord::cmp::not_distinct)?,
        Filter::Lt(a, b) => compare(batch, a, b, arrow_ord::cmp::lt)?,
        Filter::Le(a, b) => compare(batch, a, b, arrow_ord::cmp::lt_eq)?,
        Filter::Gt(a, b) => compare(batch, a, b, arrow_ord::cmp::gt)?,
        Filter::Ge(a, b) => compare(batch, a, b, arrow_ord::cmp::gt_eq)?,
        Filter::In(a, list) => {
            // Spark: `a IN ()` is FALSE, even for a NULL `a`; otherwise the OR of the `=`s.
            let mut result = Truth::constant(Some(false), rows);
            for value in list {
                result = result.or(compare(batch, a, value, arrow_ord::cmp::eq)?);
            }
            result
        }
        Filter::IsNull(a) => is_null(batch, a)?,
        Filter::IsNotNull(a) => is_null(batch, a)?.not(),
        Filter::And(p, q) => recurse(p)?.and(recurse(q)?),
        Filter::Or(p, q) => recurse(p)?.or(recurse(q)?),
        Filter::Not(p) => recurse(p)?.not(),
        Filter::StartsWith(a, b) => bytes_test(batch, a, b, |s, p| s.starts_with(p))?,
        Filter::EndsWith(a, b) => bytes_test(batch, a, b, |s, p| s.ends_with(p))?,
        Filter::Contains(a, b) => bytes_test(batch, a, b, |s, p| {
            p.is_empty() || s.windows(p.len()).any(|w| w == p)
        })?,
        Filter::AlwaysTrue => Truth::constant(Some(true), rows),
        Filter::AlwaysFalse => Truth::constant(Some(false), rows),
        Filter::Unsupported(bytes) => {
            return Err(Error::msg(format!(
                "cannot evaluate a predicate that this version does not know (operator code \
                 {}): do not accept it",
                bytes.first().copied().unwrap_or(0)
            )))
        }
    })
}

/// An operand as an array: a column of the batch, or a literal as one row.
struct Side {
    array: ArrayRef,
    scalar: bool,
}

impl Side {
    fn datum(&self) -> Box<dyn Datum + '_> {
        if self.scalar {
            Box::new(Scalar::new(&self.array))
        } else {
            Box::new(&self.array)
        }
    }
}

/// Both operands of a binary predicate, normalized, a literal taking the type of the column
/// it meets.
fn sides(batch: &RecordBatch, a: &Value, b: &Value) -> Result<(Side, Side)> {
    let side = |value: &Value, other: &Value| -> Result<Side> {
        match (value, other) {
            (Value::Column(c), _) => Ok(Side {
                array: normalize(column(batch, c)?)?,
                scalar: false,
            }),
            (Value::Literal(l), Value::Column(c)) => {
                let data_type = column(batch, c)?.data_type().clone();
                Ok(Side {
                    array: normalize(literal_array(l, &data_type)?)?,
                    scalar: true,
                })
            }
            (Value::Literal(l), Value::Literal(m)) => {
                // Two literals: the type of the first that is not a NULL.
                let data_type = literal_type(if l.is_null() { m } else { l });
                Ok(Side {
                    array: normalize(literal_array(l, &data_type)?)?,
                    scalar: true,
                })
            }
        }
    };
    Ok((side(a, b)?, side(b, a)?))
}

type Kernel =
    fn(&dyn Datum, &dyn Datum) -> std::result::Result<BooleanArray, arrow_schema::ArrowError>;

fn compare(batch: &RecordBatch, a: &Value, b: &Value, kernel: Kernel) -> Result<Truth> {
    let (a, b) = sides(batch, a, b)?;
    let result = kernel(a.datum().as_ref(), b.datum().as_ref()).map_err(|e| {
        Error::msg(format!(
            "cannot compare {} with {}: {e}",
            a.array.data_type(),
            b.array.data_type()
        ))
    })?;
    let truth = Truth::from_array(&result);
    Ok(if a.scalar && b.scalar {
        truth.broadcast(batch.num_rows())
    } else {
        truth
    })
}

fn is_null(batch: &RecordBatch, a: &Value) -> Result<Truth> {
    Ok(match a {
        Value::Literal(l) => Truth::constant(Some(l.is_null()), batch.num_rows()),
        Value::Column(c) => {
            let array = column(batch, c)?;
            let nulls = match array.logical_nulls() {
                Some(nulls) => !nulls.inner(),
                None => BooleanBuffer::new_unset(array.len()),
            };
            Truth {
                f: !&nulls,
                t: nulls,
            }
        }
    })
}

/// STARTS_WITH, ENDS_WITH and CONTAINS, on the bytes of strings or binary.
fn bytes_test(
    batch: &RecordBatch,
    a: &Value,
    b: &Value,
    test: impl Fn(&[u8], &[u8]) -> bool,
) -> Result<Truth> {
    let (a, b) = sides(batch, a, b)?;
    let binary = |side: &Side| -> Result<BinaryArray> {
        side.array
            .as_binary_opt::<i32>()
            .cloned()
            .or_else(|| {
                (side.array.data_type() == &DataType::Null)
                    .then(|| BinaryArray::new_null(side.array.len()))
            })
            .ok_or_else(|| {
                Error::msg(format!(
                    "STARTS_WITH, ENDS_WITH and CONTAINS take strings or binary, got {}",
                    side.array.data_type()
                ))
            })
    };
    let (left, right) = (binary(&a)?, binary(&b)?);
    let rows = if a.scalar && b.scalar {
        1
    } else {
        batch.num_rows()
    };
    fn at(array: &BinaryArray, scalar: bool, row: usize) -> Option<&[u8]> {
        let i = if scalar { 0 } else { row };
        array.is_valid(i).then(|| array.value(i))
    }
    let result: BooleanArray = (0..rows)
        .map(|row| Some(test(at(&left, a.scalar, row)?, at(&right, b.scalar, row)?)))
        .collect();
    let truth = Truth::from_array(&result);
    Ok(if rows == 1 && a.scalar && b.scalar {
        truth.broadcast(batch.num_rows())
    } else {
        truth
    })
}

/// The array of `column` in `batch`: a nested field is NULL where a struct above it is.
fn column(batch: &RecordBatch, column: &Column) -> Result<ArrayRef> {
    let missing = || Error::msg(format!("the batch has no column `{column}`"));
    let (first, rest) = column.path().split_first().ok_or_else(missing)?;
    let mut array = batch.column_by_name(first).ok_or_else(missing)?.clone();
    if rest.is_empty() {
        return Ok(array);
    }
    let mut nulls = array.logical_nulls();
    for name in rest {
        let child = array
            .as_struct_opt()
            .and_then(|s| s.column_by_name(name))
            .ok_or_else(missing)?
            .clone();
        nulls = NullBuffer::union(nulls.as_ref(), child.logical_nulls().as_ref());
        array = child;
    }
    let data = array
        .to_data()
        .into_builder()
        .nulls(nulls)
        .build()
        .map_err(arrow_error)?;
    Ok(make_array(data))
}

/// Spark's order in arrow's: one NaN, no negative zero; strings as bytes.
fn normalize(array: ArrayRef) -> Result<ArrayRef> {
    Ok(match array.data_type() {
        DataType::Float32 => Arc::new(array.as_primitive::<Float32Type>().unary::<_, Float32Type>(
            |x| {
                if x.is_nan() {
                    f32::NAN
                } else if x == 0.0 {
                    0.0
                } else {
                    x
                }
            },
        )),
        DataType::Float64 => Arc::new(array.as_primitive::<Float64Type>().unary::<_, Float64Type>(
            |x| {
                if x.is_nan() {
                    f64::NAN
                } else if x == 0.0 {
                    0.0
                } else {
                    x
                }
            },
        )),
        DataType::Utf8 => Arc::new(BinaryArray::from(array.as_string::<i32>().clone())),
        _ => array,
    })
}

/// The Arrow type of a literal, for a comparison of two literals.
fn literal_type(literal: &Literal) -> DataType {
    match literal {
        Literal::Null => DataType::Null,
        Literal::Boolean(_) => DataType::Boolean,
        Literal::Int8(_) => DataType::Int8,
        Literal::Int16(_) => DataType::Int16,
        Literal::Int32(_) => DataType::Int32,
        Literal::Int64(_) => DataType::Int64,
        Literal::Float32(_) => DataType::Float32,
        Literal::Float64(_) => DataType::Float64,
        Literal::Decimal128 {
            precision, scale, ..
        } => DataType::Decimal128(*precision, *scale as i8),
        Literal::Utf8(_) => DataType::Utf8,
        Literal::Binary(_) => DataType::Binary,
        Literal::Date32(_) => DataType::Date32,
        Literal::Timestamp(_) => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Literal::TimestampNtz(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
    }
}

/// `literal` as one row of `data_type`, the type of the column it is compared with: integers
/// of any width that fit, decimals that rescale exactly, and otherwise the literal's own type.
fn literal_array(literal: &Literal, data_type: &DataType) -> Result<ArrayRef> {
    if literal.is_null() {
        return Ok(new_null_array(data_type, 1));
    }
    let mismatch = || {
        Error::msg(format!(
            "cannot compare a column of type {data_type} with the literal {literal:?}"
        ))
    };
    let int = |bits: u32| -> Result<i64> {
        let v = literal.as_i64().ok_or_else(mismatch)?;
        let (min, max) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
        if (min..=max).contains(&i128::from(v)) {
            Ok(v)
        } else {
            Err(mismatch())
        }
    };
    Ok(match (literal, data_type) {
        (Literal::Boolean(Some(v)), DataType::Boolean) => Arc::new(BooleanArray::from(vec![*v])),
        (_, DataType::Int8) => Arc::new(Int8Array::from(vec![int(8)? as i8])),
        (_, DataType::Int16) => Arc::new(Int16Array::from(vec![int(16)? as i16])),
        (_, DataType::Int32) => Arc::new(Int32Array::from(vec![int(32)? as i32])),
        (_, DataType::Int64) => Arc::new(Int64Array::from(vec![int(64)?])),
        (Literal::Float32(Some(v)), DataType::Float32) => Arc::new(Float32Array::from(vec![*v])),
        (Literal::Float64(Some(v)), DataType::Float64) => Arc::new(Float64Array::from(vec![*v])),
        (
            Literal::Decimal128 {
                value: Some(v),
                scale,
                ..
            },
            DataType::Decimal128(precision, column_scale),
        ) => {
            let (from, to) = (i32::from(*scale), i32::from(*column_scale));
            let rescaled = if to >= from {
                10i128
                    .checked_pow((to - from) as u32)
                    .and_then(|m| v.checked_mul(m))
            } else {
                let d = 10i128.checked_pow((from - to) as u32);
                d.filter(|d| v % d == 0).map(|d| v / d)
            };
            let rescaled = rescaled.ok_or_else(mismatch)?;
            Arc::new(
                Decimal128Array::from(vec![rescaled])
                    .with_precision_and_scale(*precision, *column_scale)
                    .map_err(arrow_error)?,
            )
        }
        (Literal::Utf8(Some(v)), DataType::Utf8) => Arc::new(BinaryArray::from(vec![v.as_bytes()])),
        (Literal::Binary(Some(v)), DataType::Binary) => {
            Arc::new(BinaryArray::from(vec![v.as_slice()]))
        }
        (Literal::Date32(Some(v)), DataType::Date32) => Arc::new(Date32Array::from(vec![*v])),
        (Literal::Timestamp(Some(v)), DataType::Timestamp(TimeUnit::Microsecond, Some(tz))) => {
            Arc::new(TimestampMicrosecondArray::from(vec![*v]).with_timezone(tz.clone()))
        }
        (Literal::TimestampNtz(Some(v)), DataType::Timestamp(TimeUnit::Microsecond, None)) => {
            Arc::new(TimestampMicrosecondArray::from(vec![*v]))
        }
        _ => return Err(mismatch()),
    })
}
