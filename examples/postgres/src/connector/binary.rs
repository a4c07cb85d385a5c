//! COPY's binary format (PostgreSQL documentation, "COPY", section "Binary Format"), straight
//! to and from Arrow: a read decodes each field into the builder of its column, with no row
//! object in between; a write encodes the columns of a batch row by row into the bytes of
//! `COPY ... FROM STDIN (FORMAT binary)`.
//!
//! Each value is in the form of the type's `send` function: big-endian integers and floats,
//! dates and timestamps from 2000-01-01, `numeric` in base-10000 digits, arrays with their
//! dimensions and element OID.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Float32Builder,
    Float64Builder, Int16Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, ListArray, PrimitiveArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, FieldRef};
use serde::{Deserialize, Serialize};

use super::time::{
    date_from_postgres, date_out_of_range, date_to_postgres, timestamp_from_postgres,
    timestamp_out_of_range, timestamp_to_postgres,
};
use super::types::Kind;

/// The signature, flags and header extension length that open every COPY binary stream.
pub const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// The field count of the trailer that closes it.
pub const TRAILER: [u8; 2] = (-1i16).to_be_bytes();

/// Why a value could not be converted: the caller names the column.
pub type Conversion<T> = std::result::Result<T, String>;

/// The builder of one column of a read, fed with the fields of that column.
pub enum Decoder {
    Bool(BooleanBuilder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Decimal(Decimal128Builder, u8, i8),
    Text(StringBuilder),
    Bytes(BinaryBuilder),
    Date(Date32Builder),
    Timestamp(TimestampMicrosecondBuilder, Option<Arc<str>>),
    List(Box<ListDecoder>),
}

/// The builder of an array column: offsets and validity, and the decoder of the elements.
pub struct ListDecoder {
    field: FieldRef,
    element: Decoder,
    offsets: Vec<i32>,
    valid: Vec<bool>,
}

impl Decoder {
    /// A decoder of values of `kind`.
    pub fn new(kind: &Kind) -> Decoder {
        match kind {
            Kind::Bool => Decoder::Bool(BooleanBuilder::new()),
            Kind::Int16 => Decoder::Int16(Int16Builder::new()),
            Kind::Int32 => Decoder::Int32(Int32Builder::new()),
            Kind::Int64 => Decoder::Int64(Int64Builder::new()),
            Kind::Float32 => Decoder::Float32(Float32Builder::new()),
            Kind::Float64 => Decoder::Float64(Float64Builder::new()),
            Kind::Decimal {
                precision, scale, ..
            } => Decoder::Decimal(Decimal128Builder::new(), *precision, *scale),
            Kind::Text { .. } | Kind::AsText(_) => Decoder::Text(StringBuilder::new()),
            Kind::Bytes => Decoder::Bytes(BinaryBuilder::new()),
            Kind::Date => Decoder::Date(Date32Builder::new()),
            Kind::Timestamp => Decoder::Timestamp(TimestampMicrosecondBuilder::new(), None),
            Kind::TimestampTz | Kind::LocalTimestamp => {
                Decoder::Timestamp(TimestampMicrosecondBuilder::new(), Some(Arc::from("UTC")))
            }
            Kind::List(element) => Decoder::List(Box::new(ListDecoder {
                field: Arc::new(Field::new("element", element.data_type(), true)),
                element: Decoder::new(element),
                offsets: vec![0],
                valid: Vec::new(),
            })),
        }
    }

    /// Appends a NULL.
    pub fn append_null(&mut self) {
        match self {
            Decoder::Bool(b) => b.append_null(),
            Decoder::Int16(b) => b.append_null(),
            Decoder::Int32(b) => b.append_null(),
            Decoder::Int64(b) => b.append_null(),
            Decoder::Float32(b) => b.append_null(),
            Decoder::Float64(b) => b.append_null(),
            Decoder::Decimal(b, ..) => b.append_null(),
            Decoder::Text(b) => b.append_null(),
            Decoder::Bytes(b) => b.append_null(),
            Decoder::Date(b) => b.append_null(),
            Decoder::Timestamp(b, _) => b.append_null(),
            Decoder::List(list) => {
                let end = list.offsets[list.offsets.len() - 1];
                list.offsets.push(end);
                list.valid.push(false);
            }
        }
    }

    /// Appends the value whose binary form is `value`.
    pub fn append(&mut self, value: &[u8]) -> Conversion<()> {
        match self {
            Decoder::Bool(b) => b.append_value(fixed::<1>(value)?[0] != 0),
            Decoder::Int16(b) => b.append_value(i16::from_be_bytes(fixed(value)?)),
            Decoder::Int32(b) => b.append_value(i32::from_be_bytes(fixed(value)?)),
            Decoder::Int64(b) => b.append_value(i64::from_be_bytes(fixed(value)?)),
            Decoder::Float32(b) => b.append_value(f32::from_be_bytes(fixed(value)?)),
            Decoder::Float64(b) => b.append_value(f64::from_be_bytes(fixed(value)?)),
            Decoder::Decimal(b, precision, scale) => {
                b.append_value(numeric_to_decimal(value, *precision, *scale)?)
            }
            Decoder::Text(b) => b.append_value(
                std::str::from_utf8(value).map_err(|_| "a text that is not UTF-8".to_string())?,
            ),
            Decoder::Bytes(b) => b.append_value(value),
            Decoder::Date(b) => {
                b.append_value(date_from_postgres(i32::from_be_bytes(fixed(value)?))?)
            }
            Decoder::Timestamp(b, _) => {
                b.append_value(timestamp_from_postgres(i64::from_be_bytes(fixed(value)?))?)
            }
            Decoder::List(list) => list.append(value)?,
        }
        Ok(())
    }

    /// An array of `rows` NULLs of this decoder's type.
    pub fn finish_nulls(&mut self, rows: usize) -> ArrayRef {
        for _ in 0..rows {
            self.append_null();
        }
        self.finish()
    }

