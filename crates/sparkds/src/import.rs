//! Importing what a library exports: an `ArrowArrayStream` from `read`, its `ArrowSchema` and
//! each `ArrowArray`.
//!
//! The raw C structs are checked first, by this module, before arrow-rs sees them: importers do
//! not validate (rule 12), and arrow-rs can panic or read out of bounds on a malformed array, so
//! a broken library must yield a report, not a crash. Only then is the batch imported, fully
//! validated, and deep-copied, so that the library's memory is released at once (by the host,
//! exactly once) and the batches outlive the stream.

use std::ffi::{c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray};
use arrow_array::{make_array, Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_data::transform::MutableArrayData;
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use crate::error::{count, Error, Result, Violation};
use crate::isolate;
use crate::render;
use crate::task::Task;
use spark_datasource_abi::arrow::{ArrowArray, ArrowArrayStream, ArrowSchema};

/// What the host expects of one stream that `read` returned.
pub(crate) struct Expectations<'a> {
    /// "partition 1", "micro-batch 0, partition 1".
    pub context: String,
    /// The schema to read, after pruning (rule 19).
    pub schema: &'a Schema,
    /// The limit that `push_limit` accepted (rule 22).
    pub limit: Option<i64>,
    /// Kill the task after this many batches (rule 23).
    pub interrupt_after: Option<usize>,
    /// Release the stream after this many batches without reading on, as a consumer that
    /// needs no more rows does.
    pub stop_after: Option<usize>,
    pub task: &'a Task,
}

/// A stream that the host owns: released exactly once, when dropped, from another thread than
/// the one that read it, as Spark may (the header's `read`: "possibly from another thread").
struct OwnedStream(Box<ArrowArrayStream>);

/// A stream pointer moved to the thread that releases it.
struct StreamToRelease(*mut ArrowArrayStream);

// SAFETY: the C stream interface lets a consumer release a stream from any thread, and the
// pointer is used by that one thread only, while the reading thread waits for it.
unsafe impl Send for StreamToRelease {}

impl StreamToRelease {
    /// # Safety
    ///
    /// The pointer is a live stream owned by the host, released nowhere else.
    unsafe fn release(self, release: unsafe extern "C" fn(*mut ArrowArrayStream)) {
        isolate::breadcrumb("release (stream)");
        // SAFETY: see the contract above.
        unsafe { release(self.0) };
    }
}

impl Drop for OwnedStream {
    fn drop(&mut self) {
        let Some(release) = self.0.release else {
            return;
        };
        let stream = StreamToRelease(&mut *self.0);
        std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new().spawn_scoped(scope, move || {
                let stream = stream;
                // SAFETY: the stream was moved to the host by `read`; this is its only
                // release, and the reading thread waits for it.
                unsafe { stream.release(release) };
            });
            if spawned.is_err() {
                // No thread to spare: release here rather than leak it.
                let stream = StreamToRelease(&mut *self.0);
                // SAFETY: as above; the spawn failed, so the closure never ran.
                unsafe { stream.release(release) };
            }
        });
        self.0.release = None;
    }
}

/// Reads the whole stream that `read` wrote to `stream`, checking every rule on the way.
///
/// # Errors
///
/// The first violation found, or the failure of the stream's `get_schema` or `get_next`.
pub(crate) fn read_stream(
    stream: Box<ArrowArrayStream>,
    expect: &Expectations<'_>,
) -> Result<Vec<RecordBatch>> {
    // Each step owns the stream while it calls into it, and no caller does: a C++ exception
    // escaping a callback unwinds past the stream without releasing it, so the process aborts
    // at that callback, which the isolated check reports (rule 9).
    let (stream, get_schema, get_next) = own_stream(stream, expect)?;
    let (stream, schema) = read_schema(stream, get_schema, expect)?;
    let (stream, batches) = read_batches(stream, get_next, &schema, expect)?;
    match expect.stop_after {
        // Dropping the stream releases it, mid-way.
        Some(stop) if batches.len() == stop => drop(stream),
        _ => check_end_and_release(stream, get_next, expect)?,
    }
    Ok(batches)
}

type GetSchema = unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int;
type GetNext = unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int;

/// A violation of `rule` by `read`, in the context of the stream.
fn violation(expect: &Expectations<'_>, rule: u32, message: String) -> Error {
    Error::from(Violation::new("read", rule, message).within(Some(expect.context.as_str())))
}

