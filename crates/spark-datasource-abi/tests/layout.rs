//! The declarations equal `spark_datasource.h` and `spark_datasource_filters.h`, as the system
//! C compiler sees them: the size of every struct, the offset of every field, and the type of
//! every field and of `spark_ds_init`. The types are spelled in C from the Rust types themselves (`CType`), and
//! the C compiler checks them against the header with `-Werror`, since offsets alone miss a
//! parameter whose type changed.

use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use spark_datasource_abi::arrow::{ArrowArray, ArrowArrayStream, ArrowSchema};
use spark_datasource_abi::bench::SparkDsBenchCall;
use spark_datasource_abi::filters::SparkDsFilterTable;
use spark_datasource_abi::v1::*;

/// A Rust type of the interface, spelled as a C declaration of `declarator`.
trait CType {
    fn declare(declarator: &str) -> String;
    fn declare_const(declarator: &str) -> String {
        format!("const {}", Self::declare(declarator))
    }
}

macro_rules! c_named {
    ($($rust:ty => $c:literal),* $(,)?) => {$(
        impl CType for $rust {
            fn declare(declarator: &str) -> String {
                format!("{} {declarator}", $c).trim_end().to_string()
            }
        }
    )*};
}

c_named!(
    i64 => "int64_t", i32 => "int32_t", u64 => "uint64_t", u8 => "uint8_t", () => "void",
    c_void => "void", FFI_ArrowSchema => "struct ArrowSchema", FFI_ArrowArray => "struct ArrowArray",
    FFI_ArrowArrayStream => "struct ArrowArrayStream", SparkDsHost => "SparkDsHost",
    SparkDsCreateInfo => "SparkDsCreateInfo", SparkDsTaskContext => "SparkDsTaskContext",
    SparkDsWriteInfo => "SparkDsWriteInfo", SparkDsLibrary => "SparkDsLibrary",
    SparkDsFilterTable => "SparkDsFilterTable", ArrowSchema => "struct ArrowSchema",
    ArrowArray => "struct ArrowArray", ArrowArrayStream => "struct ArrowArrayStream",
);

// `c_char` is `i8` where C's `char` is signed; where it is unsigned (Linux on aarch64) it is
// `u8`, and the signatures are checked on the other platforms (`signatures_are_checkable`).
#[cfg(not(all(target_os = "linux", target_arch = "aarch64")))]
c_named!(i8 => "char");

impl<T: CType> CType for *mut T {
    fn declare(declarator: &str) -> String {
        T::declare(&format!("*{declarator}"))
    }
    fn declare_const(declarator: &str) -> String {
        T::declare(&format!("* const {declarator}"))
    }
}

impl<T: CType> CType for *const T {
    fn declare(declarator: &str) -> String {
        T::declare_const(&format!("*{declarator}"))
    }
    fn declare_const(declarator: &str) -> String {
        T::declare_const(&format!("* const {declarator}"))
    }
}

impl<F: CType> CType for Option<F> {
    fn declare(declarator: &str) -> String {
        F::declare(declarator)
    }
}

macro_rules! c_function {
    ($($param:ident),*) => {
        impl<R: CType, $($param: CType),*> CType for unsafe extern "C" fn($($param),*) -> R {
            fn declare(declarator: &str) -> String {
                let params: Vec<String> = vec![$($param::declare("")),*];
                let params = if params.is_empty() { "void".to_string() } else { params.join(", ") };
                R::declare(&format!("(*{declarator})({params})"))
            }
        }
    };
}
c_function!();
c_function!(A);
c_function!(A, B);
c_function!(A, B, C);
c_function!(A, B, C, D);
c_function!(A, B, C, D, E);
c_function!(A, B, C, D, E, F);
c_function!(A, B, C, D, E, F, G);

/// One field: its name, offset and C declaration.
struct FieldLayout {
    name: &'static str,
    offset: usize,
    declaration: String,
}

/// The C declaration of a field, from the field's Rust type.
fn declaration_of<S, T: CType>(_field: fn(&S) -> &T, name: &str) -> String {
    T::declare(name)
}

macro_rules! layout {
    ($struct:ident { $($field:ident),* $(,)? }) => {
        layout!(@ $struct, stringify!($struct), $($field),*)
    };
    ($struct:ident as $c_name:literal { $($field:ident),* $(,)? }) => {
        layout!(@ $struct, $c_name, $($field),*)
    };
    (@ $struct:ident, $c_name:expr, $($field:ident),*) => {
        (
            $c_name,
            size_of::<$struct>(),
            vec![$(FieldLayout {
                name: stringify!($field),
                offset: offset_of!($struct, $field),
                declaration: declaration_of(|s: &$struct| &s.$field, stringify!($field)),
            }),*],
        )
    };
}

