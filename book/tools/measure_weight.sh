#!/usr/bin/env bash
# The weight of a generated library against the specification's example in Rust
# (book/tools/seed_example: the range source on arrow-array and arrow-schema alone, raw FFI): a
# cold `cargo build --release` of each (a target directory of its own, nothing built before)
# and the size of the library it makes, one after the other in the same run so that all see the
# same machine. The example is built twice: as the specification writes it (cargo's default
# release profile), and with the release profile of the generated Cargo.toml.
#
#   book/tools/measure_weight.sh [work directory] [-d capabilities=... and other answers]
#
# Needs cargo-generate. Prints one line per library (name, seconds, bytes), then the ratios of
# the generated library's size to each build of the example.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
shift || true
mkdir -p "$work"

# The template from the files git knows, as the tests take it (the checkout's target
# directory would be copied otherwise).
rm -rf "$work/checkout" "$work/generated" "$work/example" "$work/example_profile"
mkdir -p "$work/checkout"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 -I{} cp -P --parents {} "$work/checkout/")
(cd "$work" && cargo generate --path "$work/checkout" --name generated --silent --vcs none \
    -d "sdk=path:$root" "$@" >/dev/null)

# The example on its own (a workspace of its own), as written and with the generated profiles.
cp -r "$root/book/tools/seed_example" "$work/example"
printf '\n[workspace]\n' >>"$work/example/Cargo.toml"
cp -r "$root/book/tools/seed_example" "$work/example_profile"
{
    echo
    echo "[workspace]"
    sed -n '/^\[profile.dev\]/,$p' "$work/generated/Cargo.toml"
} >>"$work/example_profile/Cargo.toml"

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
    bytes=$(wc -c <"$lib" | tr -d ' ')
    eval "size_$name=$bytes"
    printf '%-16s %7.1f s %10d bytes\n' "$name" "$(awk "BEGIN { print $end - $start }")" "$bytes"
}

build example "$work/example"
build example_profile "$work/example_profile"
build generated "$work/generated"
awk -v g="$size_generated" -v e="$size_example" -v p="$size_example_profile" 'BEGIN {
    printf "generated: %.2fx the example as written, %.2fx the example with its profile\n", g / e, g / p
}'