/// The stream, owned by the host, and its two reading callbacks, unless it is released or
/// misses one.
fn own_stream(
    stream: Box<ArrowArrayStream>,
    expect: &Expectations<'_>,
) -> Result<(OwnedStream, GetSchema, GetNext)> {
    if stream.release.is_none() {
        return Err(violation(
            expect,
            11,
            "returned 0 but a released stream (its `release` is NULL); write a stream to `out`"
                .into(),
        ));
    }
    let stream = OwnedStream(stream);
    let (Some(get_schema), Some(get_next)) = (stream.0.get_schema, stream.0.get_next) else {
        return Err(violation(
            expect,
            11,
            "returned a stream whose `get_schema` or `get_next` is NULL; fill every callback"
                .into(),
        ));
    };
    Ok((stream, get_schema, get_next))
}

/// The stream's schema, which must be the one asked for (rule 19).
fn read_schema(
    mut stream: OwnedStream,
    get_schema: GetSchema,
    expect: &Expectations<'_>,
) -> Result<(OwnedStream, SchemaRef)> {
    let mut raw_schema = ArrowSchema::empty();
    isolate::breadcrumb("get_schema");
    // SAFETY: the stream is live (not released) and `raw_schema` is valid for writes.
    let rc = unsafe { get_schema(&mut *stream.0, &mut raw_schema) };
    if rc != 0 {
        return Err(stream_failure(
            &mut stream,
            "get_schema",
            rc,
            Some(expect.context.as_str()),
        ));
    }
    let schema = import_schema(&mut raw_schema)
        .map_err(|(rule, m)| violation(expect, rule, format!("the stream's schema: {m}")))?;
    if !same_schema(&schema, expect.schema) {
        return Err(violation(
            expect,
            19,
            format!(
                "the stream's schema is `{}` but `{}` was asked for; return exactly the schema to read, after `prune_columns`",
                render::schema_line(&schema),
                render::schema_line(expect.schema)
            ),
        ));
    }
    Ok((stream, Arc::new(schema)))
}

/// The batches read so far, and what the host counts of them.
#[derive(Default)]
struct BatchesRead {
    /// The batches kept: none after the task is killed.
    batches: Vec<RecordBatch>,
    rows: i64,
    /// Batches returned after the task was killed.
    after_interrupt: usize,
}

impl BatchesRead {
    /// The index of the next batch.
    fn index(&self) -> usize {
        self.batches.len() + self.after_interrupt
    }

