"""A stand-in for a PostgreSQL server, for the tests where what matters is what reaches a host:
it listens on a free port of 127.0.0.1, answers an `SSLRequest` with "no TLS", reads the startup
message, asks for the password in clear text, records each connection (its user, its database
and the password it sent, if any), then refuses the login with a message of its own."""

import socket
import struct
import threading

# The code of an `SSLRequest`, in place of a protocol version.
SSL_REQUEST = 80877103
# What the stand-in answers a login with.
REFUSAL = "this is a stand-in for a PostgreSQL server"


def _read(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


class FakePostgres:
    """`connections` holds a dict per connection: `user`, `database`, and `password` (None
    when none was sent)."""

    def __init__(self):
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self.port = self._listener.getsockname()[1]
        self.connections = []
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def url(self, database="shop"):
        return f"postgresql://127.0.0.1:{self.port}/{database}"

    def passwords(self):
        """The passwords that connections sent, in order."""
        with self._lock:
            return [c["password"] for c in self.connections if c["password"] is not None]

    def close(self):
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()

    def _serve(self):
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection):
        with connection:
            connection.settimeout(30)
            try:
                self._login(connection)
            except (OSError, ConnectionError, ValueError, struct.error):
                pass

    def _login(self, connection):
        length, code = struct.unpack("!ii", _read(connection, 8))
        if code == SSL_REQUEST:
            connection.sendall(b"N")
            length, code = struct.unpack("!ii", _read(connection, 8))
        fields = _read(connection, length - 8).split(b"\0")
        parameters = dict(zip(fields[::2], fields[1::2]))
        record = {
            "user": parameters.get(b"user", b"").decode(),
            "database": parameters.get(b"database", b"").decode(),
            "password": None,
        }
        with self._lock:
            self.connections.append(record)
        # AuthenticationCleartextPassword.
        connection.sendall(b"R" + struct.pack("!ii", 8, 3))
        kind = _read(connection, 1)
        (length,) = struct.unpack("!i", _read(connection, 4))
        body = _read(connection, length - 4)
        if kind == b"p":
            with self._lock:
                record["password"] = body.rstrip(b"\0").decode()
        error = b"SFATAL\0C28P01\0M" + REFUSAL.encode() + b"\0\0"
        connection.sendall(b"E" + struct.pack("!i", len(error) + 4) + error)
