#!/usr/bin/env bash
# The weight of a generated library against the specification's example, `examples/rust_range`:
# a cold `cargo build --release` of each (a target directory of its own, nothing built before)
# and the size of the library it makes, one after the other in the same run so that both see
# the same machine. rust_range gets the release profile of the template, so that both are built
# the same way.
#
#   book/tools/measure_weight.sh [work directory] [-d capabilities=... and other answers]
#
# Needs cargo-generate. Prints one line per library: name, seconds, bytes.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
shift || true
mkdir -p "$work"

# The template from the files git knows, as the tests take it (the checkout's target
# directory would be copied otherwise).
rm -rf "$work/checkout" "$work/generated" "$work/rust_range"
mkdir -p "$work/checkout"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 -I{} cp -P --parents {} "$work/checkout/")
(cd "$work" && cargo generate --path "$work/checkout" --name generated --silent --vcs none \
    -d "sdk=path:$root" "$@" >/dev/null)

# rust_range on its own, with the crates of the checkout and the template's profiles.
cp -r "$root/examples/rust_range" "$work/rust_range"
sed -i "s|path = \"../../crates/|path = \"$root/crates/|" "$work/rust_range/Cargo.toml"
{
    echo
    echo "[workspace]"
    sed -n '/^\[profile.dev\]/,$p' "$work/generated/Cargo.toml"
} >>"$work/rust_range/Cargo.toml"

build() {
    local name="$1" dir="$2"
    rm -rf "$work/target-$name"
    local start end
    start=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR="$work/target-$name" cargo build --release --quiet)
    end=$(date +%s.%N)
    local lib
    lib=$(find "$work/target-$name/release" -maxdepth 1 -name 'libspark_datasource_*.so' -o \
        -maxdepth 1 -name 'libspark_datasource_*.dylib' -o -maxdepth 1 -name 'spark_datasource_*.dll' |
        head -n 1)
    printf '%-10s %7.1f s %10d bytes\n' "$name" "$(awk "BEGIN { print $end - $start }")" "$(wc -c <"$lib")"
}

build rust_range "$work/rust_range"
build generated "$work/generated"
