"""The sample API of a project generated with `-d kind=http_api`, served for the tutorial.

`python3 sample_api.py OPTIONS_FILE` serves, on a free port of 127.0.0.1, the items 1 to 25 as
`src/connector/sample_api.rs` reads them: `GET /items?per_page=&page=`, each page
`{"items": [...]}`, an empty page after the last, `status=` and `since_id=` as filters, signed
in with a bearer token. Once it listens it writes the options of a read, `url=` and `token=`, into
OPTIONS_FILE (readable by you only), and prints each request on standard error; it serves until
it is stopped. The same API as the project's tests script in `tests/library/sample_api`.
"""

import http.server
import json
import os
import secrets
import sys
from urllib.parse import parse_qs, urlparse

ITEMS = 25
TOKEN = secrets.token_hex(16)


def item(n):
    return {
        "id": n,
        "name": f"item {n}",
        "status": "closed" if n % 3 == 0 else "open",
        "score": None if n % 4 == 0 else n / 2,
    }


class Api(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.answer(401, {"message": "Bad credentials"})
        if url.path != "/items":
            return self.answer(404, {"message": "Not Found"})
        try:
            per_page = min(int(query.get("per_page", 30)), 100)
            page = max(int(query.get("page", 1)), 1)
            since_id = int(query.get("since_id", 0))
        except ValueError:
            return self.answer(400, {"message": "Not a number"})
        items = [item(n) for n in range(since_id + 1, ITEMS + 1)]
        items = [i for i in items if query.get("status") in (None, i["status"])]
        self.answer(200, {"items": items[(page - 1) * per_page : page * per_page]})

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        # The request line and the status: the headers, which hold the token, are not shown.
        print("sample API: " + format % args, file=sys.stderr)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
    options = sys.argv[1]
    # Written whole, then renamed: a reader of OPTIONS_FILE never sees half of it.
    descriptor = os.open(options + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(f"url=http://127.0.0.1:{server.server_address[1]}\ntoken={TOKEN}\n")
    os.replace(options + ".new", options)
    server.serve_forever()


if __name__ == "__main__":
    main()
