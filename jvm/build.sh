#!/usr/bin/env bash
# Builds the JVM plugin: the JNI library (crates/sparkds-jni) and the Java classes, packed into
# target/jvm/spark-native-datasource.jar (target/jvm/<profile>/ for a profile other than
# release), with the JNI library of this platform inside, each library beside the SHA-256 that
# the plugin checks the extracted copy against before it loads it. Writes the sources it
# compiled beside the jar (<jar name>-sources.jar). Prints the jar's path, and only that, on
# stdout. A jar works on the Spark line (3.5, 4.0, ...: jvm/spark-lines.txt) whose jars it is
# compiled against, and refuses any other at its first use. jvm/maven.sh makes Maven artifacts
# of it.
#
#   jvm/build.sh                  release build of the JNI library, for the Spark found
#   jvm/build.sh --profile dev    another Cargo profile (dev builds fastest, for tests)
#   jvm/build.sh --jni-dir DIR    no build: the JNI libraries of DIR/<platform>/, one per
#                                 platform (a release, built on each platform's runner)
#   jvm/build.sh --spark-line L   for Spark line L, into .../spark-L/spark-native-datasource-spark-L.jar:
#                                 the first Spark of that line among $SPARK_HOME, python3's
#                                 pyspark and the environment .ci/spark-lines made for L
#
# With --profile dev, CARGO_CDYLIB_FILE_SPARKDS_JNI names a dev build of the JNI library to pack
# instead of building one: the repository's test runner (tests/suite) passes the one that its
# compilation built with the workspace's features, which `cargo build -p sparkds-jni` would
# resolve apart and build again.
#
# Needs cargo, a JDK 17 or later (javac and jar) and Spark's jars: those of $SPARK_HOME/jars,
# or of the pyspark package of python3.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
profile=release
jni_dir=""
spark_line=""
while [ $# -gt 0 ]; do
  case "$1" in
    --jni-dir)
      [ $# -ge 2 ] || { echo "jvm/build.sh: --jni-dir needs a directory of <platform>/ folders" >&2; exit 2; }
      jni_dir="$2"
      shift 2
      ;;
    --profile)
      [ $# -ge 2 ] || { echo "jvm/build.sh: --profile needs a Cargo profile, such as dev" >&2; exit 2; }
      profile="$2"
      shift 2
      ;;
    --profile=*)
      profile="${1#--profile=}"
      shift
      ;;
    --spark-line)
      [ $# -ge 2 ] || { echo "jvm/build.sh: --spark-line needs a Spark line, such as 4.0" >&2; exit 2; }
      spark_line="$2"
      shift 2
      ;;
    -h | --help)
      sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
      exit 0
      ;;
    *)
      echo "jvm/build.sh: unknown argument \`$1\`; the options are --profile <name>," \
        "--jni-dir <dir> and --spark-line <line>" >&2
      exit 2
      ;;
  esac
done

for tool in javac jar; do
  if ! command -v "$tool" > /dev/null; then
    echo "jvm/build.sh: \`$tool\` not found: install a JDK 17 or later (on Debian:" \
      "apt-get install openjdk-17-jdk-headless), or put its bin directory on PATH" >&2
    exit 1
  fi
done

# The lines there are jars for: the first column of jvm/spark-lines.txt.
lines="$(grep -v '^#' "$root/jvm/spark-lines.txt" | awk 'NF { printf "%s%s", sep, $1; sep = ", " }')"
if [ -n "$spark_line" ] && ! grep -qE "^${spark_line//./[.]} " "$root/jvm/spark-lines.txt"; then
  echo "jvm/build.sh: --spark-line $spark_line: the plugin is built for Spark $lines" >&2
  exit 2
fi

# Where Spark's jars may be: $SPARK_HOME, python3's pyspark, and for --spark-line the
# environment that .ci/spark-lines makes for that line.
candidates=()
[ -n "${SPARK_HOME:-}" ] && candidates+=("$SPARK_HOME/jars")
if pyspark_jars="$(python3 -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))' 2> /dev/null)"; then
  candidates+=("$pyspark_jars")
