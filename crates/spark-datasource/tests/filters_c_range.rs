//! `examples/c_range`, the C library, through the filter pushdown extension: messages made by
//! the SDK's encoder, the answers of its `push_filters`, and the rows its partitions then read,
//! checked against the SDK's own evaluation of the accepted filters.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use spark_datasource::__private::{SparkDsFilterTable, SparkDsHost, SparkDsLibrary};
use spark_datasource::arrow_array::ffi::FFI_ArrowSchema;
use spark_datasource::arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use spark_datasource::arrow_array::{Array, Int64Array, RecordBatch};
use spark_datasource::filters::{col, encode, evaluate, Column, Filter, Literal, Value};

/// Builds c_range as its Makefile does (`-Wall -Wextra -Werror -pedantic`) into `dir`.
fn build(dir: &Path) -> PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/c_range");
    let library = dir.join("libspark_datasource_c_range.so");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fPIC",
            "-shared",
        ])
        .args(["-fvisibility=hidden", "-O1", "-g"])
        .arg(format!("-I{}", env!("CARGO_MANIFEST_DIR")))
        .arg("-o")
        .arg(&library)
        .arg(example.join("c_range.c"))
        .status()
        .expect("a C compiler");
    assert!(status.success(), "c_range does not compile");
    library
}

unsafe extern "C" fn log(_context: *mut c_void, _level: i32, _message: *const c_char) {}

/// # Safety
/// `sink` is a `Vec<Vec<u8>>`, `data` points to `length` bytes.
unsafe extern "C" fn collect(sink: *mut c_void, data: *const u8, length: i64) {
    // SAFETY: the test passes a `Vec<Vec<u8>>`; the library `length` bytes at `data`.
    unsafe {
        let calls = &mut *sink.cast::<Vec<Vec<u8>>>();
        calls.push(if length == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(data, length as usize).to_vec()
        });
    }
}

/// `SparkDsCreateInfo` of `spark_datasource.h`.
#[repr(C)]
struct SparkDsCreateInfo {
    size: i64,
    name: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    num_options: i64,
}

struct CRange {
    _library: libloading::Library,
    table: &'static SparkDsLibrary,
    filters: &'static SparkDsFilterTable,
}

/// What one read of c_range gave: the answers, and the ids of all partitions, in order.
#[derive(Debug, PartialEq)]
struct Read {
    answers: Vec<u8>,
    partitions: usize,
    ids: Vec<i64>,
}

