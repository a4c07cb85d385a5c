"""The rest example on Spark 4.3: one local session with the JVM plugin's jar, the example's
library in the native library path (for the plugin) and registered through the bridge of
python/, and the issues API of tests/common/issues.rs, which tests/spark.rs serves and names in
SPARKDS_REST_URL."""

import json
import os
import shutil
import sys
import tempfile
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.dirname(os.path.dirname(HERE))
ROOT = os.path.dirname(os.path.dirname(EXAMPLE))
BRIDGE = os.path.join(ROOT, "python")

sys.path.insert(0, BRIDGE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, os.path.join(EXAMPLE, "bench"))
from library_fixtures import example_library, jar  # noqa: E402,F401 (pytest fixtures)
import spark_session  # noqa: E402

spark_session.python_workers_import(os.pathsep.join([BRIDGE, os.path.join(EXAMPLE, "bench")]))

# As tests/common/issues.rs.
TOKEN = "t0ken-of-the-tests"
RESOURCE = "/repos/sparkds/demo/issues"


class Api:
    """The issues API the harness serves."""

    def __init__(self, url):
        self.url = url

    def options(self, **more):
        return dict(url=self.url, resource=RESOURCE, token=TOKEN, **more)

    def requests(self):
        """How many requests of the issues the API has had."""
        with urllib.request.urlopen(f"{self.url}/_requests") as answer:
            return json.load(answer)["requests"]

    def issues(self):
        """Every issue, as the API gives them (the tests' oracle)."""
        issues, page = [], 1
        while True:
            request = urllib.request.Request(
                f"{self.url}{RESOURCE}?state=all&per_page=100&page={page}",
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            with urllib.request.urlopen(request) as answer:
                batch = json.load(answer)
            if not batch:
                return issues
            issues += batch
            page += 1


@pytest.fixture(scope="session")
def api():
    url = os.environ.get("SPARKDS_REST_URL")
    if not url:
        pytest.fail("SPARKDS_REST_URL must name the issues API (tests/spark.rs serves it)")
    return Api(url)


@pytest.fixture(scope="session")
def library() -> str:
    return example_library("SPARKDS_REST_LIBRARY", "rest_example", "rest")


@pytest.fixture(scope="session")
def spark(jar, library, tmp_path_factory):
    libraries = tempfile.mkdtemp(prefix="sparkds-rest-tests_lib_")
    shutil.copy(library, libraries)
    session = spark_session.builder(
        "sparkds-rest-tests",
        str(tmp_path_factory.mktemp("warehouse")),
        jars=[jar],
        library_path=libraries,
        conf={
            "spark.task.maxFailures": "1",
            "spark.python.worker.reuse": "true",
            "spark.sql.session.timeZone": "UTC",
        },
    )
    with spark_session.started(session) as started:
        yield started
    shutil.rmtree(libraries, ignore_errors=True)


@pytest.fixture(scope="session")
def bridge(spark, library) -> str:
    from spark_native_bridge import register

    return register(spark, library).name()


@pytest.fixture(scope="session")
def python_source(spark) -> str:
    from python_source import IssuesSource

    spark.dataSource.register(IssuesSource)
    return IssuesSource.name()
