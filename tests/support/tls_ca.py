"""A certificate authority made for a test with `openssl`, as the postgres example's TLS tests
make theirs (examples/postgres/tests/library/tls.rs): an EC P-256 key, a CA certificate valid two
days, and a server certificate it signs for the names a client checks (`sslmode=verify-full`
compares the host of the URL with them)."""

import os
import subprocess
from typing import Dict, List

EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _openssl(directory: str, args: List[str]) -> None:
    done = subprocess.run(["openssl", *args], cwd=directory, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed:\n{done.stderr}")


def make(directory: str, names: List[str], subject: str = "/CN=sparkds test CA") -> Dict[str, str]:
    """In `directory`: `ca.pem` (with `ca.key`), and `server.crt` with `server.key`, signed by
    it for the DNS names `names`. Returns the paths by those names."""
    os.makedirs(directory, exist_ok=True)
    _openssl(directory, ["req", "-x509", "-days", "2", "-subj", subject, *EC,
                         "-keyout", "ca.key", "-out", "ca.pem"])
    _openssl(directory, ["req", "-subj", f"/CN={names[0]}", "-keyout", "server.key", *EC,
                         "-out", "server.csr"])
    with open(os.path.join(directory, "server.ext"), "w") as f:
        f.write("subjectAltName=" + ",".join(f"DNS:{name}" for name in names) + "\n")
    _openssl(directory, ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                         "-CAcreateserial", "-days", "2", "-extfile", "server.ext",
                         "-out", "server.crt"])
    return {name: os.path.join(directory, name)
            for name in ("ca.pem", "ca.key", "server.crt", "server.key")}
