//! The frozen v1 declarations (`spark_datasource_abi::v1`, which the SDK and the host use) have
//! the layout of `spark_datasource.h`, as the C compiler lays it out on this platform (rules 2
//! and 6).

use std::mem::{offset_of, size_of};

use spark_datasource_abi::arrow::{ArrowArray, ArrowArrayStream, ArrowSchema};
use spark_datasource_abi::v1::*;

use crate::helpers::compile_and_run_c;

macro_rules! layout {
    ($($ty:ident { $($field:ident),* $(,)? })*) => {{
        let mut lines = Vec::new();
        $(
            lines.push(format!("{} {}", stringify!($ty), size_of::<$ty>()));
            $(lines.push(format!("{}.{} {}", stringify!($ty), stringify!($field), offset_of!($ty, $field)));)*
        )*
        lines
    }};
}

#[test]
fn the_frozen_v1_layout_matches_the_header() {
    let mut rust = layout! {
        SparkDsHost { abi_version, spark_version, log, log_context }
        SparkDsCreateInfo { name, option_keys, option_values, num_options }
        SparkDsTaskContext { task_id, is_interrupted, host_data, stage_id, partition_id, attempt_number }
        SparkDsWriteInfo { schema, query_id, mode, streaming }
        SparkDsLibrary {
            abi_version, last_error, create, schema, create_reader, create_stream_reader,
            create_writer, close, push_limit, prune_columns, partitions, serialize_reader,
            close_reader, initial_offset, latest_offset, stream_partitions,
            serialize_stream_reader, commit_offset, close_stream_reader, read, serialize_writer,
            commit, abort, close_writer, create_data_writer, write, commit_data_writer,
            abort_data_writer, close_data_writer,
        }
    };
    rust.push(format!("struct ArrowSchema {}", size_of::<ArrowSchema>()));
    rust.push(format!("struct ArrowArray {}", size_of::<ArrowArray>()));
    rust.push(format!(
        "struct ArrowArrayStream {}",
        size_of::<ArrowArrayStream>()
    ));
    let c = compile_and_run_c("layout.c");
    assert_eq!(rust, c.lines().collect::<Vec<_>>());
}
