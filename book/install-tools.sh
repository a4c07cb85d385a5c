#!/usr/bin/env bash
# Installs the tools that build and test the book: mdbook, at the version the book is written
# for, from crates.io. Idempotent: does nothing when that version is already installed. CI calls
# it before `cargo test`, whose `book` test binary runs `mdbook build`.
#
# mdbook-linkcheck is not installed: the `book` test binary (tests/book/main.rs) checks every
# internal link, anchor, image and `{{#include}}` itself, without the network, so the book
# needs one tool only.
#
# Usage: book/install-tools.sh [--root DIR]   (default: cargo's own bin directory)
set -euo pipefail

MDBOOK_VERSION=0.5.4

root_args=()
bin_dir="${CARGO_HOME:-$HOME/.cargo}/bin"
if [ "${1:-}" = "--root" ] && [ -n "${2:-}" ]; then
  root_args=(--root "$2")
  bin_dir="$2/bin"
fi

installed="$("$bin_dir/mdbook" --version 2>/dev/null || true)"
if [ "$installed" = "mdbook v$MDBOOK_VERSION" ]; then
  echo "mdbook $MDBOOK_VERSION is installed: $bin_dir/mdbook"
  exit 0
fi

# Only the `search` feature: the book needs no `serve` or `watch`, which pull in a web server.
cargo install mdbook --locked --version "$MDBOOK_VERSION" \
  --no-default-features --features search ${root_args[@]+"${root_args[@]}"}
"$bin_dir/mdbook" --version