/// `SparkDsLibrary`, every field.
fn table() -> (&'static str, usize, Vec<FieldLayout>) {
    layout!(SparkDsLibrary {
        size,
        abi_version,
        last_error,
        create,
        schema,
        create_reader,
        create_stream_reader,
        create_writer,
        close,
        push_limit,
        prune_columns,
        partitions,
        serialize_reader,
        close_reader,
        initial_offset,
        latest_offset,
        stream_partitions,
        serialize_stream_reader,
        commit_offset,
        close_stream_reader,
        read,
        serialize_writer,
        commit,
        abort,
        close_writer,
        create_data_writer,
        write,
        commit_data_writer,
        abort_data_writer,
        close_data_writer
    })
}

fn structs() -> Vec<(&'static str, usize, Vec<FieldLayout>)> {
    vec![
        layout!(SparkDsHost {
            size,
            abi_version,
            spark_version,
            log,
            log_context
        }),
        layout!(SparkDsCreateInfo {
            size,
            name,
            option_keys,
            option_values,
            num_options
        }),
        layout!(SparkDsTaskContext {
            size,
            task_id,
            is_interrupted,
            host_data,
            stage_id,
            partition_id,
            attempt_number
        }),
        layout!(SparkDsWriteInfo {
            size,
            schema,
            query_id,
            mode,
            streaming
        }),
        layout!(ArrowArrayStream as "struct ArrowArrayStream" {
            get_schema, get_next, get_last_error, release, private_data
        }),
        layout!(ArrowSchema as "struct ArrowSchema" {
            format, name, metadata, flags, n_children, children, dictionary, release,
            private_data
        }),
        layout!(ArrowArray as "struct ArrowArray" {
            length, null_count, offset, n_buffers, n_children, buffers, children, dictionary,
            release, private_data
        }),
        table(),
        layout!(SparkDsFilterTable {
            size,
            version,
            push_filters
        }),
    ]
}

/// The frozen layout of version 1 on 64-bit platforms: a later header must keep it.
#[test]
fn the_version_1_layout_is_frozen() {
    if size_of::<usize>() != 8 {
        return;
    }
    let sizes: Vec<(&str, usize)> = structs()
        .iter()
        .map(|(name, size, _)| (*name, *size))
        .collect();
    assert_eq!(
        sizes,
        vec![
            ("SparkDsHost", 40),
            ("SparkDsCreateInfo", 40),
            ("SparkDsTaskContext", 48),
            ("SparkDsWriteInfo", 32),
            ("struct ArrowArrayStream", 40),
            ("struct ArrowSchema", 72),
            ("struct ArrowArray", 80),
            ("SparkDsLibrary", 240),
            ("SparkDsFilterTable", 24),
        ]
    );
    assert_eq!(offset_of!(SparkDsLibrary, read), 160);
    assert_eq!(MIN_TABLE_SIZE, 168);
    assert_eq!(size_of::<FFI_ArrowSchema>(), 72);
    assert_eq!(size_of::<FFI_ArrowArray>(), 80);
    assert_eq!(size_of::<FFI_ArrowArrayStream>(), 40);
}

/// `SparkDsBenchCall` is in no C header: its version-1 layout is frozen here, field by field.
#[cfg(target_pointer_width = "64")]
#[test]
fn the_bench_call_keeps_the_layout_of_version_1() {
    let offsets = [
        ("size", offset_of!(SparkDsBenchCall, size), 0),
        ("kind", offset_of!(SparkDsBenchCall, kind), 8),
        ("stage_id", offset_of!(SparkDsBenchCall, stage_id), 12),
        (
            "partition_id",
            offset_of!(SparkDsBenchCall, partition_id),
            16,
        ),
        (
            "attempt_number",
            offset_of!(SparkDsBenchCall, attempt_number),
            20,
        ),
        ("task_id", offset_of!(SparkDsBenchCall, task_id), 24),
        ("state", offset_of!(SparkDsBenchCall, state), 32),
        (
            "state_length",
            offset_of!(SparkDsBenchCall, state_length),
            40,
        ),
        ("partition", offset_of!(SparkDsBenchCall, partition), 48),
        (
            "partition_length",
            offset_of!(SparkDsBenchCall, partition_length),
            56,
        ),
        ("epoch_id", offset_of!(SparkDsBenchCall, epoch_id), 64),
        ("input", offset_of!(SparkDsBenchCall, input), 72),
        ("add", offset_of!(SparkDsBenchCall, add), 80),
        ("sink", offset_of!(SparkDsBenchCall, sink), 88),
        ("rows", offset_of!(SparkDsBenchCall, rows), 96),
        ("batches", offset_of!(SparkDsBenchCall, batches), 104),
        ("bytes", offset_of!(SparkDsBenchCall, bytes), 112),
        ("nanos", offset_of!(SparkDsBenchCall, nanos), 120),
    ];
    for (field, offset, frozen) in offsets {
        assert_eq!(offset, frozen, "`{field}` moved");
    }
    assert_eq!(size_of::<SparkDsBenchCall>(), 128);
}