    /// Whether the column's values are of variable width, whose bytes count towards a batch's
    /// byte budget: text, bytes and arrays.
    fn variable_width(&self) -> bool {
        matches!(
            self,
            Decoder::Text(_) | Decoder::Bytes(_) | Decoder::List(_)
        )
    }

    /// The array of the values appended since the last call. The builder starts the next batch
    /// with room for as many values (and bytes) as this one had, so that it fills without
    /// growing: a batch's buffers are handed to Spark, and a builder that finished has none.
    pub fn finish(&mut self) -> ArrayRef {
        /// The builder `b`, replaced with one of room for as many values.
        fn full<B: ArrayBuilder>(b: &mut B, fresh: impl FnOnce(usize) -> B) -> B {
            let rows = b.len();
            std::mem::replace(b, fresh(rows))
        }
        match self {
            Decoder::Bool(b) => Arc::new(full(b, BooleanBuilder::with_capacity).finish()),
            Decoder::Int16(b) => Arc::new(full(b, Int16Builder::with_capacity).finish()),
            Decoder::Int32(b) => Arc::new(full(b, Int32Builder::with_capacity).finish()),
            Decoder::Int64(b) => Arc::new(full(b, Int64Builder::with_capacity).finish()),
            Decoder::Float32(b) => Arc::new(full(b, Float32Builder::with_capacity).finish()),
            Decoder::Float64(b) => Arc::new(full(b, Float64Builder::with_capacity).finish()),
            Decoder::Decimal(b, precision, scale) => Arc::new(
                full(b, Decimal128Builder::with_capacity)
                    .finish()
                    .with_precision_and_scale(*precision, *scale)
                    .unwrap_or_else(|_| unreachable!("precision and scale come from Kind")),
            ),
            Decoder::Text(b) => {
                let bytes = b.values_slice().len();
                Arc::new(full(b, |rows| StringBuilder::with_capacity(rows, bytes)).finish())
            }
            Decoder::Bytes(b) => {
                let bytes = b.values_slice().len();
                Arc::new(full(b, |rows| BinaryBuilder::with_capacity(rows, bytes)).finish())
            }
            Decoder::Date(b) => Arc::new(full(b, Date32Builder::with_capacity).finish()),
            Decoder::Timestamp(b, tz) => Arc::new(
                full(b, TimestampMicrosecondBuilder::with_capacity)
                    .finish()
                    .with_timezone_opt(tz.clone()),
            ),
            Decoder::List(list) => list.finish(),
        }
    }
}

impl ListDecoder {
    /// An array: `ndim`, a has-nulls flag, the element OID, then per dimension its length and
    /// lower bound, then each element as a field (length, or -1 for NULL, and its bytes).
    fn append(&mut self, value: &[u8]) -> Conversion<()> {
        let mut at = 0;
        let truncated = || "a truncated array".to_string();
        let int = |at: &mut usize| -> Conversion<i32> {
            let bytes = value.get(*at..at.saturating_add(4)).ok_or_else(truncated)?;
            *at += 4;
            Ok(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
        };
        let dimensions = int(&mut at)?;
        let _has_nulls = int(&mut at)?;
        let _element_oid = int(&mut at)?;
        let count = match dimensions {
            0 => 0,
            1 => {
                let length = int(&mut at)?;
                let _lower_bound = int(&mut at)?;
                if length < 0 {
                    return Err(format!(
                        "an array that declares {length} elements, a negative count"
                    ));
                }
                length
            }
            n => {
                return Err(format!(
                    "an array of {n} dimensions, which Spark's array of version 1 reads as one \
                     dimension only: select `array_to_json(column)::text`, or unnest it"
                ))
            }
        };
        for _ in 0..count {
            let length = int(&mut at)?;
            if length == -1 {
                self.element.append_null();
                continue;
            }
            let length = usize::try_from(length)
                .map_err(|_| format!("an array element of length {length}"))?;
            let end = at.checked_add(length).ok_or_else(truncated)?;
            let element = value.get(at..end).ok_or_else(truncated)?;
            at = end;
            self.element.append(element)?;
        }
        if at != value.len() {
            return Err(format!(
                "an array with {} bytes after the {count} elements it declares",
                value.len() - at
            ));
        }
        let end = self.offsets[self.offsets.len() - 1]
            .checked_add(count)
            .ok_or_else(|| {
                "more array elements in a batch than Arrow's 32-bit offsets hold".to_string()
            })?;
        self.offsets.push(end);
        self.valid.push(true);
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let valid = std::mem::take(&mut self.valid);
        let nulls = valid.iter().any(|v| !v).then(|| valid.into());
        Arc::new(ListArray::new(
            self.field.clone(),
            // Lengths are counts of elements, so the offsets only grow.
            OffsetBuffer::new(offsets.into()),
            self.element.finish(),
            nulls,
        ))
    }
}

fn fixed<const N: usize>(value: &[u8]) -> Conversion<[u8; N]> {
    value
        .try_into()
        .map_err(|_| format!("{} bytes where the type has {N}", value.len()))
}

/// Powers of ten that an `i128` holds.
const POW10: [i128; 39] = {
    let mut powers = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        powers[i] = powers[i - 1] * 10;
        i += 1;
    }
    powers
};

/// A `numeric` as the unscaled value of `decimal(precision, scale)`, rounded half up (away
/// from zero) past `scale` digits, as Spark's JDBC source rounds.
fn numeric_to_decimal(value: &[u8], precision: u8, scale: i8) -> Conversion<i128> {
    match numeric_fast(value, precision, scale) {
        Some(unscaled) => Ok(unscaled),
        None => numeric_digits(value, precision, scale),
    }
}

/// [`numeric_to_decimal`] in a few integer operations for the common values: up to 9 base-10000
/// digits (36 decimal ones, which an `i128` holds) that fit the precision. `None` for the
/// others (and for NaN, infinities, too many digits), which the digit-by-digit path converts or
/// refuses with its message.
fn numeric_fast(value: &[u8], precision: u8, scale: i8) -> Option<i128> {
    let header = value.get(..8)?;
    let digits = usize::from(u16::from_be_bytes([header[0], header[1]]));
    if digits > 9 || value.len() != 8 + 2 * digits {
        return None;
    }
    let weight = i32::from(i16::from_be_bytes([header[2], header[3]]));
    let negative = match u16::from_be_bytes([header[4], header[5]]) {
        0x0000 => false,
        0x4000 => true,
        _ => return None,
    };
    let mut whole: i128 = 0;
    for group in value[8..].chunks_exact(2) {
        let group = u16::from_be_bytes([group[0], group[1]]);
        if group > 9999 {
            return None;
        }
        whole = whole * 10_000 + i128::from(group);
    }
    // value = whole * 10^(4 * (weight - digits + 1)); unscaled = value * 10^scale.
    let exponent = 4 * (weight - digits as i32 + 1) + i32::from(scale);
    let unscaled = if exponent < 0 && exponent > -20 && digits <= 4 {
        // Up to 16 decimal digits, rounded in 64 bits: the usual numeric whose base-10000
        // digits go past its scale (12.34 is 0012 3400 at scale 2), without a 128-bit division.
        let (whole, divisor) = (whole as u64, 10u64.pow(exponent.unsigned_abs()));
        let (quotient, remainder) = (whole / divisor, whole % divisor);
        i128::from(quotient + u64::from(remainder >= divisor - remainder))
    } else if exponent >= 0 {
        whole.checked_mul(*POW10.get(exponent as usize)?)?
    } else {
        let divisor = *POW10.get(exponent.unsigned_abs() as usize)?;
        let (quotient, remainder) = (whole / divisor, whole % divisor);
        // Half up: the dropped digits are at least half of the divisor.
        quotient + i128::from(remainder >= divisor - remainder)
    };
    if unscaled >= *POW10.get(usize::from(precision))? {
        return None;
    }
    Some(if negative { -unscaled } else { unscaled })
}

/// [`numeric_to_decimal`] digit by digit, for any `numeric`.
fn numeric_digits(value: &[u8], precision: u8, scale: i8) -> Conversion<i128> {
    let word = |i: usize| -> Conversion<i16> {
        value
            .get(2 * i..2 * i + 2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a truncated numeric".to_string())
    };
    let digits = word(0)?;
    let weight = i32::from(word(1)?);
    let negative = match word(2)? as u16 {
        0x0000 => false,
        0x4000 => true,
        0xC000 => return Err("NaN, which Spark's decimal cannot hold".into()),
        0xD000 => return Err("Infinity, which Spark's decimal cannot hold".into()),
        0xF000 => return Err("-Infinity, which Spark's decimal cannot hold".into()),
        _ => return Err("a numeric of unknown sign".into()),
    };
    let too_big = || {
        format!("a value with more than {precision} digits, which decimal({precision},{scale}) cannot hold")
    };
    let last = -i32::from(scale);
    let mut unscaled: i128 = 0;
    // The exponent of ten of the next decimal digit.
    let mut exponent = 4 * weight + 3;
    let mut round_up = false;
    'groups: for i in 0..digits as usize {
        let group = word(4 + i)?;
        for power in [1000, 100, 10, 1] {
            let digit = i128::from(group / power % 10);
            if exponent < last {
                // Only the first digit past the scale decides; a value whose first digit lies
                // further down (0.00005 at scale 0) rounds to zero.
                round_up = exponent == last - 1 && digit >= 5;
                break 'groups;
            }
            unscaled = unscaled
                .checked_mul(10)
                .and_then(|u| u.checked_add(digit))
                .ok_or_else(too_big)?;
            exponent -= 1;
        }
    }
    while exponent >= last && !round_up {
        if unscaled == 0 {
            // Zeros to the scale: nothing to shift.
            break;
        }
        unscaled = unscaled.checked_mul(10).ok_or_else(too_big)?;
        exponent -= 1;
    }
    if round_up {
        unscaled += 1;
    }
    if unscaled >= 10i128.pow(u32::from(precision)) {
        return Err(too_big());
    }
    Ok(if negative { -unscaled } else { unscaled })
}

/// The `numeric` binary form of `unscaled / 10^scale`: base-10000 digits aligned on the
/// decimal point, without leading or trailing zero digits, taken from the integer directly.
pub fn decimal_to_numeric(unscaled: i128, scale: i8, out: &mut Vec<u8>) {
    let scale = scale.max(0) as usize;
    // The lowest digit ends at the decimal point's alignment: `pad` zeros below the value's
    // last decimal digit make the fraction a whole number of base-10000 digits.
    let pad = (4 - scale % 4) % 4;
    let first = POW10[4 - pad] as u128;
    let mut magnitude = unscaled.unsigned_abs();
    // 10^38 needs 11 base-10000 digits with the padding.
    let mut groups = [0u16; 11];
    groups[0] = ((magnitude % first) * POW10[pad] as u128) as u16;
    magnitude /= first;
    let mut count = 1;
    while magnitude > 0 {
        groups[count] = (magnitude % 10_000) as u16;
        magnitude /= 10_000;
        count += 1;
    }
    // The weight of the lowest digit, in base-10000 places.
    let mut lowest = -(((scale + pad) / 4) as i16);
    let mut low = 0;
    while low < count && groups[low] == 0 {
        low += 1;
        lowest += 1;
    }
    while count > low && groups[count - 1] == 0 {
        count -= 1;
    }
    let digits = &groups[low..count];
    let weight = if digits.is_empty() {
        0
    } else {
        lowest + digits.len() as i16 - 1
    };
    let sign: u16 = if unscaled < 0 && !digits.is_empty() {
        0x4000
    } else {
        0
    };
    out.extend_from_slice(&(digits.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&(scale as i16).to_be_bytes());
    for group in digits.iter().rev() {
        out.extend_from_slice(&group.to_be_bytes());
    }
}

/// When a read closes a batch: after `rows` rows, or as soon as the values of its
/// variable-width columns (text, bytes, arrays) hold `bytes` bytes, whichever comes first.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct BatchSize {
    pub rows: usize,
    pub bytes: usize,
}

/// The reading side of a COPY binary stream, fed with the chunks that the client receives (one
/// `CopyData` message each, normally one row): each complete row is decoded from the chunk in
/// place, and only a row split across chunks is copied, until the rest of it arrives.
pub struct CopyDecoder {
    size: BatchSize,
    pending: Vec<u8>,
    header: bool,
    ended: bool,
    /// The rows of the batch being decoded, and the bytes of their variable-width values.
    rows: usize,
    bytes: usize,
}

/// What went wrong in a stream: a value (the caller names its column), or the format.
pub enum ReadError {
    /// A value that does not convert: its column, why, and its binary form (to find its row).
    Value {
        column: usize,
        why: String,
        value: Vec<u8>,
    },
    Format(String),
}

impl CopyDecoder {
    /// A decoder that fills batches of `size`.
    pub fn new(size: BatchSize) -> Self {
        CopyDecoder {
            size,
            pending: Vec::new(),
            header: false,
            ended: false,
            rows: 0,
            bytes: 0,
        }
    }

