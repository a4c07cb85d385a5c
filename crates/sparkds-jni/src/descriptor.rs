//! Batches as they cross the boundary: a `long[]` that describes Arrow buffers in place.
//!
//! ```text
//! [0] number of rows
//! then, per field of the schema in depth-first pre-order (a field, then its children):
//!     length, null_count, n_buffers, then n_buffers pairs (address, length in bytes)
//! ```
//!
//! Buffers are in the order of the C data interface (validity, then offsets, then values),
//! which is Arrow Java's for the types of version 1. An absent buffer, and any buffer of zero
//! bytes, is `(0, 0)`. A batch of no column is `[rows]`.

use arrow_buffer::{Buffer, MutableBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, Schema};

use crate::error::{Error, Result};

/// Appends the descriptor of `batch`, a struct array with offset 0 (as sparkds's checks
/// guarantee for the batches of a stream), to `out`, which is cleared first. The lengths are
/// those of the imported buffers: exactly what each array needs (validity `ceil(len / 8)`
/// bytes, offsets `(len + 1) * 4`, values as the type needs).
pub fn describe(batch: &ArrayData, out: &mut Vec<i64>) {
    out.clear();
    out.push(batch.len() as i64);
    for child in batch.child_data() {
        describe_array(child, out);
    }
}

fn describe_array(array: &ArrayData, out: &mut Vec<i64>) {
    out.push(array.len() as i64);
    let has_validity = !matches!(array.data_type(), DataType::Null);
    // Every value of the null type is null, as Arrow Java's NullVector counts them.
    out.push(if has_validity {
        array.null_count() as i64
    } else {
        array.len() as i64
    });
    let n_buffers = array.buffers().len() + usize::from(has_validity);
    out.push(n_buffers as i64);
    if has_validity {
        match array.nulls() {
            Some(nulls) => push_buffer(nulls.buffer(), out),
            None => out.extend([0, 0]),
        }
    }
    for buffer in array.buffers() {
        push_buffer(buffer, out);
    }
    for child in array.child_data() {
        describe_array(child, out);
    }
}

fn push_buffer(buffer: &Buffer, out: &mut Vec<i64>) {
    if buffer.is_empty() {
        out.extend([0, 0]);
    } else {
        out.extend([buffer.as_ptr() as i64, buffer.len() as i64]);
    }
}

/// The number of buffers that Arrow Java and the C data interface give an array of `t`,
/// validity included.
fn buffer_count(t: &DataType) -> usize {
    match t {
        DataType::Null => 0,
        DataType::Struct(_) => 1,
        DataType::List(_) | DataType::Map(_, _) => 2,
        DataType::Utf8 | DataType::Binary => 3,
        _ => 2,
    }
}

/// Builds a batch of `schema` (a struct array, no nulls) from a descriptor whose buffers are
/// the caller's: every buffer is copied, so the batch owns its memory once this returns.
///
/// # Errors
///
/// A descriptor that does not follow the layout of `schema` (counts, lengths, buffers), named
/// by the column. The data itself is checked by the writer.
///
/// # Safety
///
/// Each `(address, length)` pair with a non-zero length is `length` readable bytes, for the
/// duration of the call.
pub unsafe fn assemble(schema: &Schema, descriptor: &[i64]) -> Result<ArrayData> {
    let mut cursor = Cursor {
        values: descriptor,
        at: 0,
    };
    let rows = cursor.next("the number of rows")?;
    let rows = usize::try_from(rows).map_err(|_| {
        Error::argument(format!(
            "the batch descriptor has {rows} rows; a batch has 0 rows or more"
        ))
    })?;
    let mut children = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        // SAFETY: the caller's contract.
        children.push(unsafe { assemble_array(field, field.name(), &mut cursor) }?);
    }
    if cursor.at != descriptor.len() {
        return Err(Error::argument(format!(
            "the batch descriptor has {} values, but the schema's {} fields take {}; describe each field once, in depth-first pre-order",
            descriptor.len(),
            schema.fields().len(),
            cursor.at
        )));
    }
    let struct_type = DataType::Struct(schema.fields().clone());
    let builder = ArrayData::builder(struct_type)
        .len(rows)
        .child_data(children);
    // SAFETY: a struct with no validity; its children are checked by the writer (lengths,
    // `validate`), before the batch reaches the library.
    unsafe { builder.skip_validation(true) }
        .build()
        .map_err(|e| Error::argument(format!("the batch descriptor: {e}")))
}

