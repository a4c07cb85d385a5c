//! Generated inputs (proptest, on stable Rust) through the C interface of a generated project
//! with every capability, built on the SDK's shims: options, the opaque bytes a host hands back
//! (partitions, reader and writer state, offsets, commit messages) truncated, extended, flipped,
//! emptied or made huge, schemas given to `create_reader`, `prune_columns` and `create_writer`,
//! and batches given to `write`. Each call works or fails with a message (`raw::Raw::failure`);
//! a panic that crossed the boundary would abort this process and fail the suite.
//!
//! Each property runs `SPARKDS_PROPTEST_CASES` cases (default 24): set it to run many more.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use proptest::test_runner::Config;
use spark_datasource_abi::v1::{SPARK_DS_NO_EPOCH, SPARK_DS_WRITE_APPEND, SPARK_DS_WRITE_TRUNCATE};
use sparkds::arrow_array::builder::{Int64Builder, StringBuilder};
use sparkds::arrow_array::types::Int32Type;
use sparkds::arrow_array::{
    Array, ArrayRef, DictionaryArray, Int32Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use sparkds::arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

use crate::helpers::{build_dir, generated_library};
use crate::raw::{task, Raw};

/// The data source of the generated project.
pub const NAME: &str = "hardened_input";

/// Cases per property: `SPARKDS_PROPTEST_CASES`, else 24.
pub fn cases() -> u32 {
    std::env::var("SPARKDS_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

fn config() -> Config {
    Config {
        cases: cases(),
        // No files of failing seeds next to the sources: the failure message holds the input.
        failure_persistence: None,
        ..Config::default()
    }
}

/// Names, for a run of this binary that another started (under valgrind), the library that the
/// first one built: the child then builds nothing. (valgrind's shell wrapper drops variables
/// whose names are not shell names, such as `CARGO_BIN_EXE_cargo-sparkds`, so a child that built
/// would build the tool again, and arrow with it.)
pub const LIBRARY_VAR: &str = "SPARKDS_HARDENING_GENERATED_LIBRARY";

/// The path of the generated library with every capability, built once per run.
pub fn library_path() -> &'static std::path::Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(built) = std::env::var_os(LIBRARY_VAR) {
            return PathBuf::from(built);
        }
        generated_library(
            NAME,
            "batch_read,micro_batch_read,batch_write,streaming_write,truncate",
            None,
        )
    })
}

/// The generated library with every capability, loaded directly.
pub fn library() -> &'static Raw {
    static RAW: OnceLock<Raw> = OnceLock::new();
    RAW.get_or_init(|| Raw::load(library_path()))
}

/// A folder of its own for each write.
fn data_dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = build_dir().join(format!("input-{n}"));
    std::fs::create_dir_all(&dir).expect("a data directory");
    dir
}

/// The schema of the source, as `schema` returns it.
pub fn source_schema(raw: &Raw) -> SchemaRef {
    let source = raw.create(NAME, &[]).expect("create without options");
    let schema = raw
        .schema(source)
        .expect("schema")
        .expect("the sample has a schema");
    raw.close(source);
    schema
}

/// A batch of the sample's schema (`id` not null, `label`), `rows` rows from `start`.
pub fn sample_batch(schema: &SchemaRef, start: i64, rows: usize) -> RecordBatch {
    let mut ids = Int64Builder::new();
    let mut labels = StringBuilder::new();
    for i in 0..rows as i64 {
        ids.append_value(start + i);
        if i % 3 == 2 {
            labels.append_null();
        } else {
            labels.append_value(format!("row {}", start + i));
        }
    }
    RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(ids.finish()), Arc::new(labels.finish())],
    )
    .expect("a batch of the sample's schema")
}

/// How the bytes a library produced come back to it.
#[derive(Clone, Debug)]
enum Mutation {
    Same,
    Empty,
    Truncate(usize),
    Extend(Vec<u8>),
    Flip(usize, u8),
    Replace(Vec<u8>),
    /// 1 MiB of one byte after the bytes.
    Huge(u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => Just(Mutation::Same),
        1 => Just(Mutation::Empty),
        2 => any::<usize>().prop_map(Mutation::Truncate),
        2 => proptest::collection::vec(any::<u8>(), 1..64).prop_map(Mutation::Extend),
        3 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip(at, bit)),
        2 => proptest::collection::vec(any::<u8>(), 0..256).prop_map(Mutation::Replace),
        1 => any::<u8>().prop_map(Mutation::Huge),
    ]
}

