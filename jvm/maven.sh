#!/usr/bin/env bash
# Builds the JVM plugin of one Spark line as a Maven artifact, in the layout of a Maven
# repository under --out:
#
#   <out>/dev/sparkds/spark-native-datasource-<line>_<scala>/<version>/
#     spark-native-datasource-<line>_<scala>-<version>.jar           classes and JNI libraries
#     spark-native-datasource-<line>_<scala>-<version>-sources.jar   the Java sources compiled
#     spark-native-datasource-<line>_<scala>-<version>-javadoc.jar   where the documentation is
#     spark-native-datasource-<line>_<scala>-<version>.pom           what Maven Central requires
#     each with its .md5, .sha1, .sha256 and .sha512
#
# The coordinates follow Spark's connectors (Iceberg's iceberg-spark-runtime-3.5_2.12): the
# Spark line in the artifact's name, since a jar is compiled against one line, and the Scala
# version of that line's Spark after `_`. The version is the workspace's (Cargo.toml). Then
# `spark-submit --packages dev.sparkds:spark-native-datasource-4.3_2.13:<version>` is the
# whole install: the JNI library of every platform is inside the jar.
#
# Prints one line on stdout, as crates/cargo-sparkds/released-plugin.txt records it:
#   <line> <group>:<artifact>:<version> <SHA-256 of the jar>
#
#   jvm/maven.sh --out DIR [--jni-dir DIR] [--spark-line L] [--profile P]
#
# The other options are jvm/build.sh's, which builds the jar (a release passes --jni-dir, the
# libraries built on each platform's runner). Signing and uploading are the release workflow's
# (.github/workflows/release.yml).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
GROUP=dev.sparkds
BASE=spark-native-datasource

out=""
build_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out)
      [ $# -ge 2 ] || { echo "jvm/maven.sh: --out needs a directory, the Maven repository" >&2; exit 2; }
      out="$2"
      shift 2
      ;;
    --jni-dir | --spark-line | --profile)
      [ $# -ge 2 ] || { echo "jvm/maven.sh: $1 needs a value (jvm/build.sh --help)" >&2; exit 2; }
      build_args+=("$1" "$2")
      shift 2
      ;;
    -h | --help)
      sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2
      exit 0
      ;;
    *)
      echo "jvm/maven.sh: unknown argument \`$1\`; the options are --out <dir>, --jni-dir <dir>," \
        "--spark-line <line> and --profile <name>" >&2
      exit 2
      ;;
  esac
done
[ -n "$out" ] || { echo "jvm/maven.sh: --out <dir> is needed: the Maven repository to write into" >&2; exit 2; }
for tool in jar openssl; do
  command -v "$tool" > /dev/null || { echo "jvm/maven.sh: \`$tool\` not found: install it" >&2; exit 1; }
done

# The workspace's facts: its version, repository and book (the root Cargo.toml's
# [workspace.package]).
manifest_value() {
  sed -n "/^\[workspace.package\]/,/^\[/s/^$1 = \"\(.*\)\"/\1/p" "$root/Cargo.toml"
}
version="$(manifest_value version)"
repository="$(manifest_value repository)"
homepage="$(manifest_value homepage)"
license="$(manifest_value license)"
for value in version repository homepage license; do
  [ -n "${!value}" ] || { echo "jvm/maven.sh: the root Cargo.toml has no $value in [workspace.package]" >&2; exit 1; }
done
[ "$license" = Apache-2.0 ] || {
  echo "jvm/maven.sh: the POM names the license Apache-2.0, and Cargo.toml says $license: update both" >&2
  exit 1
}

jar="$(bash "$root/jvm/build.sh" "${build_args[@]}")"
sources_jar="${jar%.jar}-sources.jar"
[ -f "$sources_jar" ] || { echo "jvm/maven.sh: jvm/build.sh wrote no $sources_jar" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The line and its Spark, as the jar records them.
(cd "$work" && jar xf "$jar" dev/sparkds/spark/spark-line.properties)
property() {
  sed -n "s/^$1=//p" "$work/dev/sparkds/spark/spark-line.properties"
}
line="$(property line)"
scala="$(property scala)"
spark="$(property spark)"
# The artifact is named by the Scala version of the line's release (jvm/spark-lines.txt): a jar
# compiled against a Spark of another Scala version would be named wrongly.
listed_scala="$(awk -v line="$line" '$1 == line { print $3 }' "$root/jvm/spark-lines.txt")"
if [ "$scala" != "$listed_scala" ]; then
  echo "jvm/maven.sh: the jar was compiled against Spark $spark (Scala $scala), and" \
    "jvm/spark-lines.txt gives Spark $line Scala ${listed_scala:-no version}: build against" \
    "the line's release" >&2
  exit 1
fi

artifact="$BASE-${line}_$scala"
directory="$out/${GROUP//.//}/$artifact/$version"
name="$artifact-$version"
mkdir -p "$directory"
cp "$jar" "$directory/$name.jar"
cp "$sources_jar" "$directory/$name-sources.jar"

# The plugin's classes are not an API to program against (Spark calls them through the format
# `native`): the javadoc jar, which Maven Central requires, points to the book.
mkdir -p "$work/javadoc"
cat > "$work/javadoc/index.html" << HTML
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>$artifact $version</title></head>
<body><p>$artifact is the JVM plugin of spark-datasource-template for Spark $line: Spark loads
it through the data source format <code>native</code>, and it has no API to program against.
How to use it: <a href="${homepage}jvm/run.html">${homepage}jvm/run.html</a>.</p></body></html>
HTML
jar --create --file "$directory/$name-javadoc.jar" -C "$work/javadoc" .

# Spark is the platform the plugin runs in, never a dependency to fetch: `provided`.
cat > "$directory/$name.pom" << POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>$GROUP</groupId>
  <artifactId>$artifact</artifactId>
  <version>$version</version>
  <packaging>jar</packaging>
  <name>$artifact</name>
  <description>Native data sources in Apache Spark $line: a Data Source V2 plugin that loads libraries built against spark_datasource.h and reads and writes them as Arrow C streams, with its JNI library for every platform inside.</description>
  <url>$homepage</url>
  <licenses>
    <license>
      <name>Apache-2.0</name>
      <url>https://www.apache.org/licenses/LICENSE-2.0.txt</url>
      <distribution>repo</distribution>
    </license>
  </licenses>
  <developers>
    <developer>
      <id>sparkds</id>
      <name>The spark-datasource-template developers</name>
      <url>$repository/graphs/contributors</url>
    </developer>
  </developers>
  <scm>
    <url>$repository</url>
    <connection>scm:git:$repository.git</connection>
    <developerConnection>scm:git:$repository.git</developerConnection>
    <tag>v$version</tag>
  </scm>
  <dependencies>
    <dependency>
      <groupId>org.apache.spark</groupId>
      <artifactId>spark-sql_$scala</artifactId>
      <version>$spark</version>
      <scope>provided</scope>
    </dependency>
  </dependencies>
</project>
POM

for file in "$name.jar" "$name-sources.jar" "$name-javadoc.jar" "$name.pom"; do
  for algorithm in md5 sha1 sha256 sha512; do
    openssl dgst "-$algorithm" -r "$directory/$file" | cut -d' ' -f1 > "$directory/$file.$algorithm"
  done
done

echo "$line $GROUP:$artifact:$version $(cat "$directory/$name.jar.sha256")"
