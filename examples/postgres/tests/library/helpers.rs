//! What every test of the library needs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use sparkds::arrow_array::RecordBatch;
use sparkds::Library;

pub use crate::server::shared as server;

/// No options: the defaults of the data source.
pub const NO_OPTIONS: [(&str, &str); 0] = [];

/// The library that `cargo test` built for this package, loaded once like Spark loads it.
pub fn library() -> sparkds::Result<&'static Library> {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    if let Some(library) = LIBRARY.get() {
        return Ok(library);
    }
    let loaded = Library::load(sparkds::cdylib("spark_datasource_postgres")?)?;
    Ok(LIBRARY.get_or_init(|| loaded))
}

/// The names of the `export!` line of `src/lib.rs`: what the library declares to Spark.
pub fn exported() -> Vec<String> {
    sparkds::exported_names(include_str!("../../src/lib.rs"))
        .unwrap_or_else(|e| panic!("src/lib.rs: {e}"))
}

/// The message of an error, for assertions on the exact text a user sees.
pub fn message<T: std::fmt::Debug>(result: sparkds::Result<T>) -> String {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => error.to_string(),
    }
}

/// A table name no other test uses: tests share one server.
pub fn table(what: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{what}_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Runs `sql` on the shared server as the test role.
pub fn sql(statements: &str) {
    server()
        .client()
        .batch_execute(statements)
        .unwrap_or_else(|e| panic!("{statements}: {e:?}"));
}

/// The rows of every batch as one batch (the schema of the first).
pub fn concat(batches: &[RecordBatch]) -> RecordBatch {
    let schema = batches
        .first()
        .map(RecordBatch::schema)
        .expect("at least one batch");
    arrow_select::concat::concat_batches(&schema, batches).expect("batches of one schema")
}

/// The options of a read or a write of `dbtable` on the shared server.
pub fn options(dbtable: &str) -> Vec<(String, String)> {
    server().options(dbtable)
}
