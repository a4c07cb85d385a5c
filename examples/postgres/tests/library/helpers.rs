//! What the tests of this source need beyond `sparkds::testing` (its library, loaded once as
//! Spark loads it, and the message of an error): tables on the shared server.

use std::sync::atomic::{AtomicUsize, Ordering};

use sparkds::arrow_array::RecordBatch;
pub use sparkds::testing::{library, message};

pub use crate::server::shared as server;

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

/// Whether this process is the one in the time zone `zone` where the test `name` (its path in
/// this binary) runs its body: a read's time zone is the machine's (`TZ`), so the first call
/// runs the test again in a child process in that zone, asserts it passed, and returns false.
pub fn in_time_zone(name: &str, zone: &str) -> bool {
    const CHILD: &str = "SPARKDS_POSTGRES_TEST_TIME_ZONE";
    if std::env::var(CHILD).as_deref() == Ok(zone) {
        return true;
    }
    let output = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", name, "--test-threads", "1"])
        .env("TZ", zone)
        .env(CHILD, zone)
        .output()
        .expect("the test runs again in a child process");
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && shown.contains("1 passed"),
        "{name} in {zone}:\n{shown}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    false
}
