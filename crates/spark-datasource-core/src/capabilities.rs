//! The specification's table of capabilities, written once: each capability's bit of
//! `spark_datasource.h`, its name, the functions of `SparkDsLibrary` it requires and those it may
//! use, and the functions of that table in the header's order ([`FUNCTIONS`]). A library must not
//! declare a capability whose required functions are NULL (rule 4 of the book's conformance
//! rules); the host checks that with this table, and the SDK's tests check that `export!` fills
//! every function each capability requires. The SDK's tests check the bits and the names against
//! the header's text, and its layout tests the order of [`FUNCTIONS`] against the C compiler's.

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    /// The bit, such as `SPARK_DS_BATCH_READ`'s `1`.
    pub bit: u64,
    /// The name of the bit in the header, such as `"SPARK_DS_BATCH_READ"`.
    pub name: &'static str,
    /// The functions of the table that must not be NULL when the capability is declared.
    pub required: &'static [&'static str],
    /// The functions the capability may use, NULL when the library does not support them.
    pub optional: &'static [&'static str],
}

const WRITE_REQUIRED: &[&str] = &[
    "create_writer",
    "commit",
    "abort",
    "close_writer",
    "create_data_writer",
    "write",
    "commit_data_writer",
    "abort_data_writer",
    "close_data_writer",
];

/// The capabilities of version 1 that name functions, in the header's order.
/// `SPARK_DS_TRUNCATE` names none: it requires a write capability.
pub const CAPABILITIES: [Capability; 4] = [
    Capability {
        bit: 1 << 0,
        name: "SPARK_DS_BATCH_READ",
        required: &["create_reader", "partitions", "read", "close_reader"],
        optional: &["push_limit", "prune_columns", "serialize_reader"],
    },
    Capability {
        bit: 1 << 1,
        name: "SPARK_DS_MICRO_BATCH_READ",
        required: &[
            "create_stream_reader",
            "initial_offset",
            "latest_offset",
            "stream_partitions",
            "read",
            "close_stream_reader",
        ],
        optional: &["serialize_stream_reader", "commit_offset"],
    },
    Capability {
        bit: 1 << 2,
        name: "SPARK_DS_BATCH_WRITE",
        required: WRITE_REQUIRED,
        optional: &["serialize_writer"],
    },
    Capability {
        bit: 1 << 3,
        name: "SPARK_DS_STREAMING_WRITE",
        required: WRITE_REQUIRED,
        optional: &["serialize_writer"],
    },
];

/// `SPARK_DS_TRUNCATE`: a writer supports `SPARK_DS_WRITE_TRUNCATE`.
pub const TRUNCATE: Capability = Capability {
    bit: 1 << 4,
    name: "SPARK_DS_TRUNCATE",
    required: &[],
    optional: &[],
};

/// The functions every library needs, whatever it declares.
pub const ALWAYS_REQUIRED: &[&str] = &["create", "close"];

/// The function pointers of `SparkDsLibrary`, version 1, in the header's order: the fields that
/// follow `size` and `abi_version`. The SDK and the host read which functions of the table
/// (`spark_datasource_abi::v1::SparkDsLibrary`) are set in this order, and name them with this
/// table; the declaration's layout test checks that its fields are these, in this order.
pub const FUNCTIONS: [&str; 28] = [
    "last_error",
    "create",
    "schema",
    "create_reader",
    "create_stream_reader",
    "create_writer",
    "close",
    "push_limit",
    "prune_columns",
    "partitions",
    "serialize_reader",
    "close_reader",
    "initial_offset",
    "latest_offset",
    "stream_partitions",
    "serialize_stream_reader",
    "commit_offset",
    "close_stream_reader",
    "read",
    "serialize_writer",
    "commit",
    "abort",
    "close_writer",
    "create_data_writer",
    "write",
    "commit_data_writer",
    "abort_data_writer",
    "close_data_writer",
];

/// The names of the capability bits set in `bits`, in the header's order (the four of
/// [`CAPABILITIES`], then [`TRUNCATE`]).
pub fn names(bits: u64) -> Vec<&'static str> {
    CAPABILITIES
        .iter()
        .chain([&TRUNCATE])
        .filter(|c| bits & c.bit != 0)
        .map(|c| c.name)
        .collect()
}

/// The bits of version 1: any other bit is unknown.
pub const KNOWN_BITS: u64 = {
    let mut bits = TRUNCATE.bit;
    let mut i = 0;
    while i < CAPABILITIES.len() {
        bits |= CAPABILITIES[i].bit;
        i += 1;
    }
    bits
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_a_capability_names_is_a_function_of_the_table() {
        for capability in CAPABILITIES {
            for function in capability.required.iter().chain(capability.optional) {
                assert!(
                    FUNCTIONS.contains(function),
                    "{}: {function}",
                    capability.name
                );
            }
        }
        for function in ALWAYS_REQUIRED {
            assert!(FUNCTIONS.contains(function), "{function}");
        }
    }

    #[test]
    fn names_follow_the_header_s_order() {
        assert_eq!(
            names(0b1_0001),
            ["SPARK_DS_BATCH_READ", "SPARK_DS_TRUNCATE"]
        );
        assert_eq!(KNOWN_BITS, 0b1_1111);
        assert!(names(1 << 9).is_empty());
    }
}
