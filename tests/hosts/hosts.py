"""Hosts on one machine: each a network namespace with an address of a private subnet chosen for
the run, a hostname of its own (a UTS namespace), and a file system of its own (a mount
namespace), joined by veth pairs to a switch, a bridge in a namespace of its own, so that the
machine's own namespace carries none of their traffic and sends none to them.

A host's file system is the machine's, with an empty tmpfs over `/tmp`, the checkout, the run's
directory (every host's files), and the user's caches (`~/.cache`, `~/.ivy2`, `~/.m2`, where Ivy
and pip would find what another host fetched): only its own directory of the run is there again,
at the same path and at `/srv` (a path that is the same on every host), and its `/etc/hosts` is
the run's, which names every host. The namespaces are
kept in files of the run (as `ip netns` keeps a network namespace), so that every process of a
host (`Host.start`, `Host.run`) enters the same ones, as processes of one machine do.

Everything is named after the run (`sdhosts-<id>-...`, `sparkds-hosts-<id>`; see RUN_ID):
`sweep()` removes what a run that was killed left, and `Network.down()` what this run made.
"""

import fcntl
import ipaddress
import json
import os
import pwd
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from typing import Dict, List, Optional

NETNS_PREFIX = "sdhosts-"
DIR_PREFIX = "sparkds-hosts-"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SNIFF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sniff.py")

# A host's namespaces are made by this script, which `unshare` runs in them: the hostname, the
# run's /etc/hosts, and what the host must not see covered by empty tmpfs, after the paths it
# keeps (its directory, read-write; files, read-only) are set aside on a tmpfs over /srv, and
# before they are moved back to their paths. Then the host's directory is also its /srv, the path
# that is the same on every host (where the host keeps the CA that clients of the database
# check its certificate with).
SETUP = r"""
set -eu
name=$1 hosts=$2 dir=$3 kept=$4; shift 4
[ -d /srv ] || { echo "/srv is missing: the hosts need it (an empty directory) as their own" >&2; exit 1; }
hostname "$name"
mount --bind "$hosts" /etc/hosts
mount -t tmpfs -o mode=0755 sparkds-hold /srv
n=0
for spec in "rw:$dir" $kept; do
  path=${spec#*:}
  if [ -d "$path" ]; then mkdir "/srv/$n"; else touch "/srv/$n"; fi
  mount --bind "$path" "/srv/$n"
  case $spec in ro:*) mount -o remount,bind,ro "/srv/$n" ;; esac
  n=$((n + 1))
done
for hidden in "$@"; do
  mount -t tmpfs -o mode=1777 sparkds-hidden "$hidden"
done
n=0
for spec in "rw:$dir" $kept; do
  path=${spec#*:}
  if [ -d "/srv/$n" ]; then
    mkdir -p "$path"
  else
    mkdir -p "$(dirname "$path")"
    [ -e "$path" ] || touch "$path"
  fi
  mount --move "/srv/$n" "$path"
  n=$((n + 1))
done
umount /srv
mount --bind "$dir" /srv
"""


def _run(argv, what: str, **kwargs) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(argv)}):\n{done.stdout}{done.stderr}")
    return done.stdout


def refused() -> Optional[str]:
    """Why this machine cannot make hosts (not root, no `ip`, `unshare` or `nsenter`, a network
    namespace refused), or None."""
    if os.geteuid() != 0:
        return "the hosts need root (network namespaces, veth pairs, mounts); run as root, as CI does"
    for tool in ("ip", "unshare", "nsenter", "mount"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (iproute2, util-linux)"
    probe = f"{NETNS_PREFIX}probe{os.getpid()}"
    tried = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if tried.returncode != 0:
        return f"`ip netns add` is refused here: {tried.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    tried = subprocess.run(
        ["unshare", "--mount", "--uts", "--propagation", "private", "true"],
        capture_output=True,
        text=True,
    )
    if tried.returncode != 0:
        return f"`unshare --mount --uts` is refused here: {tried.stderr.strip()}"
    return None


