"""The same issues API as a PySpark Python data source, as one writes it without this kit: the
comparison of the benchmark (bench.py) and of the Spark tests. Pages are read with a persistent
HTTP connection per partition (http.client), a partition k of n reading pages k, k+n, ...; a 429
or 5xx answer is tried again after its Retry-After. PySpark 4.3 pushes no limit and no column to
a Python data source, so every query reads every page."""

import http.client
import json
import time
import urllib.parse
from datetime import datetime

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

SCHEMA = (
    "id bigint, number int, title string, state string, created_at timestamp, "
    "updated_at timestamp, comments int, user struct<login: string>, "
    "labels array<struct<name: string>>"
)


class IssuesReader(DataSourceReader):
    def __init__(self, options):
        self.url = options["url"]
        self.resource = options["resource"]
        self.token = options.get("token")
        self.partitions_count = int(options.get("partitions", 4))

    def partitions(self):
        return [InputPartition(k) for k in range(1, self.partitions_count + 1)]

    def read(self, partition):
        target = urllib.parse.urlsplit(self.url)
        connection_of = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
        connection = connection_of(target.netloc, timeout=30)
        headers = {"Accept": "application/vnd.github+json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        page = partition.value
        try:
            while True:
                query = urllib.parse.urlencode({"state": "all", "per_page": 100, "page": page})
                issues = self._get(connection, f"{target.path}{self.resource}?{query}", headers)
                if not issues:
                    return
                for issue in issues:
                    yield (
                        issue["id"],
                        issue["number"],
                        issue.get("title"),
                        issue.get("state"),
                        datetime.fromisoformat(issue["created_at"]),
                        datetime.fromisoformat(issue["updated_at"]),
                        issue.get("comments"),
                        (issue["user"]["login"],) if issue.get("user") else None,
                        [(label["name"],) for label in issue.get("labels") or []],
                    )
                page += self.partitions_count
        finally:
            connection.close()

    @staticmethod
    def _get(connection, path, headers):
        for attempt in range(8):
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read()
            if response.status == 200:
                return json.loads(body)
            if response.status in (429, 500, 502, 503, 504):
                time.sleep(float(response.getheader("Retry-After") or 0.25 * 2**attempt))
                continue
            raise RuntimeError(f"GET {path.split('?')[0]} answered {response.status}")
        raise RuntimeError(f"GET {path.split('?')[0]} failed 8 times")


class IssuesSource(DataSource):
    @classmethod
    def name(cls):
        return "issues_py"

    def schema(self):
        return SCHEMA

    def reader(self, schema):
        return IssuesReader(self.options)