struct Cursor<'a> {
    values: &'a [i64],
    at: usize,
}

impl Cursor<'_> {
    fn next(&mut self, what: &str) -> Result<i64> {
        let value = self.values.get(self.at).copied().ok_or_else(|| {
            Error::argument(format!(
                "the batch descriptor ends after {} values, before {what}; describe every field of the schema",
                self.values.len()
            ))
        })?;
        self.at += 1;
        Ok(value)
    }
}

/// A buffer as the descriptor gives it: its address and its length in bytes.
type Span = (i64, usize);

/// Rebuilds the array of `field` from its entry in the descriptor (counts, buffers, then its
/// children's entries), copying every buffer.
///
/// # Safety
///
/// As [`assemble`].
unsafe fn assemble_array(field: &Field, path: &str, cursor: &mut Cursor<'_>) -> Result<ArrayData> {
    let t = field.data_type();
    let expected = buffer_count(t);
    let (length, null_count) = read_counts(t, path, cursor)?;
    let mut spans = read_spans(expected, path, cursor)?.into_iter();
    let mut builder = ArrayData::builder(t.clone()).len(length);
    // Every type but the null type has a validity buffer, first.
    let has_validity = expected > 0;
    if has_validity {
        let validity = spans.next().unwrap_or((0, 0));
        // SAFETY: the caller's contract covers every pair of the descriptor.
        if let Some(bits) = unsafe { copy_validity(validity, length, null_count, path) }? {
            builder = builder.null_bit_buffer(Some(bits));
        }
    }
    let mut others: Vec<Buffer> = spans
        // SAFETY: the caller's contract covers every pair of the descriptor.
        .map(|span| unsafe { copy_buffer(span) })
        .collect();
    fill_empty_offsets(t, length, &mut others);
    builder = builder.buffers(others);
    // SAFETY: the caller's contract, which covers the children's entries too.
    let children = unsafe { assemble_children(t, path, cursor) }?;
    // SAFETY: the validity buffer covers `length` bits (checked by `copy_validity`), so counting
    // its nulls stays in bounds; everything else is checked by `check_assembled` below.
    let data = unsafe { builder.child_data(children).skip_validation(true) }
        .build()
        .map_err(|e| column_error(path, e.to_string()))?;
    check_assembled(&data, has_validity, null_count, path)?;
    Ok(data)
}

/// An error in the descriptor's entry for the column at `path`.
fn column_error(path: &str, message: String) -> Error {
    Error::argument(format!("the batch descriptor, column `{path}`: {message}"))
}

/// Reads the counts that open a column's entry and returns its length and null count, once the
/// length is a valid length and the buffer count is that of type `t`.
fn read_counts(t: &DataType, path: &str, cursor: &mut Cursor<'_>) -> Result<(usize, i64)> {
    let length = cursor.next(&format!("the length of column `{path}`"))?;
    let null_count = cursor.next(&format!("the null count of column `{path}`"))?;
    let n_buffers = cursor.next(&format!("the buffer count of column `{path}`"))?;
    let length = usize::try_from(length)
        .map_err(|_| column_error(path, format!("the length is {length}")))?;
    let expected = buffer_count(t);
    if n_buffers != expected as i64 {
        return Err(column_error(
            path,
            format!("{n_buffers} buffers, but type {t} has {expected}"),
        ));
    }
    Ok((length, null_count))
}

/// Reads the `count` buffer pairs of a column's entry, refusing a negative length and a
/// non-empty buffer at address 0 before anything is copied.
fn read_spans(count: usize, path: &str, cursor: &mut Cursor<'_>) -> Result<Vec<Span>> {
    let mut spans = Vec::with_capacity(count);
    for i in 0..count {
        let address = cursor.next(&format!("the address of buffer {i} of column `{path}`"))?;
        let bytes = cursor.next(&format!("the length of buffer {i} of column `{path}`"))?;
        let bytes = usize::try_from(bytes)
            .map_err(|_| column_error(path, format!("buffer {i} has a length of {bytes} bytes")))?;
        if bytes > 0 && address == 0 {
            return Err(column_error(
                path,
                format!("buffer {i} has {bytes} bytes at address 0"),
            ));
        }
        spans.push((address, bytes));
    }
    Ok(spans)
}

