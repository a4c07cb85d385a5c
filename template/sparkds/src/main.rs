//! The `sparkds` command. Subcommands are added by their modules.
fn main() {}
