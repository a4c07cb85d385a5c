//! What every test of the library needs.

use std::sync::OnceLock;

use sparkds::Library;

/// No options beyond those of [`CREATE_OPTIONS`]: the defaults of the data source.
pub const NO_OPTIONS: [(&str, &str); 0] = [];

/// The options that every test gives `create`, before its own: add those your source
/// requires (a URL, a path), so that each test need not repeat them.
pub const CREATE_OPTIONS: &[(&str, &str)] = &[];

/// The library that `cargo test` built for this package, loaded once like Spark loads it.
pub fn library() -> sparkds::Result<&'static Library> {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    if let Some(library) = LIBRARY.get() {
        return Ok(library);
    }
    let name = concat!("spark_datasource_", env!("CARGO_PKG_NAME"));
    let loaded =
        Library::load(sparkds::cdylib(name)?)?.with_options(CREATE_OPTIONS.iter().copied());
    Ok(LIBRARY.get_or_init(|| loaded))
}

/// The names of the `export!` line of `src/lib.rs`: what the library declares to Spark.
pub fn exported() -> Vec<String> {
    sparkds::exported_names(include_str!("../../src/lib.rs"))
        .unwrap_or_else(|e| panic!("src/lib.rs: {e}"))
}

/// Whether the `export!` line names `name`; the tests of a capability run only when it does.
pub fn exports(name: &str) -> bool {
    exported().iter().any(|n| n == name)
}

/// The message of an error, for assertions on the exact text a user sees.
pub fn message<T: std::fmt::Debug>(result: sparkds::Result<T>) -> String {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => error.to_string(),
    }
}