/// A copy of the buffer at `span`, owned by the array being built.
///
/// # Safety
///
/// When its length is not 0, `span` is that many readable bytes at its address.
unsafe fn copy_buffer((address, bytes): Span) -> Buffer {
    if bytes == 0 {
        // Arrow's empty buffer, whose dangling address is aligned for every type (that of
        // an empty `Vec<u8>` is not, and an empty int32 offsets buffer would be refused).
        return MutableBuffer::new(0).into();
    }
    // SAFETY: the caller's contract: `bytes` readable bytes at `address`.
    let slice = unsafe { std::slice::from_raw_parts(address as usize as *const u8, bytes) };
    Buffer::from_slice_ref(slice)
}

/// A copy of the validity buffer at `span` of a column of `length` values, or `None` when the
/// descriptor gives none, which only a column without nulls may do.
///
/// # Safety
///
/// As [`copy_buffer`].
unsafe fn copy_validity(
    span: Span,
    length: usize,
    null_count: i64,
    path: &str,
) -> Result<Option<Buffer>> {
    let bytes = span.1;
    if bytes == 0 {
        if null_count != 0 {
            return Err(column_error(
                path,
                format!("null_count is {null_count} but there is no validity buffer"),
            ));
        }
        return Ok(None);
    }
    // Counting the nulls reads `length` bits, and the array is built without validation.
    if bytes < length.div_ceil(8) {
        return Err(column_error(
            path,
            format!(
                "the validity buffer has {bytes} bytes; {length} values need {}",
                length.div_ceil(8)
            ),
        ));
    }
    // SAFETY: the caller's contract for `span`.
    Ok(Some(unsafe { copy_buffer(span) }))
}

/// Gives an empty column of offsets its one offset, 0, when its offsets buffer (the first of
/// `buffers`, validity excluded) is empty.
fn fill_empty_offsets(t: &DataType, length: usize, buffers: &mut [Buffer]) {
    // Arrow Java leaves the offsets of an empty array without bytes (writer index 0), where the
    // C data interface wants one offset, 0, which a library may read.
    let has_offsets = matches!(
        t,
        DataType::Utf8 | DataType::Binary | DataType::List(_) | DataType::Map(_, _)
    );
    if has_offsets && length == 0 && buffers.first().is_some_and(Buffer::is_empty) {
        buffers[0] = Buffer::from_slice_ref([0i32]);
    }
}

/// Rebuilds the children of a column of type `t` from the entries that follow its own: a
/// struct's fields, or the item field of a list (the entries field of a map).
///
/// # Safety
///
/// As [`assemble`].
unsafe fn assemble_children(
    t: &DataType,
    path: &str,
    cursor: &mut Cursor<'_>,
) -> Result<Vec<ArrayData>> {
    let child_fields: Vec<&Field> = match t {
        DataType::Struct(fields) => fields.iter().map(|f| f.as_ref()).collect(),
        DataType::List(f) | DataType::Map(f, _) => vec![f.as_ref()],
        _ => Vec::new(),
    };
    let mut children = Vec::with_capacity(child_fields.len());
    for child in child_fields {
        let child_path = format!("{path}.{}", child.name());
        // SAFETY: the caller's contract.
        children.push(unsafe { assemble_array(child, &child_path, cursor) }?);
    }
    Ok(children)
}

