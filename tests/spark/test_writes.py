"""Writes through the bridge, what only the bridge does: the query ID of a streaming write,
derived from the sink's options. The claims of writes, on every runtime, are in
tests/claims/test_write.py."""


def test_the_streaming_query_id_holds_no_secret_option(writer_library):
    """The bridge derives a streaming write's query ID from the sink's options, for every
    process to agree on it: never from the value of a secret option (Spark's redaction rule),
    which the library would receive hashed in every create_writer."""
    from pyspark.sql.types import LongType, StructField, StructType

    from spark_native_bridge._datasource import NativeDataSource, _Library

    schema = StructType([StructField("id", LongType())])
    library = _Library(path=writer_library, sha256="0" * 64, name="e2e_rw",
                       redaction=("(?i)tenant",))

    def query_id(**options):
        source = type("Sink", (NativeDataSource,), {"_library": library})(options)
        return source._write_spec(schema, overwrite=False, streaming=True).query_id

    with_secret = query_id(path="/t", password="hunter2", jdbcUrl="u://x:y@h", tenant="a")
    assert with_secret == query_id(path="/t", password="other", jdbcUrl="u://z@h", tenant="b")
    # The other options identify the sink, as before; the secret ones by their keys.
    assert with_secret != query_id(path="/elsewhere", password="hunter2", jdbcUrl="u://x:y@h",
                                   tenant="a")
    assert with_secret != query_id(path="/t", jdbcUrl="u://x:y@h", tenant="a")