    /// Counts a batch returned after the task was killed: one may be in flight, not two (rule 23).
    fn count_after_interrupt(&mut self, index: usize, expect: &Expectations<'_>) -> Result<()> {
        if let Some(n) = expect.interrupt_after.filter(|n| index >= *n) {
            self.after_interrupt += 1;
            let after_interrupt = self.after_interrupt;
            if after_interrupt > 1 {
                return Err(violation(
                    expect,
                    23,
                    format!(
                        "the task was killed after {}, but the stream returned {after_interrupt} more; a killed task (`is_interrupted` true) must stop within one batch",
                        count(n as i128, "batch")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Counts the rows of a batch, which never go past a pushed limit (rule 22).
    fn count_rows(&mut self, batch: &RecordBatch, expect: &Expectations<'_>) -> Result<()> {
        self.rows += batch.num_rows() as i64;
        if let Some(limit) = expect.limit {
            if self.rows > limit {
                return Err(violation(
                    expect,
                    22,
                    format!("returned {} after `push_limit` accepted a limit of {limit}; a pushed limit is never exceeded", count(self.rows, "row")),
                ));
            }
        }
        Ok(())
    }
}

/// The batches up to the end of the stream, killing the task after the batches asked for.
fn read_batches(
    mut stream: OwnedStream,
    get_next: GetNext,
    schema: &SchemaRef,
    expect: &Expectations<'_>,
) -> Result<(OwnedStream, Vec<RecordBatch>)> {
    let mut read = BatchesRead::default();
    loop {
        if expect.stop_after == Some(read.index()) {
            break;
        }
        if expect.interrupt_after == Some(read.index()) && read.after_interrupt == 0 {
            expect.task.interrupt();
        }
        let mut raw = ArrowArray::empty();
        isolate::breadcrumb("get_next");
        // SAFETY: the stream is live and `raw` is valid for writes.
        let rc = unsafe { get_next(&mut *stream.0, &mut raw) };
        if rc != 0 {
            return Err(stream_failure(
                &mut stream,
                "get_next",
                rc,
                Some(expect.context.as_str()),
            ));
        }
        if raw.release.is_none() {
            break;
        }
        let index = read.index();
        // SAFETY: `raw` was just written by `get_next`, which moved it to the host.
        let batch = unsafe { import_batch(&mut raw, schema) }
            .map_err(|(rule, m)| violation(expect, rule, format!("batch {index}{m}")))?;
        read.count_after_interrupt(index, expect)?;
        read.count_rows(&batch, expect)?;
        if read.after_interrupt == 0 {
            read.batches.push(batch);
        }
    }
    Ok((stream, read.batches))
}

/// The end of the stream repeats (rule 19): one more `get_next` gives 0 and a released array.
/// Then the stream is released.
fn check_end_and_release(
    mut stream: OwnedStream,
    get_next: GetNext,
    expect: &Expectations<'_>,
) -> Result<()> {
    let mut raw = ArrowArray::empty();
    isolate::breadcrumb("get_next");
    // SAFETY: the stream is live and `raw` is valid for writes.
    let rc = unsafe { get_next(&mut *stream.0, &mut raw) };
    if rc != 0 || raw.release.is_some() {
        if let Some(release) = raw.release {
            // SAFETY: the array was moved to the host; it is released once, here.
            unsafe { release(&mut raw) };
        }
        return Err(violation(
            expect,
            19,
            "`get_next` returned a batch or an error after the end of the stream; the end must repeat (0 and a released array)".into(),
        ));
    }
    Ok(())
}

fn stream_failure(
    stream: &mut OwnedStream,
    callback: &str,
    rc: c_int,
    context: Option<&str>,
) -> Error {
    stream_error(&mut stream.0, callback, rc, context)
}

/// The error of a stream's `callback` that returned `rc`: the message of its `get_last_error`
/// (rule 7).
pub(crate) fn stream_error(
    stream: &mut ArrowArrayStream,
    callback: &str,
    rc: c_int,
    context: Option<&str>,
) -> Error {
    let message = stream.get_last_error.map(|get_last_error| {
        // SAFETY: the stream is live; the message is copied at once.
        let message = unsafe { get_last_error(stream) };
        if message.is_null() {
            None
        } else {
            // SAFETY: a non-NULL message is NUL-terminated and valid until the next call.
            Some(
                unsafe { CStr::from_ptr(message) }
                    .to_str()
                    .map(str::to_string),
            )
        }
    });
    match message {
        Some(Some(Ok(message))) => Error::Library {
            function: "read".into(),
            context: Some(format!(
                "{}, `{callback}` of the stream",
                context.unwrap_or("stream")
            )),
            message: crate::redact::scrub(&message),
        },
        other => {
            let got = match other {
                None => "the stream has no `get_last_error`",
                Some(None) => "`get_last_error` returned NULL",
                _ => "`get_last_error` returned invalid UTF-8",
            };
            Violation::new(
                "read",
                7,
                format!("`{callback}` of the stream returned {rc} and {got}; a failing callback must set a message"),
            )
            .within(context)
            .into()
        }
    }
}

/// Checks a schema that the library moved to the host, imports it, and releases it.
pub(crate) fn import_schema(raw: &mut ArrowSchema) -> std::result::Result<Schema, (u32, String)> {
    if raw.release.is_none() {
        return Err((
            11,
            "is released (its `release` is NULL); write a schema".into(),
        ));
    }
    let checked = check_schema(raw, 0).and_then(|()| {
        // SAFETY: the struct layouts are identical (both are the C data interface's), and the
        // structure was checked above; the import only borrows it.
        let ffi = unsafe { &*(raw as *const ArrowSchema as *const FFI_ArrowSchema) };
        catch_unwind(AssertUnwindSafe(|| Schema::try_from(ffi)))
            .map_err(|_| (12, "arrow-rs panicked importing it".to_string()))?
            .map_err(|e| (12, format!("arrow-rs cannot import it: {e}")))
    });
    if let Some(release) = raw.release {
        // SAFETY: the schema was moved to the host, which releases it once, here.
        unsafe { release(raw) };
        if raw.release.is_some() {
            return Err((11, "its `release` did not set `release` to NULL; a release callback marks the struct released".into()));
        }
    }
    let schema = checked?;
    for field in schema.fields() {
        check_type(field.name(), field.data_type())?;
    }
    Ok(schema)
}

fn check_schema(raw: &ArrowSchema, depth: usize) -> std::result::Result<(), (u32, String)> {
    if depth > 64 {
        return Err((12, "is nested more than 64 levels deep".into()));
    }
    if raw.format.is_null() {
        return Err((12, "a `format` is NULL".into()));
    }
    if depth == 0 {
        // SAFETY: non-NULL `format` is a NUL-terminated string (C data interface).
        let format = unsafe { CStr::from_ptr(raw.format) };
        if format.to_bytes() != b"+s" {
            return Err((
                12,
                format!(
                    "has format `{}`; a schema to read is a struct, `+s`",
                    format.to_string_lossy()
                ),
            ));
        }
    }
    if !raw.dictionary.is_null() {
        return Err((
            18,
            "has a dictionary-encoded field; version 1 reads no dictionaries".into(),
        ));
    }
    if raw.n_children < 0 || (raw.n_children > 0 && raw.children.is_null()) {
        return Err((
            12,
            format!("has {} children but `children` is NULL", raw.n_children),
        ));
    }
    for i in 0..raw.n_children as usize {
        // SAFETY: `children` holds `n_children` pointers (C data interface).
        let child = unsafe { *raw.children.add(i) };
        if child.is_null() {
            return Err((12, format!("child {i} is NULL")));
        }
        // SAFETY: a non-NULL child points to a valid schema.
        check_schema(unsafe { &*child }, depth + 1)?;
    }
    Ok(())
}

/// Rule 18: the types of version 1.
fn check_type(name: &str, t: &DataType) -> std::result::Result<(), (u32, String)> {
    let suggestion = match t {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::Binary
        | DataType::Date32
        | DataType::Decimal128(_, _)
        | DataType::Timestamp(TimeUnit::Microsecond, _) => return Ok(()),
        DataType::List(f) => return check_type(&format!("{name}.{}", f.name()), f.data_type()),
        DataType::Struct(fields) => {
            for f in fields {
                check_type(&format!("{name}.{}", f.name()), f.data_type())?;
            }
            return Ok(());
        }
        DataType::Map(entries, _) => {
            let ok = match entries.data_type() {
                DataType::Struct(kv) => {
                    entries.name() == "entries"
                        && kv.len() == 2
                        && kv[0].name() == "key"
                        && kv[1].name() == "value"
                }
                _ => false,
            };
            if !ok {
                return Err((18, format!("column `{name}`: a map's children must be named `entries`, `key` and `value`")));
            }
            if let DataType::Struct(kv) = entries.data_type() {
                for f in kv {
                    check_type(&format!("{name}.{}", f.name()), f.data_type())?;
                }
            }
            return Ok(());
        }
        DataType::LargeUtf8 | DataType::Utf8View => "utf8",
        DataType::LargeBinary | DataType::BinaryView => "binary",
        DataType::LargeList(_) | DataType::ListView(_) | DataType::LargeListView(_) => "list",
        DataType::Timestamp(_, _) => "timestamp[us]",
        DataType::Dictionary(_, _) => "the dictionary's value type",
        _ => "a type of the version-1 list of spark_datasource.h",
    };
    Err((
        18,
        format!("column `{name}` has the Arrow type {t}, which version 1 does not read; use {suggestion}"),
    ))
}

/// Whether two schemas have the same fields: names, types and nullability.
pub(crate) fn same_schema(a: &Schema, b: &Schema) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields()
            .iter()
            .zip(b.fields())
            .all(|(x, y)| same_field(x, y))
}

fn same_field(a: &Field, b: &Field) -> bool {
    a.name() == b.name()
        && a.is_nullable() == b.is_nullable()
        && a.data_type().equals_datatype(b.data_type())
}

/// A no-op release for the bitwise copy that arrow-rs imports: the host keeps the duty to
/// release the original, so that it can check the release itself.
///
/// # Safety
///
/// Any pointer; it is not dereferenced.
unsafe extern "C" fn borrowed_release(_: *mut ArrowArray) {}

/// Checks one batch that the library moved to the host, imports it with arrow-rs, validates it
/// fully (column by column first, so that the message names the column) and copies it, so that
/// nothing of the library's memory is kept. The library's struct is not released here.
///
/// The error is a rule and a message that continues "batch N".
///
/// # Safety
///
/// `raw` was moved to the host by `get_next` and is not released yet.
pub(crate) unsafe fn checked_copy(
    raw: &mut ArrowArray,
    schema: &Schema,
) -> std::result::Result<ArrayData, (u32, String)> {
    let struct_type = DataType::Struct(schema.fields().clone());
    check_array(raw, &struct_type, false, None)?;
    // SAFETY: the layouts are identical; the copy's release is a no-op, so the library's
    // struct is still released only once, by the caller.
    let borrowed: FFI_ArrowArray = unsafe {
        let mut copy = std::ptr::read(raw as *const ArrowArray);
        copy.release = Some(borrowed_release);
        std::ptr::read(&copy as *const ArrowArray as *const FFI_ArrowArray)
    };
    let data = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the structure was checked by `check_array` against `struct_type`.
        unsafe { from_ffi_and_data_type(borrowed, struct_type.clone()) }
    }))
    .map_err(|_| (12, ": arrow-rs panicked importing it".to_string()))?
    .map_err(|e| (12, format!(": arrow-rs cannot import it: {e}")))?;
    for (field, child) in schema.fields().iter().zip(data.child_data()) {
        child.validate_full().map_err(|e| {
            (
                12,
                format!(", column `{}`: fails full validation: {e}", field.name()),
            )
        })?;
    }
    data.validate_full()
        .map_err(|e| (12, format!(": fails full validation: {e}")))?;
    let mut copy = MutableArrayData::new(vec![&data], false, data.len());
    copy.try_extend(0, 0, data.len())
        .map_err(|e| (12, format!(": cannot copy it: {e}")))?;
    Ok(copy.freeze())
}

/// Checks, imports, validates and copies one batch, then releases the library's struct.
///
/// The error is a rule and a message that continues "batch N".
///
/// # Safety
///
/// `raw` was moved to the host by `get_next` and is not released yet.
unsafe fn import_batch(
    raw: &mut ArrowArray,
    schema: &SchemaRef,
) -> std::result::Result<RecordBatch, (u32, String)> {
    // SAFETY: the caller's contract.
    let result = unsafe { checked_copy(raw, schema) };
    if let Some(release) = raw.release {
        isolate::breadcrumb("release (array)");
        // SAFETY: the array was moved to the host, which releases it once, here.
        unsafe { release(raw) };
        if raw.release.is_some() && result.is_ok() {
            return Err((11, ": its `release` did not set `release` to NULL; a release callback marks the struct released".into()));
        }
    }
    let data = result?;
    let rows = data.len();
    let array = StructArray::from(make_array(data).into_data());
    let columns = array.columns().to_vec();
    RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| (12, format!(": {e}")))
}

/// Where in a batch an array is: `None` for the batch itself, else the column path.
fn at(path: Option<&str>) -> String {
    path.map(|p| format!(", column `{p}`")).unwrap_or_default()
}

/// The outcome of a raw check: a rule and a message that continues "batch N".
type RawResult<T = ()> = std::result::Result<T, (u32, String)>;

/// The raw checks of one array against its type (rules 11 to 17 and 20). Errors continue
/// "batch N".
pub(crate) fn check_array(
    a: &ArrowArray,
    t: &DataType,
    nullable: bool,
    path: Option<&str>,
) -> RawResult {
    RawArray {
        raw: a,
        data_type: t,
        nullable,
        path,
    }
    .check()
}

/// One array under the raw checks: the C struct, the type that the schema gives it, and where
/// it sits in the batch.
struct RawArray<'a> {
    raw: &'a ArrowArray,
    data_type: &'a DataType,
    nullable: bool,
    /// The column path; `None` for the batch's own struct.
    path: Option<&'a str>,
}