fn mutate(bytes: &[u8], mutation: &Mutation) -> Vec<u8> {
    let mut out = bytes.to_vec();
    match mutation {
        Mutation::Same => {}
        Mutation::Empty => out.clear(),
        Mutation::Truncate(at) => out.truncate(at % (bytes.len() + 1)),
        Mutation::Extend(extra) => out.extend_from_slice(extra),
        Mutation::Flip(at, bit) => {
            if !out.is_empty() {
                let at = at % out.len();
                out[at] ^= 1 << bit;
            }
        }
        Mutation::Replace(bytes) => out = bytes.clone(),
        Mutation::Huge(byte) => out.extend(std::iter::repeat_n(*byte, 1 << 20)),
    }
    out
}

/// `mutate`, except that no bit of `keep` (the table's path inside a writer state) flips and no
/// truncation ends inside it: the sample writes where its state says, and a flipped path would
/// write anywhere on this machine. A truncated path leaves the state unreadable instead.
fn mutate_keeping(bytes: &[u8], mutation: &Mutation, keep: &[u8]) -> Vec<u8> {
    let Some(start) = bytes.windows(keep.len()).position(|w| w == keep) else {
        panic!("the writer state does not hold the table's path as it was given");
    };
    let range = start..start + keep.len();
    let outside = bytes.len() - keep.len();
    let moved = match mutation {
        Mutation::Flip(..) if outside == 0 => return bytes.to_vec(),
        Mutation::Flip(at, bit) => {
            let index = at % outside;
            let index = if index < range.start {
                index
            } else {
                index + keep.len()
            };
            Mutation::Flip(index, *bit)
        }
        Mutation::Truncate(at) if range.contains(&(at % (bytes.len() + 1))) => {
            Mutation::Truncate(range.start)
        }
        other => other.clone(),
    };
    mutate(bytes, &moved)
}

/// Option keys: the sample's, in any case, and any text.
fn option_key() -> impl Strategy<Value = String> {
    let known = prop::sample::select(vec![
        "end",
        "num_partitions",
        "batch_rows",
        "path",
        "rows_per_micro_batch",
        "checkpointLocation",
    ]);
    prop_oneof![
        3 => (known, proptest::collection::vec(any::<bool>(), 24)).prop_map(|(key, upper)| {
            key.chars()
                .zip(upper.iter().cycle())
                .map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c })
                .collect()
        }),
        1 => any::<String>(),
        1 => proptest::collection::vec(any::<char>(), 0..3000).prop_map(String::from_iter),
    ]
}

/// Option values: small, negative, overflowing and non-numbers, any text, long text. No
/// number above 1000, so that a case never asks for millions of partitions or rows.
fn option_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (-5i64..1000).prop_map(|n| n.to_string()),
        1 => Just("99999999999999999999999".to_string()),
        1 => Just("-9223372036854775809".to_string()),
        1 => Just(String::new()),
        1 => Just(" 7".to_string()),
        1 => Just("1e3".to_string()),
        2 => any::<String>(),
        1 => (1usize..200_000).prop_map(|n| "x".repeat(n)),
    ]
}

fn options() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec((option_key(), option_value()), 0..8)
        .prop_flat_map(|options| {
            // Repeat some keys, with other values.
            let len = options.len();
            (
                Just(options),
                proptest::collection::vec((0..len.max(1), option_value()), 0..3),
            )
        })
        .prop_map(|(mut options, repeats)| {
            for (index, value) in repeats {
                if let Some((key, _)) = options.get(index).cloned() {
                    options.push((key, value));
                }
            }
            options
        })
}

/// Schemas given to `create_reader`, `prune_columns` and `create_writer`.
#[derive(Clone, Debug)]
enum SchemaCase {
    Same,
    Reordered,
    OneColumn(usize),
    NoColumn,
    Unknown(String, u8),
    Nested,
    Dictionary,
    NullabilityFlipped,
    Duplicated,
    WrongType,
}