fi
if [ -n "$spark_line" ]; then
  for python in "${SPARKDS_LINES_DIR:-$HOME/.cache/sparkds/spark-lines}/$spark_line"/bin/python3; do
    [ -x "$python" ] || continue
    candidates+=("$("$python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')")
  done
fi

# The Spark version and Scala version of a jars directory, from spark-core's file name.
spark_of() {
  local core
  core="$(cd "$1" 2> /dev/null && ls spark-core_*.jar 2> /dev/null | head -n 1)"
  [ -n "$core" ] || return 1
  core="${core#spark-core_}"
  echo "${core%%-*} ${core#*-}" | sed 's/[.]jar$//'
}

spark_jars=""
seen=()
for candidate in "${candidates[@]}"; do
  read -r scala version < <(spark_of "$candidate") || continue
  line="$(echo "$version" | cut -d. -f1,2)"
  seen+=("Spark $version in $candidate")
  if [ -z "$spark_line" ] || [ "$line" = "$spark_line" ]; then
    spark_jars="$candidate"
    break
  fi
done
if [ -z "$spark_jars" ]; then
  if [ -n "$spark_line" ]; then
    echo "jvm/build.sh: no Spark $spark_line found (${seen[*]:-no Spark at all}): set SPARK_HOME" \
      "to a Spark $spark_line distribution or pyspark directory, or run .ci/spark-lines" >&2
  else
    echo "jvm/build.sh: Spark's jars not found: set SPARK_HOME to a Spark distribution (or a" \
      "pyspark directory), or install pyspark for python3 (pip install -r" \
      "tests/spark/requirements.txt)" >&2
  fi
  exit 1
fi
if ! grep -qE "^${line//./[.]} " "$root/jvm/spark-lines.txt"; then
  echo "jvm/build.sh: $spark_jars is Spark $version, and the plugin is built for Spark $lines:" \
    "set SPARK_HOME to one of those, or pass --spark-line" >&2
  exit 1
fi

# The JNI library's file name on each platform, by the platform keys of package manifests.
jni_file() {
  case "$1" in
    linux-x86_64 | linux-aarch64) echo libsparkds_jni.so ;;
    osx-x86_64 | osx-aarch64) echo libsparkds_jni.dylib ;;
    windows-x86_64) echo sparkds_jni.dll ;;
    *) return 1 ;;
  esac
}

# Writes <library>.sha256 beside a library of the jar: the lower-case hex SHA-256 of its bytes,
# which JniLibrary compares with the copy it extracts before loading that copy.
record_hash() {
  local hash
  if command -v sha256sum > /dev/null; then
    hash="$(sha256sum "$1" | cut -d' ' -f1)"
  else
    hash="$(shasum -a 256 "$1" | cut -d' ' -f1)"
  fi
  printf '%s\n' "$hash" > "$1.sha256"
}

target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/jvm"
[ "$profile" = release ] || out="$out/$profile"
jar_name=spark-native-datasource.jar
if [ -n "$spark_line" ]; then
  out="$out/spark-$spark_line"
  jar_name="spark-native-datasource-spark-$spark_line.jar"
fi
# A build directory of its own, and the jar renamed into place at the end: two builds at once
# (test groups side by side) never mix their classes, and a JVM that has the jar open keeps
# reading the file it opened.
mkdir -p "$out"
build="$(mktemp -d "$out/build.XXXXXX")"
trap 'rm -rf "$build"' EXIT
classes="$build/classes"
mkdir -p "$classes/META-INF/services"
native="$classes/dev/sparkds/spark/native"