/// The buffer and child pointers of an array whose counts match its type.
struct Layout<'a> {
    buffers: &'a [*const c_void],
    children: &'a [*mut ArrowArray],
}

impl<'a> RawArray<'a> {
    fn check(&self) -> RawResult {
        // The order matters: each check reads only what the checks before it proved readable
        // (the counts before the pointers, the alignment before the offsets).
        self.check_not_released()?;
        self.check_length_is_not_negative()?;
        self.check_offset_is_zero()?;
        self.check_null_count_is_known()?;
        self.check_no_dictionary()?;
        let layout = self.check_layout()?;
        let nulls = self.check_validity(layout.buffers)?;
        self.check_nullability(nulls)?;
        self.check_alignment(layout.buffers)?;
        let values_referred = self.check_offsets(layout.buffers)?;
        self.check_children(layout.children, values_referred)
    }

    fn is_batch(&self) -> bool {
        self.path.is_none()
    }

    fn fail<T>(&self, rule: u32, message: String) -> RawResult<T> {
        Err((rule, format!("{}: {message}", at(self.path))))
    }

    /// Rule 11, on the batch's struct only: the host releases the children through it.
    fn check_not_released(&self) -> RawResult {
        if self.is_batch() && self.raw.release.is_none() {
            return self.fail(11, "is released (its `release` is NULL)".into());
        }
        Ok(())
    }