    /// Decodes the complete rows of what was kept and `chunk` into `decoders` until the batch
    /// is full, and keeps the rest. Returns whether the batch is full: then take it
    /// ([`CopyDecoder::take_batch`]) and call again with an empty chunk.
    pub fn decode(&mut self, chunk: &[u8], decoders: &mut [Decoder]) -> Result<bool, ReadError> {
        if self.pending.is_empty() {
            let used = self.rows(chunk, decoders)?;
            self.pending.extend_from_slice(&chunk[used..]);
        } else {
            self.pending.extend_from_slice(chunk);
            let pending = std::mem::take(&mut self.pending);
            let result = self.rows(&pending, decoders);
            self.pending = pending;
            let used = result?;
            self.pending.drain(..used);
        }
        Ok(self.is_full())
    }

    fn is_full(&self) -> bool {
        self.rows >= self.size.rows || self.bytes >= self.size.bytes
    }

    /// The number of rows of the batch decoded so far, starting the next one.
    pub fn take_batch(&mut self) -> usize {
        self.bytes = 0;
        std::mem::take(&mut self.rows)
    }

    /// Checks that the stream ended with its trailer, after whole rows, and nothing after it.
    pub fn finish(&self) -> Result<(), ReadError> {
        if !self.header {
            return Err(ReadError::Format(
                "the stream ended before COPY's binary header".into(),
            ));
        }
        if !self.ended {
            return Err(ReadError::Format(
                "the stream ended before COPY's trailer, in the middle of a row".into(),
            ));
        }
        if !self.pending.is_empty() {
            return Err(ReadError::Format(format!(
                "{} bytes after COPY's trailer",
                self.pending.len()
            )));
        }
        Ok(())
    }

