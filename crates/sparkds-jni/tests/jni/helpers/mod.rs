//! Builds the libraries the tests load, once per test process, and reads batches back from
//! their descriptors the way the Java side does: through the addresses and lengths only.

use spark_datasource_core::library_file::Os;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::Schema;
use sparkds_jni::loaded::{self, Loaded};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A directory of this test process, for the libraries it builds and the files it writes.
pub fn build_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("sparkds-jni-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a build directory");
        dir
    })
}

/// A fresh directory under the build directory.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = build_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a fresh directory");
    dir
}

fn run(mut command: Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// examples/c_range, built with its Makefile into this process's directory.
pub fn c_range() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = build_dir()
            .join("c_range")
            .join(Os::current().library_file_name("c_range"));
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        let mut make = Command::new("make");
        make.arg("-s")
            .arg("-C")
            .arg(repo_root().join("examples/c_range"))
            .arg(format!("LIBRARY={}", path.display()));
        run(
            make,
            "make -C examples/c_range (install make and a C compiler)",
        );
        path
    })
}

/// The conformance fixture tests/conformance/fixtures/range.c, data source `range`, built with
/// `-DFAULT_<fault>` when a fault is given: it then breaks one rule.
pub fn fixture(fault: Option<&str>) -> PathBuf {
    let dir = build_dir().join(format!("fixture-{}", fault.unwrap_or("good")));
    let path = dir.join(Os::current().library_file_name("range"));
    if path.is_file() {
        return path;
    }
    std::fs::create_dir_all(&dir).expect("a directory");
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let mut command = Command::new(cc);
    command
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-O1", "-pthread",
        ])
        .arg("-I")
        .arg(repo_root().join("crates/spark-datasource"))
        .arg("-o")
        .arg(&path)
        .arg(repo_root().join("tests/conformance/fixtures/range.c"));
    if let Some(fault) = fault {
        command.arg(format!("-DFAULT_{fault}"));
    }
    run(command, "the C compiler ($CC, else cc)");
    path
}

/// A workspace example: the repository's test runner's build of it (`CARGO_CDYLIB_FILE_<NAME>`),
/// else built by cargo (with the example's features alone, so its dependencies once more).
pub fn example(name: &str) -> PathBuf {
    if let Some(built) = sparkds::given_cdylib(name) {
        return built;
    }
    sparkds::build_current_cdylib(&repo_root().join("examples").join(name), "dev")
        .unwrap_or_else(|e| panic!("cargo build of examples/{name}: {e}"))
}

/// Loads a library as `Native.load` does, logging to stderr.
pub fn load(path: &Path) -> &'static Loaded {
    loaded::load(path, None, "4.3.0", sparkds_jni::library_log)
        .unwrap_or_else(|e| panic!("{} loads: {e}", path.display()))
}

/// The batch that a descriptor describes, copied from its addresses: what Arrow Java's vectors
/// would read. Fails if a buffer is shorter than its array needs.
pub fn read_back(schema: &Arc<Schema>, descriptor: &[i64]) -> RecordBatch {
    // SAFETY: the descriptor comes from a live stream whose batch is valid until the next call.
    let data = unsafe { sparkds_jni::descriptor::assemble(schema, descriptor) }
        .unwrap_or_else(|e| panic!("the descriptor reads back: {e}"));
    let array = StructArray::from(data);
    RecordBatch::try_new_with_options(
        schema.clone(),
        array.columns().to_vec(),
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(array.len())),
    )
    .expect("a batch")
}

/// An IPC Schema message.
pub fn ipc(schema: &Schema) -> Vec<u8> {
    sparkds_jni::ipc::schema_to_ipc(schema).expect("encodes")
}

/// Options as pairs of strings.
pub fn options(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
