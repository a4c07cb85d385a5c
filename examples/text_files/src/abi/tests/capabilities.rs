//! The table declares exactly the chosen capabilities, with every function each requires and
//! no function of a capability it does not declare (the table of the specification).

use crate::abi::ffi::{
    SPARK_DS_BATCH_READ, SPARK_DS_BATCH_WRITE, SPARK_DS_MICRO_BATCH_READ, SPARK_DS_STREAMING_WRITE,
};
use crate::abi::table::{CAPABILITIES, LIBRARY};

/// Whether each function of the table is set, by its name in the header.
fn set_functions() -> Vec<(&'static str, bool)> {
    let t = &LIBRARY;
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

/// The functions of each capability, required then optional, as the specification lists them.
const WRITE: &[&str] = &[
    "create_writer",
    "commit",
    "abort",
    "close_writer",
    "create_data_writer",
    "write",
    "commit_data_writer",
    "abort_data_writer",
    "close_data_writer",
    "serialize_writer",
];
fn functions_of(capability: u64) -> (&'static [&'static str], &'static [&'static str]) {
    match capability {
        SPARK_DS_BATCH_READ => (
            &["create_reader", "partitions", "read", "close_reader"],
            &["push_limit", "prune_columns", "serialize_reader"],
        ),
        SPARK_DS_MICRO_BATCH_READ => (
            &[
                "create_stream_reader",
                "initial_offset",
                "latest_offset",
                "stream_partitions",
                "read",
                "close_stream_reader",
            ],
            &["serialize_stream_reader", "commit_offset"],
        ),
        _ => (&WRITE[..9], &WRITE[9..]),
    }
}

const ALL: [u64; 4] = [
    SPARK_DS_BATCH_READ,
    SPARK_DS_MICRO_BATCH_READ,
    SPARK_DS_BATCH_WRITE,
    SPARK_DS_STREAMING_WRITE,
];

#[test]
fn every_declared_capability_has_all_its_required_functions() {
    let set = set_functions();
    let is_set = |name: &str| set.iter().any(|(n, s)| *n == name && *s);
    for required in ["create", "close", "last_error", "schema"] {
        assert!(is_set(required), "`{required}` is NULL");
    }
    for capability in ALL.into_iter().filter(|c| CAPABILITIES & c != 0) {
        for name in functions_of(capability).0 {
            assert!(
                is_set(name),
                "capability {capability} is declared but `{name}` is NULL"
            );
        }
    }
}

#[test]
fn no_function_is_set_for_an_undeclared_capability() {
    let declared: Vec<&str> = ALL
        .into_iter()
        .filter(|c| CAPABILITIES & c != 0)
        .flat_map(|c| {
            let (required, optional) = functions_of(c);
            required.iter().chain(optional).copied()
        })
        .chain(["last_error", "create", "schema", "close"])
        .collect();
    for (name, set) in set_functions() {
        assert!(
            !set || declared.contains(&name),
            "`{name}` is set, but no declared capability uses it"
        );
    }
}

#[test]
fn the_pushdowns_are_set_exactly_when_chosen() {
    assert_eq!(LIBRARY.push_limit.is_some(), cfg!(feature = "push_limit"));
    assert_eq!(
        LIBRARY.prune_columns.is_some(),
        cfg!(feature = "prune_columns")
    );
}

#[test]
fn the_table_declares_version_1_and_its_whole_size() {
    assert_eq!(LIBRARY.abi_version, 1);
    assert_eq!(LIBRARY.size as usize, std::mem::size_of_val(&LIBRARY));
}
