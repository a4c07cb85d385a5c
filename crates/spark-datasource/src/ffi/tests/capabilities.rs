//! `export!` builds a table that declares exactly the capabilities it names, with every
//! function each requires and no function of a capability it does not name (the table of the
//! specification), for every combination the header allows.

use super::source::{Everything, ReadOnly};
use crate::ffi::header::{
    SparkDsLibrary, SPARK_DS_BATCH_READ, SPARK_DS_BATCH_WRITE, SPARK_DS_MICRO_BATCH_READ,
    SPARK_DS_STREAMING_WRITE, SPARK_DS_TRUNCATE,
};
use crate::ffi::library::declared;

/// Whether each function of the table is set, by its name in the header.
fn set_functions(t: &SparkDsLibrary) -> Vec<(&'static str, bool)> {
    vec![
        ("last_error", t.last_error.is_some()),
        ("create", t.create.is_some()),
        ("schema", t.schema.is_some()),
        ("create_reader", t.create_reader.is_some()),
        ("create_stream_reader", t.create_stream_reader.is_some()),
        ("create_writer", t.create_writer.is_some()),
        ("close", t.close.is_some()),
        ("push_limit", t.push_limit.is_some()),
        ("prune_columns", t.prune_columns.is_some()),
        ("partitions", t.partitions.is_some()),
        ("serialize_reader", t.serialize_reader.is_some()),
        ("close_reader", t.close_reader.is_some()),
        ("initial_offset", t.initial_offset.is_some()),
        ("latest_offset", t.latest_offset.is_some()),
        ("stream_partitions", t.stream_partitions.is_some()),
        (
            "serialize_stream_reader",
            t.serialize_stream_reader.is_some(),
        ),
        ("commit_offset", t.commit_offset.is_some()),
        ("close_stream_reader", t.close_stream_reader.is_some()),
        ("read", t.read.is_some()),
        ("serialize_writer", t.serialize_writer.is_some()),
        ("commit", t.commit.is_some()),
        ("abort", t.abort.is_some()),
        ("close_writer", t.close_writer.is_some()),
        ("create_data_writer", t.create_data_writer.is_some()),
        ("write", t.write.is_some()),
        ("commit_data_writer", t.commit_data_writer.is_some()),
        ("abort_data_writer", t.abort_data_writer.is_some()),
        ("close_data_writer", t.close_data_writer.is_some()),
    ]
}

/// The functions of `capability`, required then optional: the specification's table, written
/// once in [`crate::capabilities`].
fn functions_of(capability: u64) -> (&'static [&'static str], &'static [&'static str]) {
    let row = crate::capabilities::CAPABILITIES
        .iter()
        .find(|c| c.bit == capability)
        .expect("a capability of the table");
    (row.required, row.optional)
}

const ALL: [u64; 4] = [
    SPARK_DS_BATCH_READ,
    SPARK_DS_MICRO_BATCH_READ,
    SPARK_DS_BATCH_WRITE,
    SPARK_DS_STREAMING_WRITE,
];

/// The tables of several `export!` lines, with the capabilities each names.
fn tables() -> Vec<(&'static str, &'static SparkDsLibrary, u64)> {
    use crate::ffi::library::names::*;
    vec![
        (
            "batch_read",
            crate::__library!(ReadOnly: batch_read),
            BATCH_READ,
        ),
        (
            "batch_read, push_limit, prune_columns",
            crate::__library!(ReadOnly: batch_read, push_limit, prune_columns),
            BATCH_READ | PUSH_LIMIT | PRUNE_COLUMNS,
        ),
        (
            "micro_batch_read",
            crate::__library!(Everything: micro_batch_read),
            MICRO_BATCH_READ,
        ),
        (
            "batch_write, truncate",
            crate::__library!(Everything: batch_write, truncate),
            BATCH_WRITE | TRUNCATE,
        ),
        (
            "streaming_write",
            crate::__library!(Everything: streaming_write),
            STREAMING_WRITE,
        ),
        (
            "everything",
            crate::__library!(Everything: batch_read, micro_batch_read, batch_write,
                streaming_write, truncate, push_limit, prune_columns),
            BATCH_READ
                | MICRO_BATCH_READ
                | BATCH_WRITE
                | STREAMING_WRITE
                | TRUNCATE
                | PUSH_LIMIT
                | PRUNE_COLUMNS,
        ),
    ]
}

#[test]
fn every_named_capability_has_all_its_required_functions() {
    for (line, table, named) in tables() {
        let set = set_functions(table);
        let is_set = |name: &str| set.iter().any(|(n, s)| *n == name && *s);
        for required in ["create", "close", "last_error", "schema"] {
            assert!(is_set(required), "{line}: `{required}` is NULL");
        }
        for capability in ALL.into_iter().filter(|c| named & c != 0) {
            for name in functions_of(capability).0 {
                assert!(is_set(name), "{line}: `{name}` is NULL");
            }
        }
    }
}

#[test]
fn no_function_is_set_for_a_capability_not_named() {
    for (line, table, named) in tables() {
        let allowed: Vec<&str> = ALL
            .into_iter()
            .filter(|c| named & c != 0)
            .flat_map(|c| {
                let (required, optional) = functions_of(c);
                required.iter().chain(optional).copied()
            })
            .chain(["last_error", "create", "schema", "close"])
            .collect();
        for (name, set) in set_functions(table) {
            assert!(
                !set || allowed.contains(&name),
                "{line}: `{name}` is set, but no named capability uses it"
            );
        }
    }
}

#[test]
fn the_pushdowns_are_set_exactly_when_named() {
    use crate::ffi::library::names::{PRUNE_COLUMNS, PUSH_LIMIT};
    for (line, table, named) in tables() {
        assert_eq!(
            table.push_limit.is_some(),
            named & PUSH_LIMIT != 0,
            "{line}"
        );
        assert_eq!(
            table.prune_columns.is_some(),
            named & PRUNE_COLUMNS != 0,
            "{line}"
        );
    }
}

#[test]
fn every_table_declares_version_1_and_its_whole_size() {
    for (line, table, _) in tables() {
        assert_eq!(table.abi_version, 1, "{line}");
        assert_eq!(table.size as usize, std::mem::size_of_val(table), "{line}");
    }
}

#[test]
fn the_declared_bits_are_the_capabilities_without_the_pushdowns() {
    use crate::ffi::library::names::*;
    let named = BATCH_READ | TRUNCATE | BATCH_WRITE | PUSH_LIMIT;
    assert_eq!(
        declared(named, named),
        SPARK_DS_BATCH_READ | SPARK_DS_BATCH_WRITE | SPARK_DS_TRUNCATE
    );
}

#[test]
#[should_panic(expected = "`truncate` lets a writer overwrite")]
fn truncate_without_a_writer_is_refused() {
    use crate::ffi::library::names::*;
    declared(BATCH_READ | TRUNCATE, BATCH_READ + TRUNCATE);
}

#[test]
#[should_panic(expected = "pushdowns of batch reads")]
fn a_pushdown_without_batch_read_is_refused() {
    use crate::ffi::library::names::*;
    declared(MICRO_BATCH_READ | PUSH_LIMIT, MICRO_BATCH_READ + PUSH_LIMIT);
}

#[test]
#[should_panic(expected = "named twice")]
fn a_capability_named_twice_is_refused() {
    use crate::ffi::library::names::*;
    declared(BATCH_READ, BATCH_READ + BATCH_READ);
}