fn schema_case() -> impl Strategy<Value = SchemaCase> {
    prop_oneof![
        Just(SchemaCase::Same),
        Just(SchemaCase::Reordered),
        (0usize..2).prop_map(SchemaCase::OneColumn),
        Just(SchemaCase::NoColumn),
        (any::<String>(), 0u8..6).prop_map(|(name, ty)| SchemaCase::Unknown(name, ty)),
        Just(SchemaCase::Nested),
        Just(SchemaCase::Dictionary),
        Just(SchemaCase::NullabilityFlipped),
        Just(SchemaCase::Duplicated),
        Just(SchemaCase::WrongType),
    ]
}

fn data_type(ty: u8) -> DataType {
    match ty {
        0 => DataType::Int64,
        1 => DataType::Utf8,
        2 => DataType::Float64,
        3 => DataType::Boolean,
        4 => DataType::LargeUtf8,
        _ => DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
    }
}

fn schema_for(base: &Schema, case: &SchemaCase) -> Schema {
    let fields: Vec<Field> = base.fields().iter().map(|f| f.as_ref().clone()).collect();
    let fields = match case {
        SchemaCase::Same => fields,
        SchemaCase::Reordered => fields.into_iter().rev().collect(),
        SchemaCase::OneColumn(i) => vec![fields[i % fields.len()].clone()],
        SchemaCase::NoColumn => Vec::new(),
        SchemaCase::Unknown(name, ty) => {
            let mut fields = fields;
            fields.push(Field::new(name.replace('\0', ""), data_type(*ty), true));
            fields
        }
        SchemaCase::Nested => vec![Field::new(
            "nested",
            DataType::Struct(Fields::from(fields)),
            true,
        )],
        SchemaCase::Dictionary => fields
            .into_iter()
            .map(|f| {
                if f.data_type() == &DataType::Utf8 {
                    let dictionary =
                        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
                    Field::new(f.name(), dictionary, f.is_nullable())
                } else {
                    f
                }
            })
            .collect(),
        SchemaCase::NullabilityFlipped => fields
            .into_iter()
            .map(|f| {
                let nullable = !f.is_nullable();
                f.with_nullable(nullable)
            })
            .collect(),
        SchemaCase::Duplicated => {
            let mut fields = fields;
            fields.push(fields[0].clone());
            fields
        }
        SchemaCase::WrongType => fields
            .into_iter()
            .map(|f| {
                let ty = if f.data_type() == &DataType::Int64 {
                    DataType::Utf8
                } else {
                    DataType::Int64
                };
                Field::new(f.name(), ty, f.is_nullable())
            })
            .collect(),
    };
    Schema::new(fields)
}

/// Batches given to `write`.
#[derive(Clone, Debug)]
enum BatchCase {
    Plain(usize),
    Sliced(usize, usize),
    Empty,
    Nested,
    Dictionary,
    OtherSchema,
    NullInNotNull,
}

fn batch_case() -> impl Strategy<Value = BatchCase> {
    prop_oneof![
        (0usize..300).prop_map(BatchCase::Plain),
        (0usize..50, 0usize..50).prop_map(|(offset, len)| BatchCase::Sliced(offset, len)),
        Just(BatchCase::Empty),
        Just(BatchCase::Nested),
        Just(BatchCase::Dictionary),
        Just(BatchCase::OtherSchema),
        Just(BatchCase::NullInNotNull),
    ]
}

