//! `export!` builds a table that declares exactly the capabilities it names, with every
//! function each requires and no function of a capability it does not name (the table of the
//! specification), for every combination the header allows.

use super::source::{Everything, ReadOnly};
use crate::ffi::library::declared;
use spark_datasource_abi::v1::{
    SparkDsLibrary, SPARK_DS_BATCH_READ, SPARK_DS_BATCH_WRITE, SPARK_DS_MICRO_BATCH_READ,
    SPARK_DS_STREAMING_WRITE, SPARK_DS_TRUNCATE,
};
use spark_datasource_core::capabilities::FUNCTIONS;

/// Whether each function of the table is set, by its name in the header (the core's table of
/// them, whose order `layout` checks against the C compiler's).
fn set_functions(t: &SparkDsLibrary) -> Vec<(&'static str, bool)> {
    let first = std::ptr::addr_of!(t.last_error).cast::<usize>();
    FUNCTIONS
        .iter()
        .enumerate()
        // SAFETY: the fields from `last_error` on are the table's function pointers, one after
        // the other (`layout`); each is read as the address it holds, 0 for NULL.
        .map(|(i, name)| (*name, unsafe { *first.add(i) } != 0))
        .collect()
}

/// The functions of `capability`, required then optional: the specification's table, written
/// once in `spark_datasource_core::capabilities`.
fn functions_of(capability: u64) -> (&'static [&'static str], &'static [&'static str]) {
    let row = spark_datasource_core::capabilities::CAPABILITIES
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

/// The core's table of capabilities is the header's: each bit is the one `#define`d under its
/// name.
#[test]
fn the_capability_table_s_bits_are_the_header_s() {
    use spark_datasource_core::capabilities::{CAPABILITIES, TRUNCATE};
    let bits: Vec<u64> = CAPABILITIES.iter().map(|c| c.bit).collect();
    assert_eq!(
        bits,
        [
            SPARK_DS_BATCH_READ,
            SPARK_DS_MICRO_BATCH_READ,
            SPARK_DS_BATCH_WRITE,
            SPARK_DS_STREAMING_WRITE
        ]
    );
    assert_eq!(TRUNCATE.bit, SPARK_DS_TRUNCATE);
    for capability in CAPABILITIES.iter().chain([&TRUNCATE]) {
        assert!(
            crate::HEADER.contains(&format!("#define {}", capability.name)),
            "{} is not defined by the header",
            capability.name
        );
    }
}