    /// Rule 12: every later read is sized by `length`.
    fn check_length_is_not_negative(&self) -> RawResult {
        if self.raw.length < 0 {
            return self.fail(12, format!("length is {}", self.raw.length));
        }
        Ok(())
    }

    /// Rule 13: Arrow Java ignored the offset and read the wrong rows.
    fn check_offset_is_zero(&self) -> RawResult {
        if self.raw.offset != 0 {
            return self.fail(
                13,
                format!(
                    "array offset is {}; exported arrays must have offset 0",
                    self.raw.offset
                ),
            );
        }
        Ok(())
    }

    /// Rule 15: the C data interface allows -1, "unknown"; a library knows the exact count.
    fn check_null_count_is_known(&self) -> RawResult {
        if self.raw.null_count == -1 {
            return self.fail(
                15,
                "null_count is -1 (unknown); export the exact count".into(),
            );
        }
        if self.raw.null_count < 0 {
            return self.fail(15, format!("null_count is {}", self.raw.null_count));
        }
        Ok(())
    }

    /// Rule 18: version 1 reads no dictionaries, at any level.
    fn check_no_dictionary(&self) -> RawResult {
        if !self.raw.dictionary.is_null() {
            return self.fail(
                18,
                "is dictionary-encoded; version 1 reads no dictionaries".into(),
            );
        }
        Ok(())
    }