/// Checks the array built without validation: in full (`validate`), then its null count against
/// the descriptor's.
fn check_assembled(
    data: &ArrayData,
    has_validity: bool,
    null_count: i64,
    path: &str,
) -> Result<()> {
    data.validate()
        .map_err(|e| column_error(path, e.to_string()))?;
    // The null type has no validity: its values are all null, whatever count is given.
    if has_validity && data.null_count() as i64 != null_count {
        return Err(column_error(
            path,
            format!(
                "null_count is {null_count} but the validity buffer has {} nulls",
                data.null_count()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::types::Int32Type;
    use arrow_array::{
        Array, BooleanArray, Decimal128Array, Int64Array, ListArray, RecordBatch, StringArray,
        StructArray, TimestampMicrosecondArray,
    };

    fn sample() -> RecordBatch {
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None]),
            None,
            Some(vec![]),
        ]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("ok", DataType::Boolean, true),
            Field::new("price", DataType::Decimal128(10, 2), true),
            Field::new(
                "at",
                DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new("xs", list.data_type().clone(), true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("a"), None, Some("ccc")])),
                Arc::new(BooleanArray::from(vec![Some(true), Some(false), None])),
                Arc::new(
                    Decimal128Array::from(vec![Some(123), None, Some(-5)])
                        .with_precision_and_scale(10, 2)
                        .expect("decimal(10, 2)"),
                ),
                Arc::new(
                    TimestampMicrosecondArray::from(vec![Some(1), Some(2), None])
                        .with_timezone("UTC"),
                ),
                Arc::new(list),
            ],
        )
        .expect("a valid batch")
    }

    #[test]
    fn a_described_batch_is_assembled_into_the_same_batch() {
        let batch = sample();
        let data = StructArray::from(batch.clone()).into_data();
        let mut descriptor = Vec::new();
        describe(&data, &mut descriptor);
        assert_eq!(descriptor[0], 3);
        // id: 3 values, no nulls, 2 buffers, no validity, 24 bytes of values.
        assert_eq!(&descriptor[1..6], &[3, 0, 2, 0, 0]);
        assert_eq!(descriptor[7], 24);
        // name: validity of one byte, 4 offsets, 4 bytes of values.
        assert_eq!(&descriptor[8..11], &[3, 1, 3]);
        assert_eq!(descriptor[12], 1);
        assert_eq!(descriptor[14], 16);
        assert_eq!(descriptor[16], 4);
        // SAFETY: the descriptor points into `data`, alive for the call.
        let rebuilt = unsafe { assemble(&batch.schema(), &descriptor) }.expect("assembled");
        assert_eq!(StructArray::from(rebuilt), StructArray::from(batch));
    }

    /// A map of three rows: an entry, a null map, an entry with a null value.
    fn map_column() -> arrow_array::MapArray {
        use arrow_array::builder::{Int32Builder, MapBuilder, StringBuilder};
        let mut map = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        map.keys().append_value("a");
        map.values().append_value(1);
        map.append(true).expect("an entry");
        map.append(false).expect("a null map");
        map.keys().append_value("b");
        map.values().append_null();
        map.append(true).expect("an entry");
        map.finish()
    }

    /// A struct of three rows with an int and a string field, both with nulls.
    fn struct_column() -> StructArray {
        use arrow_array::Int32Array;
        StructArray::from(vec![
            (
                Arc::new(Field::new("x", DataType::Int32, true)),
                Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])) as arrow_array::ArrayRef,
            ),
            (
                Arc::new(Field::new("y", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec![Some("p"), Some(""), None]))
                    as arrow_array::ArrayRef,
            ),
        ])
    }

    /// A batch of every type of version 1, nested ones included, with nulls.
    fn every_type() -> RecordBatch {
        use arrow_array::{
            BinaryArray, Date32Array, Float32Array, Float64Array, Int16Array, Int32Array,
            Int8Array, NullArray,
        };
        let columns: Vec<(&str, arrow_array::ArrayRef)> = vec![
            (
                "b",
                Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            ),
            (
                "i8",
                Arc::new(Int8Array::from(vec![Some(-1), Some(2), None])),
            ),
            (
                "i16",
                Arc::new(Int16Array::from(vec![None, Some(300), Some(-300)])),
            ),
            ("i32", Arc::new(Int32Array::from(vec![1, 2, 3]))),
            (
                "f32",
                Arc::new(Float32Array::from(vec![Some(1.5), None, Some(-0.0)])),
            ),
            (
                "f64",
                Arc::new(Float64Array::from(vec![f64::NAN, 2.0, 1e300])),
            ),
            (
                "bin",
                Arc::new(BinaryArray::from(vec![
                    Some(&b"\x00\xff"[..]),
                    None,
                    Some(&b""[..]),
                ])),
            ),
            (
                "date",
                Arc::new(Date32Array::from(vec![Some(0), Some(19000), None])),
            ),
            (
                "ntz",
                Arc::new(TimestampMicrosecondArray::from(vec![
                    Some(-1),
                    None,
                    Some(2),
                ])),
            ),
            ("nothing", Arc::new(NullArray::new(3))),
            ("st", Arc::new(struct_column())),
            ("m", Arc::new(map_column())),
        ];
        let sample = sample();
        let mut fields: Vec<Field> = sample
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut arrays: Vec<arrow_array::ArrayRef> = sample.columns().to_vec();
        for (name, array) in columns {
            fields.push(Field::new(name, array.data_type().clone(), true));
            arrays.push(array);
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("a valid batch")
    }

    #[test]
    fn a_batch_imported_from_the_c_data_interface_describes_exact_buffers_of_every_type() {
        let batch = every_type();
        let exported = StructArray::from(batch.clone()).into_data();
        let ffi = arrow_array::ffi::FFI_ArrowArray::new(&exported);
        let struct_type = DataType::Struct(batch.schema().fields().clone());
        // SAFETY: a valid export of `struct_type`, moved into the import (as a stream's batch).
        let imported = unsafe { arrow_array::ffi::from_ffi_and_data_type(ffi, struct_type) }
            .expect("imported");
        let mut descriptor = Vec::new();
        describe(&imported, &mut descriptor);
        // SAFETY: the descriptor points into `imported`, alive for the call; `assemble` reads
        // exactly the lengths it gives, and `validate` refuses a buffer too short for its array.
        let rebuilt = unsafe { assemble(&batch.schema(), &descriptor) }.expect("assembled");
        rebuilt.validate_full().expect("valid");
        assert_eq!(StructArray::from(rebuilt), StructArray::from(batch));
        // The null column: 3 values, all null, no buffer. After it come the struct (1 buffer;
        // x: 2, y: 3) and the map (2; entries: 1, key: 3, value: 2), 3 + 2 * buffers each.
        let after: usize = [1, 2, 3, 2, 1, 3, 2].iter().map(|b| 3 + 2 * b).sum();
        let at = descriptor.len() - after - 3;
        assert_eq!(descriptor[at..at + 3], [3, 3, 0]);
    }

    #[test]
    fn a_batch_of_no_column_is_its_row_count() {
        let data = ArrayData::builder(DataType::Struct(Default::default()))
            .len(7)
            .build()
            .expect("a struct of no field");
        let mut descriptor = vec![99];
        describe(&data, &mut descriptor);
        assert_eq!(descriptor, [7]);
        // SAFETY: no buffer.
        let rebuilt = unsafe { assemble(&Schema::empty(), &descriptor) }.expect("assembled");
        assert_eq!(rebuilt.len(), 7);
    }

    #[test]
    fn an_empty_string_array_without_offset_bytes_gets_its_one_offset() {
        let schema = Schema::new(vec![Field::new("s", DataType::Utf8, true)]);
        // Arrow Java's description of an empty VarCharVector: no byte in any buffer.
        // SAFETY: no buffer has a byte to read.
        let data =
            unsafe { assemble(&schema, &[0, 0, 0, 3, 0, 0, 0, 0, 0, 0]) }.expect("assembled");
        let column = &data.child_data()[0];
        assert_eq!(column.buffers()[0].as_slice(), &[0, 0, 0, 0]);
        let mut described = Vec::new();
        describe(&data, &mut described);
        assert_eq!(described[..5], [0, 0, 0, 3, 0]);
        assert_eq!(described[7], 4, "one offset");
    }

    #[test]
    fn a_descriptor_that_does_not_fit_the_schema_names_the_column() {
        let schema = Schema::new(vec![Field::new("id", DataType::Int64, false)]);
        // SAFETY: no buffer is read: the counts are refused first.
        let e = unsafe { assemble(&schema, &[2, 2, 0, 3]) }.expect_err("refused");
        assert_eq!(
            e.message,
            "the batch descriptor, column `id`: 3 buffers, but type Int64 has 2"
        );
        // SAFETY: as above.
        let e = unsafe { assemble(&schema, &[2]) }.expect_err("refused");
        assert_eq!(
            e.message,
            "the batch descriptor ends after 1 values, before the length of column `id`; describe every field of the schema"
        );
        let values = [5i64, 6];
        // SAFETY: 16 readable bytes, but the schema needs 2 rows of 8 bytes, and 3 are claimed.
        let e = unsafe { assemble(&schema, &[3, 3, 0, 2, 0, 0, values.as_ptr() as i64, 16]) }
            .expect_err("refused");
        assert!(
            e.message.starts_with("the batch descriptor, column `id`: "),
            "{e:?}"
        );
    }
}