    /// Decodes rows from `input` until the batch is full, the trailer, or a row that `input`
    /// does not hold whole; returns the bytes they took.
    fn rows(&mut self, input: &[u8], decoders: &mut [Decoder]) -> Result<usize, ReadError> {
        let mut at = 0;
        if !self.header {
            let Some(header) = input.get(..HEADER.len()) else {
                return Ok(0);
            };
            if header[..11] != HEADER[..11] {
                return Err(ReadError::Format(
                    "the stream is not COPY's binary format".into(),
                ));
            }
            let extension = u32::from_be_bytes([header[15], header[16], header[17], header[18]]);
            at = usize::try_from(extension)
                .ok()
                .and_then(|extension| HEADER.len().checked_add(extension))
                .ok_or_else(|| ReadError::Format("a header extension past any input".into()))?;
            if input.len() < at {
                return Ok(0);
            }
            self.header = true;
        }
        while !self.is_full() && !self.ended {
            let Some(count) = input.get(at..at + 2) else {
                break;
            };
            let count = i16::from_be_bytes([count[0], count[1]]);
            if count == -1 {
                self.ended = true;
                at += 2;
                break;
            }
            if usize::try_from(count).ok() != Some(decoders.len()) {
                return Err(ReadError::Format(format!(
                    "a row of {count} fields where the query selects {}",
                    decoders.len()
                )));
            }
            // The whole row first, so that no column gets a value of a row that is not here.
            let mut end = at + 2;
            let mut bytes = 0usize;
            for decoder in decoders.iter() {
                let Some(length) = input.get(end..end + 4) else {
                    return Ok(at);
                };
                let length = i32::from_be_bytes([length[0], length[1], length[2], length[3]]);
                let length = match length {
                    -1 => 0,
                    _ => usize::try_from(length)
                        .map_err(|_| ReadError::Format(format!("a field of length {length}")))?,
                };
                if decoder.variable_width() {
                    bytes += length;
                }
                end = end
                    .checked_add(4 + length)
                    .ok_or_else(|| ReadError::Format("a field past any input".into()))?;
            }
            if end > input.len() {
                return Ok(at);
            }
            let mut field = at + 2;
            for (column, decoder) in decoders.iter_mut().enumerate() {
                let length = i32::from_be_bytes([
                    input[field],
                    input[field + 1],
                    input[field + 2],
                    input[field + 3],
                ]);
                field += 4;
                if length < 0 {
                    decoder.append_null();
                    continue;
                }
                let value = &input[field..field + length as usize];
                field += length as usize;
                decoder.append(value).map_err(|why| ReadError::Value {
                    column,
                    why,
                    value: value.to_vec(),
                })?;
            }
            at = end;
            self.rows += 1;
            self.bytes += bytes;
        }
        Ok(at)
    }
}

/// A column of a batch to write, downcast once.
pub enum Encoder<'a> {
    Bool(&'a arrow_array::BooleanArray),
    Int8(&'a PrimitiveArray<Int8Type>),
    Int16(&'a PrimitiveArray<Int16Type>),
    Int32(&'a PrimitiveArray<Int32Type>),
    Int64(&'a PrimitiveArray<Int64Type>),
    Float32(&'a PrimitiveArray<Float32Type>),
    Float64(&'a PrimitiveArray<Float64Type>),
    Decimal(&'a PrimitiveArray<Decimal128Type>, i8),
    Text(&'a dyn Array),
    Bytes(&'a dyn Array),
    Date(&'a PrimitiveArray<Date32Type>),
    Timestamp(&'a PrimitiveArray<TimestampMicrosecondType>),
    List(&'a ListArray, Box<Encoder<'a>>, u32),
}

impl<'a> Encoder<'a> {
    /// The encoder of `array`, whose type `kind_of_arrow` accepted as `kind`.
    pub fn new(array: &'a dyn Array, kind: &Kind) -> Encoder<'a> {
        match (array.data_type(), kind) {
            (DataType::Boolean, _) => Encoder::Bool(array.as_boolean()),
            (DataType::Int8, _) => Encoder::Int8(array.as_primitive()),
            (DataType::Int16, _) => Encoder::Int16(array.as_primitive()),
            (DataType::Int32, _) => Encoder::Int32(array.as_primitive()),
            (DataType::Int64, _) => Encoder::Int64(array.as_primitive()),
            (DataType::Float32, _) => Encoder::Float32(array.as_primitive()),
            (DataType::Float64, _) => Encoder::Float64(array.as_primitive()),
            (DataType::Decimal128(_, scale), _) => Encoder::Decimal(array.as_primitive(), *scale),
            (DataType::Utf8 | DataType::LargeUtf8, _) => Encoder::Text(array),
            (DataType::Date32, _) => Encoder::Date(array.as_primitive()),
            (DataType::Timestamp(..), _) => Encoder::Timestamp(array.as_primitive()),
            (DataType::List(_), Kind::List(element)) => {
                let list = array.as_list::<i32>();
                Encoder::List(
                    list,
                    Box::new(Encoder::new(list.values().as_ref(), element)),
                    element.oid(),
                )
            }
            _ => Encoder::Bytes(array),
        }
    }

    fn array(&self) -> &dyn Array {
        match self {
            Encoder::Bool(a) => *a,
            Encoder::Int8(a) => *a,
            Encoder::Int16(a) => *a,
            Encoder::Int32(a) => *a,
            Encoder::Int64(a) => *a,
            Encoder::Float32(a) => *a,
            Encoder::Float64(a) => *a,
            Encoder::Decimal(a, _) => *a,
            Encoder::Text(a) | Encoder::Bytes(a) => *a,
            Encoder::Date(a) => *a,
            Encoder::Timestamp(a) => *a,
            Encoder::List(a, ..) => *a,
        }
    }

    /// Appends the field of row `row`: its length (or -1 for NULL), then its bytes; or says
    /// why PostgreSQL's type cannot hold the value (the caller names the column).
    pub fn field(&self, row: usize, out: &mut Vec<u8>) -> Conversion<()> {
        if self.array().is_null(row) {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            return Ok(());
        }
        let mut fixed = |bytes: &[u8]| -> Conversion<()> {
            let length = i32::try_from(bytes.len())
                .map_err(|_| "a value of 2 GiB or more, past any field of COPY".to_string())?;
            out.extend_from_slice(&length.to_be_bytes());
            out.extend_from_slice(bytes);
            Ok(())
        };
        match self {
            Encoder::Bool(a) => fixed(&[u8::from(a.value(row))]),
            Encoder::Int8(a) => fixed(&i16::from(a.value(row)).to_be_bytes()),
            Encoder::Int16(a) => fixed(&a.value(row).to_be_bytes()),
            Encoder::Int32(a) => fixed(&a.value(row).to_be_bytes()),
            Encoder::Int64(a) => fixed(&a.value(row).to_be_bytes()),
            Encoder::Float32(a) => fixed(&a.value(row).to_be_bytes()),
            Encoder::Float64(a) => fixed(&a.value(row).to_be_bytes()),
            Encoder::Date(a) => {
                let days = a.value(row);
                let days = date_to_postgres(days).ok_or_else(|| date_out_of_range(days))?;
                fixed(&days.to_be_bytes())
            }
            Encoder::Timestamp(a) => {
                let micros = a.value(row);
                let micros =
                    timestamp_to_postgres(micros).ok_or_else(|| timestamp_out_of_range(micros))?;
                fixed(&micros.to_be_bytes())
            }
            Encoder::Text(a) => match a.as_string_opt::<i32>() {
                Some(strings) => fixed(strings.value(row).as_bytes()),
                None => fixed(a.as_string::<i64>().value(row).as_bytes()),
            },
            Encoder::Bytes(a) => match a.as_binary_opt::<i32>() {
                Some(bytes) => fixed(bytes.value(row)),
                None => fixed(a.as_binary::<i64>().value(row)),
            },
            Encoder::Decimal(a, scale) => {
                let start = out.len();
                out.extend_from_slice(&[0; 4]);
                decimal_to_numeric(a.value(row), *scale, out);
                patch_length(out, start)
            }
            Encoder::List(list, element, oid) => {
                let start = out.len();
                out.extend_from_slice(&[0; 4]);
                let offsets = list.value_offsets();
                let (from, to) = (offsets[row] as usize, offsets[row + 1] as usize);
                let values = element.array();
                let has_nulls = (from..to).any(|i| values.is_null(i));
                out.extend_from_slice(&i32::from(to > from).to_be_bytes());
                out.extend_from_slice(&i32::from(has_nulls).to_be_bytes());
                out.extend_from_slice(&oid.to_be_bytes());
                if to > from {
                    let count = i32::try_from(to - from)
                        .map_err(|_| "an array of 2^31 elements or more".to_string())?;
                    out.extend_from_slice(&count.to_be_bytes());
                    out.extend_from_slice(&1i32.to_be_bytes());
                }
                for i in from..to {
                    element.field(i, out)?;
                }
                patch_length(out, start)
            }
        }
    }
}

/// Writes at `start` the length of what follows it.
fn patch_length(out: &mut [u8], start: usize) -> Conversion<()> {
    let length = i32::try_from(out.len() - start - 4)
        .map_err(|_| "a value of 2 GiB or more, past any field of COPY".to_string())?;
    out[start..start + 4].copy_from_slice(&length.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(unscaled: i128, precision: u8, scale: i8) -> Conversion<i128> {
        let mut bytes = Vec::new();
        decimal_to_numeric(unscaled, scale, &mut bytes);
        numeric_to_decimal(&bytes, precision, scale)
    }

    /// `decimal_to_numeric` through the decimal text, as the encoding is defined.
    fn numeric_through_text(unscaled: i128, scale: i8, out: &mut Vec<u8>) {
        let scale = scale.max(0) as usize;
        let text = unscaled.unsigned_abs().to_string();
        let text = if text.len() <= scale {
            format!("{}{text}", "0".repeat(scale + 1 - text.len()))
        } else {
            text
        };
        let (integer, fraction) = text.split_at(text.len() - scale);
        let pad_left = (4 - integer.len() % 4) % 4;
        let pad_right = (4 - fraction.len() % 4) % 4;
        let digits: Vec<u8> = std::iter::repeat_n(b'0', pad_left)
            .chain(integer.bytes())
            .chain(fraction.bytes())
            .chain(std::iter::repeat_n(b'0', pad_right))
            .map(|d| d - b'0')
            .collect();
        let mut groups: Vec<i16> = digits
            .chunks(4)
            .map(|c| c.iter().fold(0i16, |acc, d| acc * 10 + i16::from(*d)))
            .collect();
        let mut weight = ((pad_left + integer.len()) / 4) as i16 - 1;
        let leading = groups.iter().take_while(|g| **g == 0).count();
        groups.drain(..leading);
        weight -= leading as i16;
        while groups.last() == Some(&0) {
            groups.pop();
        }
        if groups.is_empty() {
            weight = 0;
        }
        let sign: u16 = if unscaled < 0 && !groups.is_empty() {
            0x4000
        } else {
            0
        };
        out.extend_from_slice(&(groups.len() as i16).to_be_bytes());
        out.extend_from_slice(&weight.to_be_bytes());
        out.extend_from_slice(&sign.to_be_bytes());
        out.extend_from_slice(&(scale as i16).to_be_bytes());
        for group in groups {
            out.extend_from_slice(&group.to_be_bytes());
        }
    }

    #[test]
    fn numerics_are_encoded_as_through_their_text() {
        let mut values = vec![0i128, 1, -1, 9_999, 10_000, -10_001, 12_345_678_900];
        values.push(i128::from(i64::MAX) * 1_000_000_000_000_000_000);
        values.push(99_999_999_999_999_999_999_999_999_999_999_999_999);
        values.push(-99_999_999_999_999_999_999_999_999_999_999_999_999);
        for unscaled in values {
            for scale in 0..=38i8 {
                let (mut fast, mut text) = (Vec::new(), Vec::new());
                decimal_to_numeric(unscaled, scale, &mut fast);
                numeric_through_text(unscaled, scale, &mut text);
                assert_eq!(fast, text, "{unscaled}e-{scale}");
            }
        }
    }

    #[test]
    fn the_fast_numeric_path_rounds_as_the_digit_path() {
        // Values written at one scale and read at a lower one (rounded half up), or a higher
        // one: the 64-bit and 128-bit arithmetic of `numeric_fast` against `numeric_digits`.
        let values = [
            0i128,
            1,
            -1,
            5,
            -5,
            49,
            50,
            -50,
            9_999,
            123_456_789,
            -987_654_321_098,
            9_999_999_999_999_999,
            -1_234_567_890_123_456,
        ];
        for unscaled in values {
            for written in 0..=16i8 {
                let mut bytes = Vec::new();
                decimal_to_numeric(unscaled, written, &mut bytes);
                for read in 0..=20i8 {
                    let fast = numeric_fast(&bytes, 38, read);
                    let digits = numeric_digits(&bytes, 38, read);
                    if let Some(fast) = fast {
                        assert_eq!(
                            Ok(fast),
                            digits,
                            "{unscaled}e-{written} read at scale {read}"
                        );
                    }
                }
            }
        }
    }

    /// A COPY stream of `(id bigint, name text)` rows, NULL where `None`.
    fn stream(rows: &[(i64, Option<&str>)]) -> Vec<u8> {
        let mut bytes = HEADER.to_vec();
        for (id, name) in rows {
            bytes.extend_from_slice(&2i16.to_be_bytes());
            bytes.extend_from_slice(&8i32.to_be_bytes());
            bytes.extend_from_slice(&id.to_be_bytes());
            match name {
                Some(name) => {
                    bytes.extend_from_slice(&(name.len() as i32).to_be_bytes());
                    bytes.extend_from_slice(name.as_bytes());
                }
                None => bytes.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        bytes.extend_from_slice(&TRAILER);
        bytes
    }

    /// Decodes `chunks` into batches of `size`: the rows of each batch, and the decoders.
    fn batches(
        chunks: &[&[u8]],
        kinds: &[Kind],
        size: BatchSize,
    ) -> Result<(Vec<usize>, Vec<Decoder>), String> {
        let mut copy = CopyDecoder::new(size);
        let mut decoders: Vec<Decoder> = kinds.iter().map(Decoder::new).collect();
        let mut batches = Vec::new();
        let failed = |e: ReadError| match e {
            ReadError::Value { column, why, .. } => format!("column {column}: {why}"),
            ReadError::Format(why) => why,
        };
        for chunk in chunks {
            let mut input = *chunk;
            while copy.decode(input, &mut decoders).map_err(failed)? {
                batches.push(copy.take_batch());
                input = &[];
            }
        }
        copy.finish().map_err(failed)?;
        let last = copy.take_batch();
        if last > 0 {
            batches.push(last);
        }
        Ok((batches, decoders))
    }

    const ID_NAME: [Kind; 2] = [Kind::Int64, Kind::Text { padded: false }];

    #[test]
    fn rows_split_across_chunks_of_any_size_decode_whole() -> Result<(), String> {
        let rows = [
            (1, Some("one")),
            (-2, None),
            (3, Some("")),
            (4, Some("four")),
        ];
        let bytes = stream(&rows);
        for size in 1..=bytes.len() {
            for room in [1, 3, 100] {
                let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
                let batch = BatchSize {
                    rows: room,
                    bytes: usize::MAX,
                };
                let (batches, mut decoders) = batches(&chunks, &ID_NAME, batch)
                    .map_err(|e| format!("chunks of {size}: {e}"))?;
                let decoded: usize = batches.iter().sum();
                assert_eq!(decoded, rows.len(), "chunks of {size}, room {room}");
                assert!(batches.iter().all(|&n| n <= room));
                let ids = decoders[0].finish();
                let names = decoders[1].finish();
                let ids: Vec<i64> = ids.as_primitive::<Int64Type>().values().to_vec();
                let names: Vec<Option<&str>> = names.as_string::<i32>().iter().collect();
                assert_eq!(ids, [1, -2, 3, 4], "chunks of {size}, room {room}");
                assert_eq!(names, rows.map(|r| r.1), "chunks of {size}, room {room}");
            }
        }
        Ok(())
    }

    #[test]
    fn a_batch_closes_at_its_byte_budget_of_variable_width_values() -> Result<(), String> {
        let text = "x".repeat(100);
        let rows: Vec<(i64, Option<&str>)> = (0..10).map(|i| (i, Some(text.as_str()))).collect();
        let bytes = stream(&rows);
        let size = BatchSize {
            rows: 1000,
            bytes: 250,
        };
        // 100 bytes of text a row, 8 of id that do not count: the third row reaches 250.
        let (batches, _) = batches(&[&bytes], &ID_NAME, size)?;
        assert_eq!(batches, [3, 3, 3, 1]);
        Ok(())
    }

    #[test]
    fn a_stream_without_its_trailer_is_refused() {
        let bytes = stream(&[(1, Some("one"))]);
        let cut = bytes.len() - TRAILER.len() - 2;
        let size = BatchSize {
            rows: 10,
            bytes: usize::MAX,
        };
        assert!(batches(&[&bytes[..cut]], &ID_NAME, size)
            .is_err_and(|e| e == "the stream ended before COPY's trailer, in the middle of a row"));
    }

    #[test]
    fn bytes_after_the_trailer_and_bad_lengths_are_refused() {
        let size = BatchSize {
            rows: 10,
            bytes: usize::MAX,
        };
        let mut bytes = stream(&[(1, Some("one"))]);
        bytes.extend_from_slice(b"more");
        assert_eq!(
            batches(&[&bytes], &ID_NAME, size).err().as_deref(),
            Some("4 bytes after COPY's trailer")
        );
        let mut bytes = HEADER.to_vec();
        bytes.extend_from_slice(&2i16.to_be_bytes());
        bytes.extend_from_slice(&(-2i32).to_be_bytes());
        assert_eq!(
            batches(&[&bytes], &ID_NAME, size).err().as_deref(),
            Some("a field of length -2")
        );
    }

    /// A stream of one `int4[]` column whose row holds `array`, the bytes of its value.
    fn array_stream(array: &[u8]) -> Vec<u8> {
        let mut bytes = HEADER.to_vec();
        bytes.extend_from_slice(&1i16.to_be_bytes());
        bytes.extend_from_slice(&(array.len() as i32).to_be_bytes());
        bytes.extend_from_slice(array);
        bytes.extend_from_slice(&TRAILER);
        bytes
    }

    /// The binary form of a one-dimensional `int4[]` that declares `count` elements and holds
    /// `values`.
    fn int4_array(count: i32, values: &[i32]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for int in [1, 0, 23, count, 1] {
            bytes.extend_from_slice(&i32::to_be_bytes(int));
        }
        for value in values {
            bytes.extend_from_slice(&4i32.to_be_bytes());
            bytes.extend_from_slice(&value.to_be_bytes());
        }
        bytes
    }

    #[test]
    fn arrays_with_a_negative_count_or_bytes_after_their_elements_are_refused() {
        let kinds = [Kind::List(Box::new(Kind::Int32))];
        let size = BatchSize {
            rows: 10,
            bytes: usize::MAX,
        };
        let decode = |array: &[u8]| batches(&[&array_stream(array)], &kinds, size).err();
        assert_eq!(decode(&int4_array(2, &[7, 8])), None);
        // Once read as no element, then a decreasing offset that failed the batch's array.
        assert_eq!(
            decode(&int4_array(-3, &[])).as_deref(),
            Some("column 0: an array that declares -3 elements, a negative count")
        );
        assert_eq!(
            decode(&int4_array(1, &[7, 8])).as_deref(),
            Some("column 0: an array with 8 bytes after the 1 elements it declares")
        );
        assert_eq!(
            decode(&int4_array(3, &[7, 8])).as_deref(),
            Some("column 0: a truncated array")
        );
        let mut bad_element = int4_array(1, &[]);
        bad_element.extend_from_slice(&(-7i32).to_be_bytes());
        assert_eq!(
            decode(&bad_element).as_deref(),
            Some("column 0: an array element of length -7")
        );
    }

    #[test]
    fn dates_and_timestamps_outside_sparks_range_are_refused() {
        let size = BatchSize {
            rows: 10,
            bytes: usize::MAX,
        };
        let one = |kind: Kind, value: &[u8]| {
            let mut bytes = HEADER.to_vec();
            bytes.extend_from_slice(&1i16.to_be_bytes());
            bytes.extend_from_slice(&(value.len() as i32).to_be_bytes());
            bytes.extend_from_slice(value);
            bytes.extend_from_slice(&TRAILER);
            batches(&[&bytes], &[kind], size).err()
        };
        // PostgreSQL's last date, which Spark holds, and last timestamp, which it does not.
        assert_eq!(one(Kind::Date, &2_145_031_948i32.to_be_bytes()), None);
        assert_eq!(
            one(Kind::Date, &i32::MAX.to_be_bytes()).as_deref(),
            Some("column 0: an infinite date, which Spark's date cannot hold")
        );
        assert_eq!(
            one(
                Kind::TimestampTz,
                &9_223_371_331_199_999_999i64.to_be_bytes()
            )
            .as_deref(),
            Some(
                "column 0: the timestamp 294276-12-31 23:59:59.999999, after Spark's last \
                 instant, 294247-01-10 04:00:54.775807 UTC"
            )
        );
    }

    #[test]
    fn values_that_postgresql_cannot_hold_are_refused_on_write() {
        let dates = arrow_array::Date32Array::from(vec![0, i32::MAX]);
        let encoder = Encoder::new(&dates, &Kind::Date);
        let mut out = Vec::new();
        assert_eq!(encoder.field(0, &mut out), Ok(()));
        assert_eq!(out[4..], (-10_957i32).to_be_bytes());
        assert!(encoder
            .field(1, &mut out)
            .is_err_and(|e| e.starts_with("the date 5881580-07-11, outside PostgreSQL's range")));
        let instants = arrow_array::TimestampMicrosecondArray::from(vec![i64::MIN + 1]);
        let encoder = Encoder::new(&instants, &Kind::Timestamp);
        assert!(encoder
            .field(0, &mut out)
            .is_err_and(|e| e.contains("outside PostgreSQL's range")));
    }

    #[test]
    fn decimals_round_trip_through_numeric() -> Conversion<()> {
        for (unscaled, precision, scale) in [
            (0, 10, 2),
            (12345, 10, 2),
            (-12345, 10, 2),
            (1, 38, 18),
            (-99_999_999_999_999_999_999_999_999_999_999_999_999, 38, 0),
            (10_000_000_000, 12, 0),
            (5, 5, 5),
            (100_000_000, 12, 4),
        ] {
            assert_eq!(
                round_trip(unscaled, precision, scale)?,
                unscaled,
                "{unscaled}"
            );
        }
        Ok(())
    }

    #[test]
    fn extra_digits_round_half_up() -> Conversion<()> {
        let mut bytes = Vec::new();
        // 1.2345 read at scale 3: 1.235; -1.2344: -1.234.
        decimal_to_numeric(12345, 4, &mut bytes);
        assert_eq!(numeric_to_decimal(&bytes, 10, 3)?, 1235);
        bytes.clear();
        decimal_to_numeric(-12344, 4, &mut bytes);
        assert_eq!(numeric_to_decimal(&bytes, 10, 3)?, -1234);
        // 0.00005 at scale 0 and 1e-25 at scale 18: zero, in both paths.
        bytes.clear();
        decimal_to_numeric(5, 5, &mut bytes);
        assert_eq!(numeric_to_decimal(&bytes, 10, 0)?, 0);
        assert_eq!(numeric_digits(&bytes, 10, 0)?, 0);
        assert_eq!(numeric_to_decimal(&bytes, 10, 4)?, 1);
        bytes.clear();
        decimal_to_numeric(1, 25, &mut bytes);
        assert_eq!(numeric_to_decimal(&bytes, 38, 18)?, 0);
        assert_eq!(numeric_digits(&bytes, 38, 18)?, 0);
        Ok(())
    }

    #[test]
    fn the_fast_path_agrees_with_the_digits() {
        let mut cases = 0;
        for unscaled in [
            0i128,
            1,
            -1,
            5,
            49,
            50,
            -51,
            12_345,
            99_999_999,
            -10_000_000_000,
            123_456_789_012_345_678,
            99_999_999_999_999_999_999_999_999_999_999_999,
        ] {
            for written in 0..=8i8 {
                let mut bytes = Vec::new();
                decimal_to_numeric(unscaled, written, &mut bytes);
                for scale in 0..=8i8 {
                    for precision in [1u8, 3, 12, 18, 38] {
                        let fast = numeric_fast(&bytes, precision, scale);
                        let digits = numeric_digits(&bytes, precision, scale);
                        match fast {
                            Some(fast) => {
                                cases += 1;
                                assert_eq!(Ok(fast), digits, "{unscaled}e-{written} at {scale}");
                            }
                            None => assert!(
                                digits.is_err() || bytes.len() > 8 + 18,
                                "{unscaled}e-{written} at ({precision},{scale}): {digits:?}"
                            ),
                        }
                    }
                }
            }
        }
        assert!(cases > 1000, "{cases}");
    }

    #[test]
    fn a_decimal_too_wide_for_its_precision_is_refused() {
        let mut bytes = Vec::new();
        decimal_to_numeric(123_456, 2, &mut bytes);
        assert!(numeric_to_decimal(&bytes, 5, 2).is_err());
    }
}