    /// Rule 12: as many buffers and children as the type has, behind non-NULL pointers. Only
    /// then are the pointers read.
    fn check_layout(&self) -> RawResult<Layout<'a>> {
        let (buffers, children) = buffers_and_children(self.data_type);
        Ok(Layout {
            buffers: self.check_buffer_count(buffers)?,
            children: self.check_child_count(children)?,
        })
    }

    fn check_buffer_count(&self, expected: i64) -> RawResult<&'a [*const c_void]> {
        let a = self.raw;
        if a.n_buffers != expected {
            return self.fail(
                12,
                format!(
                    "has {} buffers; type {} has {expected}",
                    a.n_buffers, self.data_type
                ),
            );
        }
        if expected == 0 {
            return Ok(&[]);
        }
        if a.buffers.is_null() {
            return self.fail(12, "`buffers` is NULL".into());
        }
        // SAFETY: `buffers` is non-NULL and holds `n_buffers` pointers, checked above.
        Ok(unsafe { std::slice::from_raw_parts(a.buffers, expected as usize) })
    }

    fn check_child_count(&self, expected: i64) -> RawResult<&'a [*mut ArrowArray]> {
        let a = self.raw;
        if a.n_children != expected {
            return self.fail(
                12,
                format!(
                    "has {} children; type {} has {expected}",
                    a.n_children, self.data_type
                ),
            );
        }
        if expected == 0 {
            return Ok(&[]);
        }
        if a.children.is_null() {
            return self.fail(12, "`children` is NULL".into());
        }
        // SAFETY: `children` is non-NULL and holds `n_children` pointers, checked above.
        Ok(unsafe { std::slice::from_raw_parts(a.children, expected as usize) })
    }

    /// Rules 16 and 15 on the validity bitmap, buffer 0. Returns the number of nulls it holds.
    fn check_validity(&self, buffers: &[*const c_void]) -> RawResult<i64> {
        // The null type has no buffers, hence no bitmap to count.
        let Some(&validity) = buffers.first() else {
            return Ok(0);
        };
        self.check_batch_has_no_null_rows(validity)?;
        self.count_nulls(validity)
    }

    /// Rule 16: Arrow Java drops a top-level validity bitmap, and arrow-rs panics importing it.
    fn check_batch_has_no_null_rows(&self, validity: *const c_void) -> RawResult {
        if !self.is_batch() {
            return Ok(());
        }
        if self.raw.null_count > 0 {
            return self.fail(16, format!("the batch's struct has {}; a batch must have no null rows: mark the values of its columns null instead", count(self.raw.null_count, "null row")));
        }
        if !validity.is_null() {
            return self.fail(16, "the batch's struct has a validity buffer; a batch must have none: mark the values of its columns null instead".into());
        }
        Ok(())
    }

    /// Rule 15: `null_count` is what the bitmap says, and a NULL bitmap means no nulls.
    fn count_nulls(&self, validity: *const c_void) -> RawResult<i64> {
        let null_count = self.raw.null_count;
        if validity.is_null() {
            if null_count > 0 {
                return self.fail(
                    15,
                    format!("null_count is {null_count} but the validity buffer is NULL"),
                );
            }
            return Ok(0);
        }
        let length = self.raw.length as usize;
        // SAFETY: a validity buffer has at least `length` bits (C data interface, offset 0).
        let bits = unsafe { std::slice::from_raw_parts(validity as *const u8, length.div_ceil(8)) };
        let nulls = (0..length)
            .filter(|i| bits[i / 8] & (1 << (i % 8)) == 0)
            .count() as i64;
        if nulls != null_count {
            return self.fail(
                15,
                format!(
                    "null_count is {null_count} but the validity buffer has {}; export the exact count",
                    count(nulls, "null")
                ),
            );
        }
        Ok(nulls)
    }

    /// Rule 17. The batch's struct is exempt: rule 16 already forbids its nulls.
    fn check_nullability(&self, nulls: i64) -> RawResult {
        if !self.nullable && !self.is_batch() && nulls > 0 {
            return self.fail(
                17,
                format!(
                    "holds {} but the column is not nullable; declare it nullable or export no nulls",
                    count(nulls, "null")
                ),
            );
        }
        Ok(())
    }

    /// Rule 20, on buffer 1: of the version-1 types, only its elements are wider than a byte.
    fn check_alignment(&self, buffers: &[*const c_void]) -> RawResult {
        let width = element_width(self.data_type);
        if let Some(&values) = buffers.get(1) {
            if !(values as usize).is_multiple_of(width) {
                return self.fail(20, format!("buffer 1 is not aligned to {width} bytes"));
            }
        }
        Ok(())
    }

    /// Rules 14 and 12 on the offsets of strings, binaries, lists and maps. Returns how many
    /// child values the array refers to: the last offset, or else its length.
    fn check_offsets(&self, buffers: &[*const c_void]) -> RawResult<i64> {
        let Some(kind) = offsets_kind(self.data_type) else {
            return Ok(self.raw.length);
        };
        let offsets = buffers[1] as *const i32;
        if offsets.is_null() {
            return self.fail(14, "the offsets buffer is NULL; export length + 1 offsets, even when the array is empty".into());
        }
        let length = self.raw.length as usize;
        // SAFETY: an offsets buffer holds `length + 1` values (C data interface).
        let offsets = unsafe { std::slice::from_raw_parts(offsets, length + 1) };
        if offsets[0] != 0 {
            return self.fail(
                14,
                format!(
                    "{kind} offsets start at {}; {kind} offsets must start at 0",
                    offsets[0]
                ),
            );
        }
        if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
            return self.fail(12, format!("offsets decrease after index {i}"));
        }
        let end = offsets[length];
        let has_values_buffer = matches!(self.data_type, DataType::Utf8 | DataType::Binary);
        if has_values_buffer && end > 0 && buffers[2].is_null() {
            return self.fail(
                14,
                "the values buffer is NULL; export a buffer for the values".into(),
            );
        }
        Ok(end as i64)
    }

    /// Rule 16 on each child's length, then every check on the child itself.
    fn check_children(&self, children: &[*mut ArrowArray], values_referred: i64) -> RawResult {
        for (field, &child) in child_fields(self.data_type).into_iter().zip(children) {
            let name = field.name();
            let child_path = match self.path {
                None => name.clone(),
                Some(p) => format!("{p}.{name}"),
            };
            if child.is_null() {
                return self.fail(12, format!("child `{name}` is NULL"));
            }
            let child = RawArray {
                // SAFETY: a non-NULL child points to a valid array owned by its parent.
                raw: unsafe { &*child },
                data_type: field.data_type(),
                nullable: field.is_nullable(),
                path: Some(&child_path),
            };
            child.check_length_within(self, values_referred)?;
            child.check()?;
        }
        Ok(())
    }

    /// Rule 16: a column has the batch's length, and any child has at least the values its
    /// parent refers to.
    fn check_length_within(&self, parent: &RawArray<'_>, values_referred: i64) -> RawResult {
        let length = self.raw.length;
        if parent.is_batch() && length != parent.raw.length {
            return self.fail(16, format!("has {length} values but the batch has {}; every column must have the batch's length", parent.raw.length));
        }
        if length < values_referred {
            return self.fail(
                16,
                format!("has {length} values but its parent refers to {values_referred}"),
            );
        }
        Ok(())
    }
}