fn batch_for(schema: &SchemaRef, case: &BatchCase) -> RecordBatch {
    match case {
        BatchCase::Plain(rows) => sample_batch(schema, 0, *rows),
        BatchCase::Sliced(offset, len) => {
            let batch = sample_batch(schema, 0, 100);
            batch.slice(*offset, (*len).min(100 - offset))
        }
        BatchCase::Empty => sample_batch(schema, 0, 0),
        BatchCase::Nested => {
            let inner = StructArray::from(sample_batch(schema, 0, 5));
            let field = Field::new("nested", inner.data_type().clone(), true);
            RecordBatch::try_new(
                Arc::new(Schema::new(vec![field])),
                vec![Arc::new(inner) as ArrayRef],
            )
            .expect("a nested batch")
        }
        BatchCase::Dictionary => {
            let labels: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
            let dictionary_schema = schema_for(schema, &SchemaCase::Dictionary);
            RecordBatch::try_new(
                Arc::new(dictionary_schema),
                vec![
                    Arc::new(Int64Array::from(vec![1, 2, 3])),
                    Arc::new(labels) as ArrayRef,
                ],
            )
            .expect("a dictionary batch")
        }
        BatchCase::OtherSchema => RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("x", DataType::Int32, false),
                Field::new("y", DataType::Utf8, true),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1, 2])),
                Arc::new(StringArray::from(vec![Some("p"), None])),
            ],
        )
        .expect("a batch of another schema"),
        BatchCase::NullInNotNull => {
            // The schema says `id` is not null, the array has a null: arrow refuses to build
            // such a batch, so it goes with a nullable schema that the library's differs from.
            let relaxed = Arc::new(schema_for(schema, &SchemaCase::NullabilityFlipped));
            RecordBatch::try_new(
                relaxed,
                vec![
                    Arc::new(Int64Array::from(vec![Some(1), None])),
                    Arc::new(StringArray::from(vec![Some("a"), Some("b")])),
                ],
            )
            .expect("a batch with a null id")
        }
    }
}

