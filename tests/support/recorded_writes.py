"""Writes into tests/conformance/fixtures/range.c built with RECORD_WRITES, which appends each
call of the driver's write protocol to the file of its option `record` (`<call> w<pid>.<n>
<rest>`), and fails its commit with `fail_commit=true`: how the Spark suites see what the JVM
plugin and the bridge call when a commit fails."""


def recorded(record):
    """The calls the library recorded in the file `record`, as (call, writer, rest), in order."""
    calls = []
    for line in record.read_text().splitlines():
        call, writer, *rest = line.split(" ")
        calls.append((call, writer, " ".join(rest)))
    return calls


def recording(writer, record, fail_commit):
    """`writer` (a DataFrameWriter or a DataStreamWriter, its format set) with the options of the
    record: every call goes to the file `record`, and commit fails if `fail_commit`."""
    return writer.option("record", str(record)).option(
        "fail_commit", "true" if fail_commit else "false"
    )


def failed_epoch_commit(write_stream, record, checkpoint) -> str:
    """Starts `write_stream` (its format set) with a commit that fails, and returns the error
    that ends the query at its first epoch."""
    query = (
        recording(write_stream, record, fail_commit=True)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        query.awaitTermination(180)
    except Exception as error:  # noqa: BLE001 - the error is what the test looks at
        return str(error)
    raise AssertionError("the streaming write ended without the failure of its commit")
