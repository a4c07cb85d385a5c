"""One local Spark session for the JVM plugin's suite, and the libraries it loads.

The session is a plain JVM Spark (pyspark 4.3 only starts it): the plugin's jar in spark.jars,
the libraries' directories in spark.driver.extraLibraryPath, which Spark's launcher puts in the
driver's LD_LIBRARY_PATH, and so in java.library.path. A scratch directory, also in the library
path, lets tests install libraries while the session runs; another is the session's
spark.sql.dataSource.native.paths. Python only drives the tests: no batch crosses it.
"""

import os
import shutil
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from template_projects import generate_and_build  # noqa: E402
import spark_session  # noqa: E402
# The fixtures of the libraries and the jar, shared with the other Spark suites.
from library_fixtures import (  # noqa: E402,F401
    jar,
    c_range_library,
    writer_library,
    filters_library,
)

# The plugin needs no bridge on the workers' path; they only run this interpreter.
spark_session.python_workers_import(None)


def pytest_configure(config):
    # `-m core`: the tests of the JVM plugin that tests/lines runs on every Spark line.
    config.addinivalue_line("markers", "core: runs on every Spark line (tests/lines)")


TYPES_NAME = "jvm_types"


@pytest.fixture(scope="session")
def types_library() -> str:
    """The fixture of every type: generated from the template with its connector replaced by
    fixtures/types/mod.rs, as tests/jvm/main.rs does."""
    if os.environ.get("SPARKDS_JVM_TYPES_LIBRARY"):
        return os.environ["SPARKDS_JVM_TYPES_LIBRARY"]
    return generate_and_build(
        TYPES_NAME,
        ["capabilities=batch_read,batch_write,truncate", "pushdowns=prune_columns"],
        connector=os.path.join(ROOT, "tests", "jvm", "fixtures", "types", "mod.rs"),
    )


@pytest.fixture(scope="session")
def dirs():
    """Directories the session searches that tests fill while it runs: `scratch`, in the
    native library path, and `packages`, the session's spark.sql.dataSource.native.paths."""
    base = tempfile.mkdtemp(prefix="sparkds_jvm_dirs_")
    made = {name: os.path.join(base, name) for name in ("scratch", "packages")}
    for path in made.values():
        os.makedirs(path)
    yield made
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def spark(
    jar, c_range_library, writer_library, types_library, filters_library, dirs, tmp_path_factory
):
    library_path = os.pathsep.join(
        [
            os.path.dirname(c_range_library),
            os.path.dirname(writer_library),
            os.path.dirname(types_library),
            os.path.dirname(filters_library),
            dirs["scratch"],
        ]
    )
    # ANCHOR: session
    session = spark_session.builder(
        "sparkds-jvm-plugin-tests",
        str(tmp_path_factory.mktemp("warehouse")),
        jars=[jar],
        # Installed libraries: the native library path of the driver and the executors.
        library_path=library_path,
        conf={
            # Packages configured for the application.
            "spark.sql.dataSource.native.paths": dirs["packages"],
            "spark.task.maxFailures": "1",
        },
    )
    # ANCHOR_END: session
    with spark_session.started(session) as started:
        yield started
