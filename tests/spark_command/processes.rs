//! A session of `cargo sparkds spark` seen from outside, as another user of the machine sees it:
//! its processes (the process group the test starts it in, executors included), the TCP sockets
//! they listen on, their command lines and environments, and the Spark Master's web interface;
//! and the process groups the tests start, stopped when dropped.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// A process group that the test started (with `process_group(0)`): SIGTERM to all of it when
/// dropped, so that a failed assertion leaves no Spark behind.
pub struct Group(pub u32);

impl Drop for Group {
    fn drop(&mut self) {
        stop_group(self.0);
    }
}

/// SIGTERM to the process group `group`.
pub fn stop_group(group: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", "--", &format!("-{group}")])
        .status();
}

/// Every process of the machine: its id, its parent's and its process group.
fn all() -> Vec<(u32, u32, u32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (name) state ppid pgrp ...`: the name may hold spaces and parentheses.
        let fields: Vec<u32> = stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.split_whitespace()
                    .skip(1)
                    .take(2)
                    .filter_map(|f| f.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        if let [parent, group] = fields[..] {
            found.push((pid, parent, group));
        }
    }
    found
}

/// The processes of the process group `group`.
pub fn in_group(group: u32) -> Vec<u32> {
    all()
        .into_iter()
        .filter(|(_, _, g)| *g == group)
        .map(|(pid, _, _)| pid)
        .collect()
}

/// The processes of the process group `group` and every process they started, at any depth:
/// PySpark's worker daemons, for one, make process groups of their own.
pub fn of_group(group: u32) -> Vec<u32> {
    let processes = all();
    let mut found = in_group(group);
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for (pid, _, _) in processes.iter().filter(|(_, p, _)| *p == parent) {
            if !found.contains(pid) {
                found.push(*pid);
            }
        }
        i += 1;
    }
    found
}

/// A TCP socket in the listening state.
#[derive(Debug, Clone)]
pub struct Listening {
    pub address: IpAddr,
    pub port: u16,
    /// The process's id and the start of its command line, to say which process it is.
    pub process: String,
}

/// The TCP sockets that `pids` listen on, from `/proc/net/tcp{,6}` and their descriptors.
pub fn listening(pids: &[u32]) -> Vec<Listening> {
    let sockets = listening_sockets();
    let mut found = Vec::new();
    for &pid in pids {
        for inode in socket_inodes(pid) {
            for (address, port, _) in sockets.iter().filter(|(_, _, i)| *i == inode) {
                let command: String = command_line(pid).chars().take(120).collect();
                found.push(Listening {
                    address: *address,
                    port: *port,
                    process: format!("{pid}: {command}"),
                });
            }
        }
    }
    found
}

/// Whether `address` is of the loopback interface: 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped
/// into IPv6 (how a JVM's socket bound to 127.0.0.1 shows). The unspecified address (every
/// interface) is not.
pub fn is_loopback(address: &IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Every listening TCP socket of the network namespace: its address, port and inode.
fn listening_sockets() -> Vec<(IpAddr, u16, u64)> {
    let mut sockets = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(&"0A"), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let Some((host, port)) = local.rsplit_once(':') else {
                continue;
            };
            if let (Some(address), Ok(port), Ok(inode)) = (
                kernel_address(host),
                u16::from_str_radix(port, 16),
                inode.parse(),
            ) {
                sockets.push((address, port, inode));
            }
        }
    }
    sockets
}

/// An address as `/proc/net/tcp{,6}` prints it: each 32-bit word in the machine's byte order.
fn kernel_address(hex: &str) -> Option<IpAddr> {
    let mut bytes = Vec::with_capacity(16);
    for word in hex.as_bytes().chunks(8) {
        let word = u32::from_str_radix(std::str::from_utf8(word).ok()?, 16).ok()?;
        bytes.extend_from_slice(&word.to_ne_bytes());
    }
    match bytes.len() {
        4 => Some(IpAddr::V4(Ipv4Addr::new(
            bytes[0], bytes[1], bytes[2], bytes[3],
        ))),
        16 => Some(IpAddr::V6(Ipv6Addr::from(
            <[u8; 16]>::try_from(bytes).ok()?,
        ))),
        _ => None,
    }
}

/// The inodes of the sockets that `pid` holds open.
fn socket_inodes(pid: u32) -> Vec<u64> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"));
    fds.into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| {
            let target = std::fs::read_link(fd.path()).ok()?;
            target
                .to_string_lossy()
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// The command line of `pid`, its arguments joined by spaces.
pub fn command_line(pid: u32) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&bytes).replace('\0', " ")
}

/// The value of the variable `name` in the environment of `pid`.
pub fn environment_variable(pid: u32, name: &str) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    bytes
        .split(|b| *b == 0)
        .map(String::from_utf8_lossy)
        .find_map(|entry| entry.strip_prefix(&prefix).map(str::to_string))
}

/// The processes of the machine whose command line holds `needle`: any user reads them (`ps`).
pub fn command_lines_holding(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

/// An HTTP/1.0 request to 127.0.0.1:`port`: the status and the body of the answer, or `None`
/// when the port does not answer in HTTP within a few seconds.
pub fn http(port: u16, method: &str, path: &str) -> Option<(u16, String)> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(3))).ok()?;
    let request = format!("{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    let status = answer
        .strip_prefix("HTTP/1.")?
        .get(2..5)?
        .parse::<u16>()
        .ok()?;
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    Some((status, body.to_string()))
}

/// The Spark Master of a `local-cluster`, as its web interface shows it (`/json/`).
#[derive(Debug)]
pub struct Master {
    /// The port of its web interface.
    pub ui_port: u16,
    /// Its URL, `spark://host:port`, where Workers and applications register.
    pub url: String,
    /// The workers that registered: their id and state.
    pub workers: Vec<(String, String)>,
    /// The applications that run: their id and name.
    pub applications: Vec<(String, String)>,
}

/// The Master whose web interface is one of `ports`, asked on each at once.
pub fn master(ports: &[u16]) -> Option<Master> {
    let asked: Vec<_> = ports
        .iter()
        .map(|&port| std::thread::spawn(move || master_at(port)))
        .collect();
    asked
        .into_iter()
        .filter_map(|thread| thread.join().ok().flatten())
        .next()
}

/// The Master whose web interface listens on `port`, if it does.
pub fn master_at(port: u16) -> Option<Master> {
    let (200, body) = http(port, "GET", "/json/")? else {
        return None;
    };
    let json: serde_json::Value = serde_json::from_str(&body).ok()?;
    let url = json.get("url")?.as_str()?.to_string();
    let pairs = |key: &str, first: &str, second: &str| -> Vec<(String, String)> {
        let field = |item: &serde_json::Value, name: &str| {
            item.get(name)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        json.get(key)
            .and_then(|v| v.as_array())
            .map(|items| {
                items
                    .iter()
                    .map(|item| (field(item, first), field(item, second)))
                    .collect()
            })
            .unwrap_or_default()
    };
    url.starts_with("spark://").then(|| Master {
        ui_port: port,
        url: url.clone(),
        workers: pairs("workers", "id", "state"),
        applications: pairs("activeapps", "id", "name"),
    })
}