/// The number of buffers and children that the C data interface gives an array of type `t`.
fn buffers_and_children(t: &DataType) -> (i64, i64) {
    match t {
        DataType::Null => (0, 0),
        DataType::Utf8 | DataType::Binary => (3, 0),
        DataType::List(_) | DataType::Map(_, _) => (2, 1),
        DataType::Struct(fields) => (1, fields.len() as i64),
        _ => (2, 0),
    }
}

/// The width in bytes of an element of buffer 1 of type `t`: a value, or an `i32` offset.
fn element_width(t: &DataType) -> usize {
    match t {
        DataType::Int16 => 2,
        DataType::Int32 | DataType::Float32 | DataType::Date32 => 4,
        DataType::Int64
        | DataType::Float64
        | DataType::Timestamp(_, _)
        | DataType::Decimal128(_, _) => 8,
        DataType::Utf8 | DataType::Binary | DataType::List(_) | DataType::Map(_, _) => 4,
        _ => 1,
    }
}

/// The kind of offsets that type `t` has, as rule 14's messages name it; `None` without
/// offsets.
fn offsets_kind(t: &DataType) -> Option<&'static str> {
    match t {
        DataType::Utf8 | DataType::Binary => Some("string and binary"),
        DataType::List(_) | DataType::Map(_, _) => Some("list"),
        _ => None,
    }
}