impl CRange {
    fn load(path: &Path) -> CRange {
        // The host stays valid until the library is unloaded: for the whole test.
        let host: &'static SparkDsHost = Box::leak(Box::new(SparkDsHost {
            size: std::mem::size_of::<SparkDsHost>() as i64,
            abi_version: 1,
            spark_version: c"4.4.0".as_ptr(),
            log: Some(log),
            log_context: std::ptr::null_mut(),
        }));
        // SAFETY: c_range runs no code at load; its two entry points have the headers' types.
        unsafe {
            let library = libloading::Library::new(path).expect("loads");
            let init: libloading::Symbol<
                unsafe extern "C" fn(*const SparkDsHost, *mut *const SparkDsLibrary) -> c_int,
            > = library.get(b"spark_ds_init").expect("spark_ds_init");
            let filters_init: libloading::Symbol<
                unsafe extern "C" fn(*const SparkDsHost, *mut *const SparkDsFilterTable) -> c_int,
            > = library
                .get(b"spark_ds_filters_init")
                .expect("spark_ds_filters_init");
            let mut table = std::ptr::null();
            assert_eq!(init(host, &mut table), 0);
            let mut filters = std::ptr::null();
            assert_eq!(filters_init(host, &mut filters), 0);
            let (table, filters) = (&*table, &*filters);
            CRange {
                table,
                filters,
                _library: library,
            }
        }
    }

    fn last_error(&self) -> String {
        // SAFETY: c_range's last_error returns a NUL-terminated thread-local message.
        unsafe { CStr::from_ptr((self.table.last_error.expect("last_error"))()) }
            .to_string_lossy()
            .into_owned()
    }

    /// Plans the partitions of `reader` and reads each on an "executor", from the serialized
    /// state: how many there are, and the ids they hold.
    ///
    /// # Safety
    /// `reader` is an open batch reader of this library.
    unsafe fn read_partitions(&self, reader: *mut c_void) -> (usize, Vec<i64>) {
        let t = self.table;
        let mut partitions: Vec<Vec<u8>> = Vec::new();
        let mut state: Vec<Vec<u8>> = Vec::new();
        // SAFETY: as in `read`: the reader is open, the sinks are valid for the calls.
        unsafe {
            let sink = (&mut partitions as *mut Vec<Vec<u8>>).cast();
            assert_eq!(
                (t.partitions.expect("partitions"))(reader, collect, sink),
                0
            );
            let sink = (&mut state as *mut Vec<Vec<u8>>).cast();
            assert_eq!(
                (t.serialize_reader.expect("serialize"))(reader, collect, sink),
                0
            );
        }
        let mut ids = Vec::new();
        for partition in &partitions {
            let mut stream = FFI_ArrowArrayStream::empty();
            // SAFETY: the state and the partition are borrowed for the call; `stream` is
            // valid for writes.
            let status = unsafe {
                (t.read.expect("read"))(
                    std::ptr::null(),
                    state[0].as_ptr(),
                    state[0].len() as i64,
                    partition.as_ptr(),
                    partition.len() as i64,
                    &mut stream,
                )
            };
            assert_eq!(status, 0, "{}", self.last_error());
            let batches = RecordBatchStreamReader::try_new(stream).expect("a stream");
            for batch in batches {
                let batch = batch.expect("a batch");
                let column = batch.column(0);
                let column = column.as_any().downcast_ref::<Int64Array>().expect("ids");
                ids.extend(column.values().iter().copied());
            }
        }
        (partitions.len(), ids)
    }

    /// Creates a reader of `end` ids in 3 partitions, pushes `message`, then a limit when one
    /// is given, and reads every partition on "executors" from the serialized state.
    fn read(&self, message: &[u8], limit: Option<i64>) -> Result<Read, String> {
        let t = self.table;
        let keys = [c"end", c"num_partitions"].map(CStr::as_ptr);
        let values = [c"100", c"3"].map(CStr::as_ptr);
        let name = CString::new("c_range").expect("a name");
        let info = SparkDsCreateInfo {
            size: std::mem::size_of::<SparkDsCreateInfo>() as i64,
            name: name.as_ptr(),
            option_keys: keys.as_ptr(),
            option_values: values.as_ptr(),
            num_options: 2,
        };
        // SAFETY: each call follows spark_datasource.h: borrowed inputs valid for the call,
        // out-parameters valid for writes, every handle closed once.
        unsafe {
            let (mut capabilities, mut source) = (0u64, std::ptr::null_mut());
            assert_eq!(
                (t.create.expect("create"))(
                    (&info as *const SparkDsCreateInfo).cast(),
                    &mut capabilities,
                    &mut source
                ),
                0
            );
            let mut schema = FFI_ArrowSchema::empty();
            assert_eq!((t.schema.expect("schema"))(source, &mut schema), 0);
            let mut reader = std::ptr::null_mut();
            assert_eq!(
                (t.create_reader.expect("create_reader"))(source, &mut schema, &mut reader),
                0
            );
            let mut answers: Vec<Vec<u8>> = Vec::new();
            let status = (self.filters.push_filters.expect("push_filters"))(
                reader,
                message.as_ptr(),
                message.len() as i64,
                collect,
                (&mut answers as *mut Vec<Vec<u8>>).cast(),
            );
            let result = if status != 0 {
                Err(self.last_error())
            } else {
                assert_eq!(answers.len(), 1, "the sink is called exactly once");
                if let Some(limit) = limit {
                    let mut accepted = 0;
                    assert_eq!(
                        (t.push_limit.expect("push_limit"))(reader, limit, &mut accepted),
                        0
                    );
                }
                let (partitions, ids) = self.read_partitions(reader);
                Ok(Read {
                    answers: answers.remove(0),
                    partitions,
                    ids,
                })
            };
            (t.close_reader.expect("close_reader"))(reader);
            (t.close.expect("close"))(source);
            result
        }
    }
}

