//! The issues API of the tests (`tests/common/issues.rs`) as a process of its own, for the
//! Spark tests and the benchmark: `cargo run --release -p rest_example --example issues_api --
//! <count>` prints its URL, then serves on 127.0.0.1 until its standard input closes.

#[path = "../tests/common/issues.rs"]
mod issues;

use std::io::Read;

fn main() -> std::io::Result<()> {
    let count = std::env::args()
        .nth(1)
        .map(|c| {
            c.parse()
                .map_err(|e| std::io::Error::other(format!("the count of issues, `{c}`: {e}")))
        })
        .transpose()?
        .unwrap_or(100_000);
    let server = issues::serve(count)?;
    println!("{}", server.url());
    // Until the parent closes our stdin (or dies): the server stops with this process.
    let mut rest = Vec::new();
    std::io::stdin().read_to_end(&mut rest)?;
    drop(server);
    Ok(())
}