# A run is known by its id, `<seconds since the epoch, hex><2 random hex digits>`: its switch
# `sdhosts-<id>-switch`, its hosts `sdhosts-<id>-<host>`, its directory `sparkds-hosts-<id>`. The
# run's process holds a lock (flock) on its switch's namespace file while it lives: other runs,
# in this process namespace or another one that shares /run/netns, find it held.
RUN_ID = re.compile(r"sdhosts-([0-9a-f]+)-")
# A run younger than this may not hold its lock yet (it takes it right after making its switch).
GRACE_SECONDS = 60


def _age(run_id: str) -> float:
    return time.time() - int(run_id[:-2], 16)


def _stale(run_id: str) -> bool:
    """Whether run `run_id` is over: old enough, and its switch's lock free (or no switch)."""
    if _age(run_id) < GRACE_SECONDS:
        return False
    try:
        fd = os.open(f"/run/netns/{NETNS_PREFIX}{run_id}-switch", os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def sweep() -> List[str]:
    """Removes what runs that are over (killed before they cleaned up) left: the processes of
    their hosts, their namespaces, mounts and directories; returns what it removed."""
    netns = sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else []
    parent = tempfile.gettempdir()
    directories = [d for d in os.listdir(parent) if d.startswith(DIR_PREFIX)]
    ids = {m.group(1) for m in map(RUN_ID.match, netns) if m}
    ids |= {d[len(DIR_PREFIX):] for d in directories if re.fullmatch(r"[0-9a-f]+", d[len(DIR_PREFIX):])}
    removed = []
    for run_id in sorted(i for i in ids if _stale(i)):
        ours = [n for n in netns if n.startswith(f"{NETNS_PREFIX}{run_id}-")]
        for name in ours:
            _kill_netns(name)
        for mount in reversed(_mounts(f"{DIR_PREFIX}{run_id}")):
            subprocess.run(["umount", "-l", mount], capture_output=True)
        for name in ours:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        shutil.rmtree(os.path.join(parent, f"{DIR_PREFIX}{run_id}"), ignore_errors=True)
        removed.append(f"run {run_id}: {len(ours)} network namespaces and its directory")
    return removed


def _mounts(run_dir_name: str) -> List[str]:
    """The mount points of this namespace in a run's directory, in the order of mounting."""
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    return [p for p in points if f"/{run_dir_name}/" in p or p.endswith(f"/{run_dir_name}")]


def _kill_netns(netns: str, grace: float = 0) -> None:
    """Ends every process in `netns`: SIGTERM, and after `grace` seconds SIGKILL."""
    def pids():
        out = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    for signum, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        if signum == signal.SIGTERM and not grace:
            continue
        for pid in pids():
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while pids() and time.monotonic() < deadline:
            time.sleep(0.1)


def hidden_paths(run_dir: str) -> List[str]:
    """What no host sees: the system's and the run's temporary directories, the checkout, the
    run's directory, and the caches of this user (Java's `user.home` is the user's, whatever
    HOME says), those that exist, outermost first."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    candidates = ["/tmp", tempfile.gettempdir(), ROOT, run_dir]
    candidates += [os.path.join(home, d) for d in (".cache", ".ivy2", ".ivy2.5.2", ".m2")]
    chosen = []
    for path in sorted({os.path.realpath(p) for p in candidates}, key=len):
        if os.path.isdir(path) and not any(path.startswith(c.rstrip("/") + "/") for c in chosen):
            chosen.append(path)
    return chosen


class Host:
    """One host: its network namespace, address and hostname, and its directory of the run
    (`dir`), the only directory of the run it sees."""

    def __init__(self, network: "Network", name: str, address: str):
        self.network = network
        self.name = name
        self.address = address
        self.netns = f"{network.prefix}{name}"
        self.dir = os.path.join(network.run_dir, "hosts", name)
        self.mnt = os.path.join(network.ns_dir, f"{name}.mnt")
        self.uts = os.path.join(network.ns_dir, f"{name}.uts")
        self.processes: List[Dict] = []

    def enter(self) -> List[str]:
        """The command line prefix that runs a program on this host, in its directory."""
        return [
            "nsenter",
            f"--net=/run/netns/{self.netns}",
            f"--mount={self.mnt}",
            f"--uts={self.uts}",
            f"--wd={self.dir}",
            "--",
        ]

    def path(self, *parts: str) -> str:
        return os.path.join(self.dir, *parts)

    def start(self, label: str, argv: List[str], env: Dict[str, str]) -> subprocess.Popen:
        """Starts `argv` on this host, its output in `logs/<label>.log`, in a session of its own."""
        log_path = self.path("logs", f"{label}.log")
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                self.enter() + argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        self.processes.append({"label": label, "pid": process.pid, "process": process, "log": log_path})
        return process

    def run(self, argv: List[str], env: Optional[Dict[str, str]] = None, timeout: float = 120):
        """Runs `argv` on this host to its end; returns the finished process (output as text)."""
        return subprocess.run(
            self.enter() + argv, capture_output=True, text=True, env=env, timeout=timeout
        )

    def log(self, label: str) -> str:
        try:
            with open(self.path("logs", f"{label}.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def pids(self) -> List[int]:
        out = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def kill_all(self) -> None:
        """SIGKILL to every process of the host, as when it loses its power."""
        _kill_netns(self.netns)

    def listening(self) -> List[str]:
        """The local addresses of the TCP sockets that listen on this host (`ss -ltn`), as
        `address:port` (an IPv4 address that Java's IPv6 socket gives as `[::ffff:a.b.c.d]`, as
        the IPv4 address)."""
        out = _run(["ip", "netns", "exec", self.netns, "ss", "-Hltn"], f"ss on {self.name}")
        listening = []
        for line in out.splitlines():
            if line.strip():
                address, port = line.split()[3].rsplit(":", 1)
                address = address.strip("[]").removeprefix("::ffff:")
                listening.append(f"{address}:{port}")
        return listening

    def _make(self, hosts_file: str, hidden: List[str], kept: List[str]) -> None:
        os.makedirs(self.dir, mode=0o755)
        _run(["ip", "netns", "add", self.netns], f"the network namespace of {self.name}")
        for path in (self.mnt, self.uts):
            open(path, "w").close()
        _run(
            # nsenter, not `ip netns exec`, which would unshare a mount namespace of its own, in
            # which unshare would keep the new namespace, gone when it exits.
            ["nsenter", f"--net=/run/netns/{self.netns}", "unshare", f"--mount={self.mnt}",
             f"--uts={self.uts}", "--propagation", "private", "--", "sh", "-c", SETUP, "setup",
             self.name, hosts_file, self.dir, " ".join(kept), *hidden],
            f"the namespaces of {self.name}",
        )


class Network:
    """The switch and the hosts of one run."""

    def __init__(self, names: List[str]):
        self.id = f"{int(time.time()):x}{random.randrange(256):02x}"
        self.prefix = f"{NETNS_PREFIX}{self.id}-"
        self.switch = f"{self.prefix}switch"
        # The switch first, locked while this process lives (see RUN_ID), then the directory.
        _run(["ip", "netns", "add", self.switch], "the switch's network namespace")
        self._lock = os.open(f"/run/netns/{self.switch}", os.O_RDONLY)
        fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.run_dir = os.path.join(tempfile.gettempdir(), f"{DIR_PREFIX}{self.id}")
        os.makedirs(self.run_dir, mode=0o755)
        self.ns_dir = os.path.join(self.run_dir, "ns")
        self.subnet = choose_subnet()
        addresses = list(self.subnet.hosts())
        # .1 stays free: a gateway's address, which no host has (there is no way out).
        self.hosts = {name: Host(self, name, str(addresses[i + 1])) for i, name in enumerate(names)}

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def up(self, kept: List[str]) -> None:
        """Makes the switch, the hosts and their namespaces; `kept` are `ro:<path>` files that
        every host sees at their path (a class archive of the JVM's)."""
        os.makedirs(self.ns_dir)
        # A private mount, as /run/netns is: a namespace kept in a file of a shared mount would
        # be seen by the namespace itself.
        _run(["mount", "--bind", self.ns_dir, self.ns_dir], "the run's namespace directory")
        _run(["mount", "--make-private", self.ns_dir], "the run's namespace directory")
        hosts_file = os.path.join(self.run_dir, "etc-hosts")
        with open(hosts_file, "w") as f:
            f.write("127.0.0.1\tlocalhost\n")
            for host in self.hosts.values():
                f.write(f"{host.address}\t{host.name}\n")
        os.chmod(hosts_file, 0o644)
        sw = ["ip", "-n", self.switch]
        _run(sw + ["link", "add", "switch", "type", "bridge"], "the bridge")
        _run(sw + ["link", "set", "switch", "up"], "the bridge")
        hidden = hidden_paths(self.run_dir)
        spaced = [p for p in hidden + kept + [self.run_dir] if any(c.isspace() for c in p)]
        if spaced:
            raise RuntimeError(f"the hosts take no path with a space: {spaced}; set TMPDIR")
        for host in self.hosts.values():
            host._make(hosts_file, hidden, kept)
            self._cable(host)

    def _cable(self, host: Host) -> None:
        """A veth pair from the switch to the host: `eth0` there, the host's name on the switch."""
        sw = ["ip", "-n", self.switch]
        _run(sw + ["link", "add", "name", host.name, "type", "veth", "peer", "name", "eth0",
                   "netns", host.netns], f"the cable of {host.name}")
        _run(sw + ["link", "set", "dev", host.name, "master", "switch", "up"], f"the port of {host.name}")
        inside = ["ip", "-n", host.netns]
        _run(inside + ["addr", "add", f"{host.address}/{self.subnet.prefixlen}", "dev", "eth0"],
             f"the address of {host.name}")
        _run(inside + ["link", "set", "eth0", "up"], f"eth0 of {host.name}")
        _run(inside + ["link", "set", "lo", "up"], f"lo of {host.name}")

    def cut(self, name: str) -> None:
        """Unplugs a host: its port on the switch goes down."""
        _run(["ip", "-n", self.switch, "link", "set", "dev", name, "down"], f"cutting {name} off")

    def plug(self, name: str) -> None:
        _run(["ip", "-n", self.switch, "link", "set", "dev", name, "up"], f"plugging {name} in")

    @contextmanager
    def sniffing(self, port: str, marker: str):
        """Counts the frames through the switch's port `port` (a host's cable) while the block
        runs, and those that hold `marker` in clear (sniff.py); the dict it yields is filled
        when the block ends."""
        process = subprocess.Popen(
            ["ip", "netns", "exec", self.switch, sys.executable, SNIFF, port, marker],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        counted: Dict = {}
        try:
            assert process.stdout.readline().strip() == "ready", "sniff.py did not start"
            yield counted
        finally:
            process.stdin.close()
            out = process.stdout.read()
            process.wait(timeout=60)
            counted.update(json.loads(out.strip().splitlines()[-1]))

    def down(self) -> None:
        """Ends every process of every host, and removes the namespaces, mounts and files."""
        for host in self.hosts.values():
            _kill_netns(host.netns, grace=3)
        for host in self.hosts.values():
            for path in (host.mnt, host.uts):
                subprocess.run(["umount", path], capture_output=True)
            subprocess.run(["ip", "netns", "del", host.netns], capture_output=True)
        subprocess.run(["umount", self.ns_dir], capture_output=True)
        shutil.rmtree(self.run_dir, ignore_errors=True)
        os.close(self._lock)
        subprocess.run(["ip", "netns", "del", self.switch], capture_output=True)


def choose_subnet() -> ipaddress.IPv4Network:
    """A /24 of 10.0.0.0/8 that no address or route of this machine's namespace overlaps (the
    hosts are apart from it anyway: this keeps a reader of `ip` output from confusing them)."""
    used = []
    for what in (["ip", "-4", "-o", "addr"], ["ip", "-4", "route"]):
        for token in _run(what, "ip").split():
            try:
                used.append(ipaddress.ip_network(token, strict=False))
            except ValueError:
                pass
    rng = random.Random()
    for _ in range(1000):
        subnet = ipaddress.ip_network(f"10.{rng.randrange(100, 255)}.{rng.randrange(0, 256)}.0/24")
        if not any(subnet.overlaps(u) for u in used if u.prefixlen > 0):
            return subnet
    raise RuntimeError("no free /24 in 10.100.0.0/16 to 10.254.0.0/16: remove unused routes")