/// The fields of the children of type `t`, in the order of the array's children.
fn child_fields(t: &DataType) -> Vec<&Field> {
    match t {
        DataType::Struct(fields) => fields.iter().map(|f| f.as_ref()).collect(),
        DataType::List(f) | DataType::Map(f, _) => vec![f.as_ref()],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};

    fn export(batch: &RecordBatch) -> (ArrowArray, Box<FFI_ArrowArray>) {
        let data = StructArray::from(batch.clone()).into_data();
        let mut ffi = Box::new(FFI_ArrowArray::new(&data));
        // SAFETY: identical layouts; the view is read only while `ffi` lives.
        let raw = unsafe { std::ptr::read(&mut *ffi as *mut FFI_ArrowArray as *const ArrowArray) };
        (raw, ffi)
    }

    fn sample() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
            ],
        )
        .expect("a valid batch")
    }

    #[test]
    fn a_well_formed_batch_passes_the_raw_checks() {
        let batch = sample();
        let (raw, _owner) = export(&batch);
        let t = DataType::Struct(batch.schema().fields().clone());
        assert_eq!(check_array(&raw, &t, false, None), Ok(()));
    }

    /// arrow-rs 60 exports a sliced primitive array with offset 0 (it moves the buffer
    /// pointer), but a sliced string array with offsets that start past 0: exactly what rule 14
    /// warns about, so a library must copy a sliced batch before exporting it.
    #[test]
    fn a_sliced_batch_exported_by_arrow_rs_has_string_offsets_past_zero() {
        let batch = sample().slice(1, 2);
        let (raw, _owner) = export(&batch);
        let t = DataType::Struct(batch.schema().fields().clone());
        assert_eq!(
            check_array(&raw, &t, false, None),
            Err((
                14,
                ", column `name`: string and binary offsets start at 1; string and binary offsets must start at 0".into()
            ))
        );
    }

    #[test]
    fn large_strings_are_not_version_1() {
        assert_eq!(
            check_type("s", &DataType::LargeUtf8),
            Err((
                18,
                "column `s` has the Arrow type LargeUtf8, which version 1 does not read; use utf8"
                    .into()
            ))
        );
    }
}