if [ -n "$jni_dir" ]; then
  # A release: the libraries that each platform's runner built.
  [ -d "$jni_dir" ] || { echo "jvm/build.sh: --jni-dir $jni_dir is not a directory" >&2; exit 2; }
  found=0
  for entry in "$jni_dir"/*; do
    [ -e "$entry" ] || continue
    platform="$(basename "$entry")"
    if ! jni="$(jni_file "$platform")"; then
      echo "jvm/build.sh: $entry: not a platform (linux-x86_64, linux-aarch64, osx-x86_64," \
        "osx-aarch64, windows-x86_64)" >&2
      exit 1
    fi
    [ -f "$entry/$jni" ] || { echo "jvm/build.sh: $entry has no $jni" >&2; exit 1; }
    mkdir -p "$native/$platform"
    cp "$entry/$jni" "$native/$platform/$jni"
    record_hash "$native/$platform/$jni"
    found=$((found + 1))
  done
  [ "$found" -gt 0 ] || { echo "jvm/build.sh: $jni_dir holds no <platform>/ folder" >&2; exit 1; }
else
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=linux-x86_64 ;;
    Linux-aarch64 | Linux-arm64) platform=linux-aarch64 ;;
    Darwin-x86_64) platform=osx-x86_64 ;;
    Darwin-arm64 | Darwin-aarch64) platform=osx-aarch64 ;;
    MINGW*-x86_64 | MSYS*-x86_64 | CYGWIN*-x86_64) platform=windows-x86_64 ;;
    *)
      echo "jvm/build.sh: no JNI library for $(uname -s) $(uname -m): the plugin runs on" \
        "linux-x86_64, linux-aarch64, osx-x86_64, osx-aarch64 and windows-x86_64" >&2
      exit 1
      ;;
  esac
  jni="$(jni_file "$platform")"
  if [ "$profile" = dev ] && [ -n "${CARGO_CDYLIB_FILE_SPARKDS_JNI:-}" ]; then
    library="$CARGO_CDYLIB_FILE_SPARKDS_JNI"
    [ -f "$library" ] || { echo "jvm/build.sh: CARGO_CDYLIB_FILE_SPARKDS_JNI names no file: $library" >&2; exit 1; }
  else
    (cd "$root" && cargo build --locked --profile "$profile" -p sparkds-jni 1>&2)
    case "$profile" in
      dev) profile_dir=debug ;;
      *) profile_dir="$profile" ;;
    esac
    library="$target/$profile_dir/$jni"
    [ -f "$library" ] || { echo "jvm/build.sh: cargo built no $library" >&2; exit 1; }
  fi
  mkdir -p "$native/$platform"
  cp "$library" "$native/$platform/$jni"
  if command -v strip > /dev/null; then
    case "$platform" in
      linux-*) strip --strip-debug "$native/$platform/$jni" ;;
      osx-*) strip -S "$native/$platform/$jni" 2> /dev/null || true ;;
    esac
  fi
  record_hash "$native/$platform/$jni"
fi

# The sources of jvm/src/main/java, each replaced by the file of the same path in the line's
# overlay jvm/src/spark-<line>/java where it has one.
overlay="$root/jvm/src/spark-$line/java"
sources="$build/sources.txt"
: > "$sources"
while IFS= read -r source; do
  relative="${source#"$root/jvm/src/main/java/"}"
  if [ -f "$overlay/$relative" ]; then
    echo "$overlay/$relative" >> "$sources"
  else
    echo "$source" >> "$sources"
  fi
done < <(find "$root/jvm/src/main/java" -name '*.java' | sort)
if [ -d "$overlay" ]; then
  while IFS= read -r source; do
    relative="${source#"$overlay/"}"
    [ -f "$root/jvm/src/main/java/$relative" ] || {
      echo "jvm/build.sh: $source replaces no file of jvm/src/main/java" >&2
      exit 1
    }
  done < <(find "$overlay" -name '*.java')
fi
javac --release 17 -encoding UTF-8 -Xlint:all,-path,-serial,-processing -d "$classes" \
  -cp "$spark_jars/*" @"$sources" 1>&2
echo "dev.sparkds.spark.DefaultSource" \
  > "$classes/META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"
printf 'line=%s\nscala=%s\nspark=%s\nlines=%s\n' "$line" "$scala" "$version" "$lines" \
  > "$classes/dev/sparkds/spark/spark-line.properties"
jar="$out/$jar_name"
jar --create --file "$build/$jar_name" -C "$classes" . 1>&2
# The sources jar: the files compiled, at their package paths (an overlay's file in place of
# the one it replaces).
sources_dir="$build/sources"
while IFS= read -r source; do
  relative="${source#"$overlay/"}"
  relative="${relative#"$root/jvm/src/main/java/"}"
  mkdir -p "$sources_dir/$(dirname "$relative")"
  cp "$source" "$sources_dir/$relative"
done < "$sources"
sources_jar="${jar_name%.jar}-sources.jar"
jar --create --file "$build/$sources_jar" -C "$sources_dir" . 1>&2
mv -f "$build/$sources_jar" "$out/$sources_jar"
mv -f "$build/$jar_name" "$jar"
echo "$jar"
