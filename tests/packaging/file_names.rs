//! The file name rule of libraries is written once in Rust (`spark_datasource_core::
//! library_file`, which the host, the package format, the command and the JNI library use) and
//! copied once in the Python bridge (`_archive.py`): the two name the same files and read the
//! same data sources out of them.

use std::path::Path;
use std::process::Command;

use spark_datasource_core::library_file::{data_source_name, Os};

/// The bridge's names of `data_sources` on each OS, then its data source of each of `files`
/// (`-` for none), one per line.
fn bridge_answers(data_sources: &[&str], files: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = "import sys\n\
        from spark_native_bridge import _archive as a\n\
        names, files = sys.argv[1].split(','), sys.argv[2].split(',')\n\
        for os_key in ('linux-x86_64', 'osx-aarch64', 'windows-x86_64'):\n\
        \x20   for n in names: print(a.library_file_name(os_key, n))\n\
        for f in files: print(a.data_source_of_file(f) or '-')\n";
    let output = Command::new(std::env::var("PYTHON").unwrap_or_else(|_| "python3".into()))
        .args(["-c", script, &data_sources.join(","), &files.join(",")])
        .env("PYTHONPATH", root.join("python"))
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "the bridge's file name rule failed to run: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_bridge_names_and_reads_library_files_as_the_rust_rule_does() {
    let data_sources = ["c_range", "x", "my_source_2"];
    let files = [
        "libspark_datasource_c_range.so",
        "libspark_datasource_My_Source.dylib",
        "spark_datasource_x.dll",
        "spark_datasource_x.so",
        "libspark_datasource_.so",
        "libspark_datasource_x.a",
        "libspark_datasource_x.so.1",
        "libother.so",
        "spark_datasource_x",
        "",
    ];
    let mut rust: Vec<String> = [Os::Linux, Os::MacOs, Os::Windows]
        .into_iter()
        .flat_map(|os| data_sources.map(|name| os.library_file_name(name)))
        .collect();
    rust.extend(files.map(|file| data_source_name(file).unwrap_or_else(|| "-".into())));
    assert_eq!(bridge_answers(&data_sources, &files), rust);
}
