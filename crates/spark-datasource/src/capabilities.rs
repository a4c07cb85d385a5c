//! The specification's table of capabilities, written once: each capability's bit of
//! `spark_datasource.h`, its name, the functions of `SparkDsLibrary` it requires and those it may
//! use. A library must not declare a capability whose required functions are NULL (rule 4 of the
//! book's conformance rules); `sparkds` checks that with this table, and the SDK's tests check
//! that `export!` fills every function each capability requires.

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::header;

    #[test]
    fn the_bits_are_the_header_s() {
        let bits: Vec<u64> = CAPABILITIES.iter().map(|c| c.bit).collect();
        assert_eq!(
            bits,
            [
                header::SPARK_DS_BATCH_READ,
                header::SPARK_DS_MICRO_BATCH_READ,
                header::SPARK_DS_BATCH_WRITE,
                header::SPARK_DS_STREAMING_WRITE
            ]
        );
        assert_eq!(TRUNCATE.bit, header::SPARK_DS_TRUNCATE);
        for capability in CAPABILITIES.iter().chain([&TRUNCATE]) {
            assert!(
                crate::HEADER.contains(&format!("#define {}", capability.name)),
                "{} is not defined by the header",
                capability.name
            );
        }
    }
}