/// The function pointers of the table, by the names whose offsets the C compiler checks, are
/// the core's table of them (`spark_datasource_core::capabilities::FUNCTIONS`), in its order and
/// one after the other, as the host and this crate's tests read them.
#[test]
fn the_table_s_functions_are_the_core_s_list_in_order() {
    let structs = structs();
    let (_, size, fields) = structs
        .iter()
        .find(|(name, _, _)| *name == "SparkDsLibrary")
        .expect("the table's layout");
    let functions: Vec<&str> = fields.iter().skip(2).map(|f| f.name).collect();
    assert_eq!(
        functions,
        spark_datasource_core::capabilities::FUNCTIONS,
        "the functions of SparkDsLibrary"
    );
    let first = fields[2].offset;
    for (i, field) in fields.iter().skip(2).enumerate() {
        assert_eq!(
            field.offset,
            first + i * size_of::<usize>(),
            "{}",
            field.name
        );
    }
    assert_eq!(*size, first + functions.len() * size_of::<usize>());
}

/// Compiles `source` against the headers of the `spark-datasource` crate, which publishes them,
/// and runs it.
fn compile_and_run(source: &str) -> String {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let c_file = dir.path().join("layout.c");
    let program = dir.path().join("layout");
    std::fs::write(&c_file, source).expect("write the C file");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let header_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spark-datasource");
    let output = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror"])
        .arg("-Werror=incompatible-pointer-types")
        .arg("-I")
        .arg(&header_dir)
        .arg(&c_file)
        .arg("-o")
        .arg(&program)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}` (set CC): {e}"));
    assert!(
        output.status.success(),
        "the C compiler rejected the Rust mirror of the header:\n{}\n{source}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = Command::new(&program)
        .output()
        .expect("run the layout program");
    String::from_utf8(run.stdout).expect("UTF-8 output")
}

#[test]
fn sizes_and_offsets_equal_the_headers() {
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"spark_datasource_filters.h\"\n",
    );
    c.push_str("int main(void) {\n");
    let mut expected = String::new();
    for (name, size, fields) in structs() {
        c.push_str(&format!("  printf(\"{name} %zu\\n\", sizeof({name}));\n"));
        expected.push_str(&format!("{name} {size}\n"));
        for field in fields {
            c.push_str(&format!(
                "  printf(\"{name}.{0} %zu\\n\", offsetof({name}, {0}));\n",
                field.name
            ));
            expected.push_str(&format!("{name}.{} {}\n", field.name, field.offset));
        }
    }
    c.push_str("  return 0;\n}\n");
    assert_eq!(compile_and_run(&c), expected);
}

#[test]
fn field_types_and_spark_ds_init_match_the_headers() {
    if !signatures_are_checkable() {
        return;
    }
    let mut c = String::from("#include \"spark_datasource_filters.h\"\n");
    for (name, _, fields) in structs() {
        let function = name.replace("struct ", "");
        c.push_str(&format!(
            "void check_{function}({name} *s);\nvoid check_{function}({name} *s) {{\n  (void)s;\n"
        ));
        for field in fields {
            // Both directions: an assignment drops no qualifier and mixes no pointer types.
            c.push_str(&format!(
                "  {{ {} = s->{1}; s->{1} = {1}; }}\n",
                field.declaration, field.name
            ));
        }
        c.push_str("}\n");
    }
    let init = <SparkDsInitFunction as CType>::declare("init");
    // `export!` checks that the `spark_ds_init` it emits has the type `SparkDsInitFunction`.
    c.push_str(&format!(
        "int main(void) {{\n  {init} = spark_ds_init;\n  SparkDsInitFunction f = init;\n  \
         return f == 0;\n}}\nint spark_ds_init(const SparkDsHost *h, const SparkDsLibrary **l) \
         {{ (void)h; (void)l; return 0; }}\n"
    ));
    compile_and_run(&c);
}

/// Where C's `char` is unsigned, `c_char` is `u8` and cannot be told from `uint8_t`.
fn signatures_are_checkable() -> bool {
    c_char::MIN != 0
}