/// The ids of `[0, 100)` that every accepted filter keeps, by the SDK's evaluation.
fn expected(filters: &[Filter], answers: &[u8]) -> Vec<i64> {
    let ids = Arc::new(Int64Array::from_iter_values(0..100));
    let batch = RecordBatch::try_from_iter([("id", ids as Arc<dyn Array>)]).expect("a batch");
    let mut keep: Vec<bool> = vec![true; 100];
    for (filter, &answer) in filters.iter().zip(answers) {
        if answer == 1 {
            let mask = evaluate(filter, &batch).expect("evaluates");
            keep.iter_mut()
                .enumerate()
                .for_each(|(i, k)| *k &= mask.value(i));
        }
    }
    (0..100).filter(|&i| keep[i as usize]).collect()
}

fn check(c_range: &CRange, filters: &[Filter], answers: &[u8], ids: &[i64]) {
    let read = c_range
        .read(&encode(filters).expect("encodes"), None)
        .expect("reads");
    assert_eq!(read.answers, answers, "the answers to {filters:?}");
    assert_eq!(read.partitions, 3);
    assert_eq!(read.ids, ids, "the ids read for {filters:?}");
    assert_eq!(
        expected(filters, answers),
        ids,
        "the SDK's evaluation of {filters:?}"
    );
}

#[test]
fn c_range_accepts_comparisons_and_in_on_id_and_reads_only_those_ids() {
    let dir = tempfile::tempdir().expect("a directory");
    let c_range = CRange::load(&build(dir.path()));

    // BETWEEN as two conjuncts; a filter on `label` is left to Spark.
    check(
        &c_range,
        &[
            Filter::Ge(col("id"), 10i64.into()),
            Filter::Lt(col("id"), 20i64.into()),
            Filter::IsNull(col("label")),
        ],
        &[1, 1, 0],
        &(10..20).collect::<Vec<_>>(),
    );

    // IN with a NULL and ids out of range, narrowed by a comparison with the literal first.
    check(
        &c_range,
        &[
            Filter::In(
                col("id"),
                vec![
                    3i64.into(),
                    50i64.into(),
                    7i32.into(),
                    Value::Literal(Literal::Int64(None)),
                    200i64.into(),
                ],
            ),
            Filter::Lt(4i64.into(), col("id")),
        ],
        &[1, 1],
        &[7, 50],
    );

    // AND of two bounds in one conjunct; what c_range does not know is answered 0.
    check(
        &c_range,
        &[
            Filter::Ge(col("id"), 90i64.into()).and(Filter::Le(col("id"), 95i64.into())),
            Filter::Unsupported(vec![99, 1, 2]),
            Filter::Eq(col("id"), 1.5f64.into()),
            Filter::Eq(col("id"), 1i64.into()).or(Filter::Eq(col("id"), 2i64.into())),
            Filter::Eq(Value::Column(Column::nested(["id", "x"])), 1i64.into()),
            Filter::Ge(col("id"), 90i64.into()).and(Filter::IsNull(col("label"))),
        ],
        &[1, 0, 0, 0, 0, 0],
        &(90..96).collect::<Vec<_>>(),
    );

    // Contradictions read nothing; no filter reads everything.
    check(
        &c_range,
        &[Filter::Lt(col("id"), (-5i64).into())],
        &[1],
        &[],
    );
    check(
        &c_range,
        &[Filter::Eq(col("id"), Value::Literal(Literal::Null))],
        &[1],
        &[],
    );
    check(&c_range, &[], &[], &(0..100).collect::<Vec<_>>());
}

#[test]
fn a_limit_pushed_after_the_filters_caps_each_partition() {
    let dir = tempfile::tempdir().expect("a directory");
    let c_range = CRange::load(&build(dir.path()));
    let filters = [Filter::In(
        col("id"),
        [1i64, 2, 3, 40, 41, 42, 80, 81, 82]
            .map(Value::from)
            .to_vec(),
    )];
    let read = c_range
        .read(&encode(&filters).expect("encodes"), Some(2))
        .expect("reads");
    // The set [1, 82] splits into [1, 28), [28, 55), [55, 83): two ids of each.
    assert_eq!(read.ids, [1, 2, 40, 41, 80, 81]);
}

#[test]
fn a_malformed_message_is_an_error_naming_the_byte() {
    let dir = tempfile::tempdir().expect("a directory");
    let c_range = CRange::load(&build(dir.path()));
    let mut message = encode(&[Filter::AlwaysTrue, Filter::AlwaysTrue]).expect("encodes");
    message[9] = 200;
    assert_eq!(
        c_range.read(&message, None),
        Err(
            "push_filters: malformed filters at byte 9: the predicate 1 runs past the end of \
             the message"
                .into()
        )
    );
}
