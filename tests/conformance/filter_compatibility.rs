//! Filter pushdown with a host that does not know the extension: a library that exports
//! `spark_ds_filters_init` is read by a host of version 1 only (`fixtures/v1_host.c`, which
//! knows `spark_datasource.h` and nothing else, as Spark 4.4 itself and a `sparkds` older than
//! the extension) exactly as a host that knows the extension reads it without filters: the
//! same reader state, the same partitions, the same rows. The other cells of the book's
//! compatibility matrix (abi/filters.md) are tested in `filter_pushdown.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use sparkds::arrow_array::{Array, Int64Array};
use sparkds::BatchReadOutcome;

use crate::helpers::Fixture;

/// `fixtures/v1_host.c`, compiled once with the header of version 1.
fn v1_host() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let program = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("v1_host{}", std::env::consts::EXE_SUFFIX));
        let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
        let mut command = Command::new(&cc);
        command
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(manifest.join("../crates/spark-datasource"))
            .arg("-o")
            .arg(&program)
            .arg(manifest.join("conformance/fixtures/v1_host.c"));
        if cfg!(target_os = "linux") {
            command.arg("-ldl");
        }
        let output = command
            .output()
            .expect("the C compiler ($CC, else cc) runs");
        assert!(
            output.status.success(),
            "v1_host.c does not compile:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        program
    })
}

/// What the version-1 host printed for a read of `library` with `options`.
fn read_by_v1_host(library: &Path, name: &str, options: &[(&str, &str)]) -> String {
    let output = Command::new(v1_host())
        .arg(library)
        .arg(name)
        .args(options.iter().map(|(k, v)| format!("{k}={v}")))
        .output()
        .expect("v1_host runs");
    assert!(
        output.status.success(),
        "v1_host failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `outcome` in the version-1 host's format.
fn printed(outcome: &BatchReadOutcome) -> String {
    let mut text = format!(
        "state {}\n",
        hex(outcome.reader_state.as_deref().unwrap_or(&[]))
    );
    for (i, partition) in outcome.partitions.iter().enumerate() {
        text.push_str(&format!("partition {i} {}:", hex(&partition.bytes)));
        for batch in &partition.batches {
            let ids = batch
                .column_by_name("id")
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
                .expect("an int64 `id`");
            for row in 0..ids.len() {
                text.push_str(&format!(" {}", ids.value(row)));
            }
        }
        text.push('\n');
    }
    text
}

#[test]
fn a_host_that_never_calls_filters_init_reads_a_library_with_it_exactly_as_before() {
    let fixture = Fixture::c_range();
    let library = fixture.load();
    // sparkds called spark_ds_filters_init when it loaded the library; v1_host never will.
    assert!(library.pushes_filters());
    let options = [("end", "23"), ("num_partitions", "3"), ("batch_rows", "4")];
    let outcome = library
        .batch_read()
        .options(options)
        .run()
        .expect("sparkds reads");
    let by_v1_host = read_by_v1_host(&fixture.path(), library.name(), &options);
    assert_eq!(by_v1_host, printed(&outcome));
    // Every row, from partitions that cover the range.
    let ids: Vec<i64> = by_v1_host
        .lines()
        .filter_map(|line| line.split_once(':'))
        .flat_map(|(_, ids)| {
            ids.split_whitespace()
                .map(|id| id.parse::<i64>().expect("an id"))
        })
        .collect();
    assert_eq!(ids, (0..23).collect::<Vec<_>>());
}