/// Reads every partition of a reader, at most a few batches each; returns the rows.
fn read_all(raw: &Raw, state: &[u8], partitions: &[Vec<u8>]) -> Result<usize, String> {
    let mut rows = 0;
    for (i, partition) in partitions.iter().enumerate().take(4) {
        let task = task(i as i64, i as i32, None);
        rows += crate::raw::rows(&raw.read(&task, state, partition, 8)?);
    }
    Ok(rows)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn options_of_any_text_length_repetition_and_case(options in options()) {
        let raw = library();
        if let Ok(source) = raw.create(NAME, &options) {
            if let Ok(Some(schema)) = raw.schema(source) {
                if let Ok(reader) = raw.create_reader(source, &schema) {
                    let planned = raw.serialize_reader(reader).and_then(|state| {
                        raw.partitions(reader).map(|parts| (state, parts))
                    });
                    if let Ok((state, parts)) = planned {
                        let _ = read_all(raw, &state, &parts);
                    }
                    raw.close_reader(reader);
                }
                if let Ok(reader) = raw.create_stream_reader(source, &schema) {
                    if let Ok(start) = raw.initial_offset(reader) {
                        let _ = raw.latest_offset(reader, &start);
                    }
                    raw.close_stream_reader(reader);
                }
            }
            raw.close(source);
        }
    }

    #[test]
    fn partition_and_reader_state_bytes_changed(
        state_change in mutation(),
        partition_change in mutation(),
        which in 0usize..4,
    ) {
        let raw = library();
        let (state, partitions) = raw.plan_batch_read(NAME, &[]);
        let partition = &partitions[which % partitions.len()];
        let task = task(1, 0, None);
        let outcome = raw.read(
            &task,
            &mutate(&state, &state_change),
            &mutate(partition, &partition_change),
            16,
        );
        if matches!((&state_change, &partition_change), (Mutation::Same, Mutation::Same)) {
            prop_assert!(outcome.is_ok(), "the bytes as produced must read: {outcome:?}");
        }
    }

    #[test]
    fn offsets_changed(
        start_change in mutation(),
        end_change in mutation(),
        commit_change in mutation(),
    ) {
        let raw = library();
        let source = raw.create(NAME, &[]).expect("create");
        let schema = raw.schema(source).expect("schema").expect("a schema");
        let reader = raw.create_stream_reader(source, &schema).expect("create_stream_reader");
        let start = raw.initial_offset(reader).expect("initial_offset");
        let end = raw.latest_offset(reader, &start).expect("latest_offset");
        let state = raw.serialize_stream_reader(reader).expect("serialize_stream_reader");
        let changed_start = mutate(&start, &start_change);
        let changed_end = mutate(&end, &end_change);
        let _ = raw.latest_offset(reader, &changed_start);
        if let Ok(partitions) = raw.stream_partitions(reader, &changed_start, &changed_end) {
            let _ = read_all(raw, &state, &partitions);
        }
        let _ = raw.commit_offset(reader, &mutate(&end, &commit_change));
        raw.close_stream_reader(reader);
        raw.close(source);
    }

    #[test]
    fn writer_state_and_commit_messages_changed(
        state_change in mutation(),
        message_change in mutation(),
        streaming in any::<bool>(),
        truncate in any::<bool>(),
        abort in any::<bool>(),
    ) {
        let raw = library();
        let path = data_dir();
        let options = vec![("path".to_string(), path.display().to_string())];
        let source = raw.create(NAME, &options).expect("create");
        let schema = source_schema(raw);
        let mode = if truncate && !streaming { SPARK_DS_WRITE_TRUNCATE } else { SPARK_DS_WRITE_APPEND };
        let writer = raw.create_writer(source, &schema, mode, streaming).expect("create_writer");
        let state = raw.serialize_writer(writer).expect("serialize_writer");
        let epoch = if streaming { 0 } else { SPARK_DS_NO_EPOCH };
        let task = task(3, 0, None);
        let mut messages = Vec::new();
        let changed = mutate_keeping(&state, &state_change, path.display().to_string().as_bytes());
        if let Ok(data_writer) = raw.create_data_writer(&task, &changed, epoch) {
            if raw.write(data_writer, &sample_batch(&schema, 0, 10)).is_ok() {
                match raw.commit_data_writer(data_writer) {
                    Ok(message) => messages.push(mutate(&message, &message_change)),
                    Err(_) => { let _ = raw.abort_data_writer(data_writer); }
                }
            } else {
                let _ = raw.abort_data_writer(data_writer);
            }
            raw.close_data_writer(data_writer);
        }
        let _ = if abort {
            raw.abort(writer, epoch, &messages)
        } else {
            raw.commit(writer, epoch, &messages)
        };
        raw.close_writer(writer);
        raw.close(source);
    }

    #[test]
    fn schemas_given_to_create_reader_prune_columns_and_create_writer(
        reader_case in schema_case(),
        prune_case in schema_case(),
        writer_case in schema_case(),
    ) {
        let raw = library();
        let base = source_schema(raw);
        let path = data_dir();
        let options = vec![("path".to_string(), path.display().to_string())];
        let source = raw.create(NAME, &options).expect("create");
        if let Ok(reader) = raw.create_reader(source, &schema_for(&base, &reader_case)) {
            let _ = raw.prune_columns(reader, &schema_for(&base, &prune_case));
            if let (Ok(state), Ok(partitions)) = (raw.serialize_reader(reader), raw.partitions(reader)) {
                let _ = read_all(raw, &state, &partitions);
            }
            raw.close_reader(reader);
        }
        if let Ok(writer) = raw.create_writer(source, &schema_for(&base, &writer_case), SPARK_DS_WRITE_APPEND, false) {
            let _ = raw.abort(writer, SPARK_DS_NO_EPOCH, &[]);
            raw.close_writer(writer);
        }
        raw.close(source);
    }

    #[test]
    fn batches_given_to_write(cases in proptest::collection::vec(batch_case(), 1..4)) {
        let raw = library();
        let path = data_dir();
        let options = vec![("path".to_string(), path.display().to_string())];
        let source = raw.create(NAME, &options).expect("create");
        let schema = source_schema(raw);
        let writer = raw.create_writer(source, &schema, SPARK_DS_WRITE_APPEND, false).expect("create_writer");
        let state = raw.serialize_writer(writer).expect("serialize_writer");
        let task = task(4, 0, None);
        let data_writer = raw.create_data_writer(&task, &state, SPARK_DS_NO_EPOCH).expect("create_data_writer");
        let mut failed = false;
        for case in &cases {
            let expected_ok = matches!(case, BatchCase::Plain(_) | BatchCase::Sliced(..) | BatchCase::Empty);
            let outcome = raw.write(data_writer, &batch_for(&schema, case));
            if expected_ok && !failed {
                prop_assert!(outcome.is_ok(), "{case:?} must be written: {outcome:?}");
            }
            failed |= outcome.is_err();
        }
        let messages = if failed {
            let _ = raw.abort_data_writer(data_writer);
            Vec::new()
        } else {
            vec![raw.commit_data_writer(data_writer).expect("commit_data_writer")]
        };
        raw.close_data_writer(data_writer);
        if failed {
            raw.abort(writer, SPARK_DS_NO_EPOCH, &messages).expect("abort");
        } else {
            raw.commit(writer, SPARK_DS_NO_EPOCH, &messages).expect("commit");
        }
        raw.close_writer(writer);
        raw.close(source);
    }
}
