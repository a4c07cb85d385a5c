"""c_range driven through the bridge's ctypes layer without Spark: what the Python Data Source API
cannot reach (push_limit, prune_columns, is_interrupted), and full validation of every batch."""

import ctypes

import pyarrow as pa
import pytest
from spark_native_bridge import NativeDataSourceError
from spark_native_bridge._native import TaskContext, load


@pytest.fixture(scope="module")
def native(c_range_library):
    return load(c_range_library, "c_range")


def plan(native, options, schema=None, limit=None, columns=None):
    """Plans a batch read as Spark does, and returns (state, partitions)."""
    with native.source(options) as (source, _):
        schema = schema or native.schema(source)
        with native.exported_schema(schema) as struct:
            reader_handle = native.handle(
                "create_reader", "close_reader", source, ctypes.byref(struct)
            )
            with reader_handle as reader:
                if limit is not None:
                    accepted = ctypes.c_int(0)
                    native.call("push_limit", reader, limit, ctypes.byref(accepted))
                    assert accepted.value == 1
                if columns is not None:
                    with native.exported_schema(columns) as required:
                        native.call("prune_columns", reader, ctypes.byref(required))
                partitions = native.collect("partitions", reader)
                return native.collect_one("serialize_reader", reader), partitions


def read_all(native, state, partitions, task=None):
    # The task outlives every stream: a stream calls its is_interrupted until it is released.
    task = task or TaskContext()
    batches = []
    for partition in partitions:
        reader = native.read(task, state, partition)
        for batch in reader:
            batch.validate(full=True)
            assert batch.schema.equals(reader.schema)
            batches.append(batch)
    return batches


def test_batches_are_valid_bounded_and_carry_exact_nulls(native):
    state, partitions = plan(native, {"end": "100", "batch_rows": "8", "num_partitions": "3"})
    batches = read_all(native, state, partitions)

    assert len(partitions) == 3
    assert all(b.num_rows <= 8 for b in batches)
    table = pa.Table.from_batches(batches)
    assert table.column("id").to_pylist() == list(range(100))
    assert table.column("label").null_count == sum(1 for i in range(100) if i % 3 == 2)
    assert table.schema.field("id").nullable is False


def test_a_pushed_limit_bounds_each_partition(native):
    state, partitions = plan(native, {"end": "100", "num_partitions": "4"}, limit=3)

    rows = pa.Table.from_batches(read_all(native, state, partitions)).column("id").to_pylist()

    assert rows == [0, 1, 2, 25, 26, 27, 50, 51, 52, 75, 76, 77]


def test_pruned_columns_are_read_in_the_order_spark_asks(native):
    required = pa.schema([pa.field("label", pa.string()), pa.field("id", pa.int64(), False)])
    state, partitions = plan(native, {"end": "4"}, columns=required)

    batches = read_all(native, state, partitions)

    assert batches[0].schema.names == ["label", "id"]
    assert pa.Table.from_batches(batches).to_pylist() == [
        {"label": "label 0", "id": 0},
        {"label": "label 1", "id": 1},
        {"label": None, "id": 2},
        {"label": "label 3", "id": 3},
    ]


def test_only_labels_can_be_read(native):
    state, partitions = plan(
        native, {"end": "3"}, columns=pa.schema([pa.field("label", pa.string())])
    )

    batches = read_all(native, state, partitions)

    assert [b.schema.names for b in batches] == [["label"], ["label"]]


def test_a_read_pruned_to_no_column_counts_the_rows(native):
    """count(*) prunes to no column: the batches then carry only their number of rows."""
    state, partitions = plan(
        native, {"end": "10", "batch_rows": "4", "num_partitions": "1"}, columns=pa.schema([])
    )
    batches = read_all(native, state, partitions)
    assert [(b.num_rows, b.num_columns) for b in batches] == [(4, 0), (4, 0), (2, 0)]


def test_the_path_option_is_accepted_and_ignored(native):
    """Spark passes `path` for load(path): a library that refuses unknown options accepts it."""
    state, partitions = plan(native, {"end": "3", "path": "/tmp/anywhere"})
    assert sum(b.num_rows for b in read_all(native, state, partitions)) == 3


def test_a_killed_task_stops_at_the_next_batch(native):
    state, partitions = plan(native, {"end": "100", "batch_rows": "10", "num_partitions": "1"})
    task = TaskContext()
    reader = native.read(task, state, partitions[0])
    reader.read_next_batch()

    task.interrupted = True

    with pytest.raises(Exception, match="interrupted"):
        reader.read_next_batch()
    reader.close()


def test_an_unknown_column_is_refused_with_its_name(native):
    with pytest.raises(NativeDataSourceError, match="c_range has no column `price`"):
        plan(native, {}, schema=pa.schema([pa.field("price", pa.float64())]))


def test_stream_offsets_advance_and_ranges_read_again_the_same_rows(native):
    with native.source({"rows_per_batch": "6"}) as (source, _):
        with (
            native.exported_schema(native.schema(source)) as struct,
            native.handle(
                "create_stream_reader", "close_stream_reader", source, ctypes.byref(struct)
            ) as reader,
        ):
            start = native.collect_one("initial_offset", reader)
            end = native.collect_one("latest_offset", reader, start, len(start))
            again = native.collect_one("latest_offset", reader, end, len(end))
            partitions = native.collect("stream_partitions", reader, end, 8, again, 8)
            state = native.collect_one("serialize_stream_reader", reader)
            native.call("commit_offset", reader, end, len(end))

    first = pa.Table.from_batches(read_all(native, state, partitions))
    second = pa.Table.from_batches(read_all(native, state, partitions))

    assert first.column("id").to_pylist() == list(range(6, 12))
    assert first.equals(second)


def test_the_bridge_ships_itself_as_a_zip_of_python_files(tmp_path):
    import zipfile

    from spark_native_bridge import ship_to_executors

    class Session:
        """Records what Spark Connect's addArtifacts receives (no SparkContext)."""

        added = []

        def addArtifacts(self, path, pyfile=False):
            self.added.append((path, pyfile))

    session = Session()
    archive = ship_to_executors(session)

    assert session.added == [(archive, True)]
    names = zipfile.ZipFile(archive).namelist()
    assert "spark_native_bridge/__init__.py" in names
    assert "spark_native_bridge/_native.py" in names
