#!/usr/bin/env bash
# The JVM plugin's part of a release (.github/workflows/release.yml): the Maven artifacts that
# jvm/maven.sh wrote, signed and bundled as Maven Central's Publisher API takes them, then
# uploaded.
#
#   maven-central.sh bundle REPOSITORY ZIP   signs every artifact of the Maven repository
#                                            REPOSITORY (jars and POMs: <file>.asc, with the
#                                            default key of gpg, or MAVEN_GPG_KEY_ID) and zips
#                                            the repository into ZIP
#   maven-central.sh upload ZIP              uploads ZIP to the Central Portal and waits until it
#                                            is published (MAVEN_CENTRAL_USERNAME and
#                                            MAVEN_CENTRAL_PASSWORD: a user token of the Portal)
#
# tests/release runs `bundle` with a key made for the test and checks every signature.
set -euo pipefail

PORTAL="${MAVEN_CENTRAL_PORTAL:-https://central.sonatype.com}"

fail() {
  echo "maven-central.sh: $*" >&2
  exit 1
}

bundle() {
  local repository="$1" zip="$2"
  [ -d "$repository" ] || fail "$repository is not a directory: pass the --out of jvm/maven.sh"
  command -v gpg > /dev/null || fail "gpg is needed to sign the artifacts"
  local key=()
  [ -n "${MAVEN_GPG_KEY_ID:-}" ] && key=(--local-user "$MAVEN_GPG_KEY_ID")
  local signed=0 file
  # Every artifact, not its checksums or signatures (Central wants the .asc of each artifact).
  while IFS= read -r -d '' file; do
    gpg --batch --yes --armor --detach-sign "${key[@]}" --output "$file.asc" "$file"
    signed=$((signed + 1))
  done < <(find "$repository" -type f \( -name '*.jar' -o -name '*.pom' \) -print0)
  [ "$signed" -gt 0 ] || fail "$repository holds no jar or POM"
  rm -f "$zip"
  local absolute
  absolute="$(cd "$(dirname "$zip")" && pwd)/$(basename "$zip")"
  (cd "$repository" && zip -q -r -X "$absolute" .)
  echo "$zip: $signed artifacts signed"
}

upload() {
  local zip="$1"
  [ -f "$zip" ] || fail "$zip is not a file: run bundle first"
  [ -n "${MAVEN_CENTRAL_USERNAME:-}" ] && [ -n "${MAVEN_CENTRAL_PASSWORD:-}" ] \
    || fail "set MAVEN_CENTRAL_USERNAME and MAVEN_CENTRAL_PASSWORD to a user token of $PORTAL"
  local token id state
  token="$(printf '%s:%s' "$MAVEN_CENTRAL_USERNAME" "$MAVEN_CENTRAL_PASSWORD" | base64 | tr -d '\n')"
  id="$(curl --fail-with-body --silent --show-error \
    --header "Authorization: Bearer $token" \
    --form "bundle=@$zip" \
    "$PORTAL/api/v1/publisher/upload?publishingType=AUTOMATIC&name=$(basename "$zip" .zip)")"
  echo "uploaded $zip: deployment $id"
  # Validation and publication take minutes; wait up to 30.
  for _ in $(seq 1 180); do
    state="$(curl --fail-with-body --silent --show-error --request POST \
      --header "Authorization: Bearer $token" \
      "$PORTAL/api/v1/publisher/status?id=$id" \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["deploymentState"])')"
    case "$state" in
      PUBLISHED) echo "deployment $id: published"; return 0 ;;
      FAILED) fail "deployment $id failed: see $PORTAL/publishing/deployments" ;;
      *) sleep 10 ;;
    esac
  done
  fail "deployment $id is still $state after 30 minutes: see $PORTAL/publishing/deployments"
}

case "${1:-}" in
  bundle) [ $# -eq 3 ] || fail "usage: bundle REPOSITORY ZIP"; bundle "$2" "$3" ;;
  upload) [ $# -eq 2 ] || fail "usage: upload ZIP"; upload "$2" ;;
  *) fail "usage: maven-central.sh bundle REPOSITORY ZIP | upload ZIP" ;;
esac
