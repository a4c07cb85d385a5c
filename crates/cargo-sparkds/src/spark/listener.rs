//! Who listens on a TCP port of 127.0.0.1: the Connect server that the command started, or
//! another process. Another user may listen on the port first; a client that took it for the
//! server would hand it the token, so readiness is the child's own listening socket, never a
//! connection that succeeds. A listener on `[::1]` of the port is another process's whoever it
//! is: the server listens on 127.0.0.1 only, and a client of `localhost` may try `[::1]` first.

/// Who listens on a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// Nobody yet.
    Nobody,
    /// The child (or a process it started), and nobody else.
    Child,
    /// Another process, which would get the connections meant for the child.
    Other,
}

/// Who listens on `port` of 127.0.0.1 (or of every address, which includes it) or of `[::1]`,
/// given the child's process id.
#[cfg(target_os = "linux")]
pub fn listener(port: u16, child: u32) -> Listener {
    let (inodes, on_ipv6_loopback) = listening_inodes(port);
    if on_ipv6_loopback {
        return Listener::Other;
    }
    if inodes.is_empty() {
        return Listener::Nobody;
    }
    let own = socket_inodes(&family(child));
    if inodes.iter().all(|inode| own.contains(inode)) {
        Listener::Child
    } else {
        Listener::Other
    }
}

/// The inodes of the sockets that listen on `port` of 127.0.0.1, 0.0.0.0 or `[::]`, from
/// `/proc/net/tcp` and `/proc/net/tcp6`, and whether a socket listens on `[::1]` of the port.
#[cfg(target_os = "linux")]
fn listening_inodes(port: u16) -> (Vec<u64>, bool) {
    // The address as the kernel prints it: the bytes of the address in the machine's order.
    let loopback = kernel_hex(&[127, 0, 0, 1]);
    // A JVM listens on IPv6 sockets: 127.0.0.1 shows as the IPv4-mapped ::ffff:127.0.0.1.
    let mapped = kernel_hex(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1]);
    let hosts = [
        loopback.as_str(),
        mapped.as_str(),
        "00000000",
        "00000000000000000000000000000000",
    ];
    let ipv6_loopback = kernel_hex(&std::net::Ipv6Addr::LOCALHOST.octets());
    let mut on_ipv6_loopback = false;
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let listening = *state == "0A";
            let Some((host, p)) = local.rsplit_once(':') else {
                continue;
            };
            if !listening || u16::from_str_radix(p, 16) != Ok(port) {
                continue;
            }
            on_ipv6_loopback |= host == ipv6_loopback;
            if let (true, Ok(inode)) = (hosts.contains(&host), inode.parse()) {
                inodes.push(inode);
            }
        }
    }
    (inodes, on_ipv6_loopback)
}

/// An address as `/proc/net/tcp{,6}` prints it: each 32-bit word in the machine's byte order.
#[cfg(target_os = "linux")]
fn kernel_hex(address: &[u8]) -> String {
    address
        .chunks_exact(4)
        .map(|word| {
            format!(
                "{:08X}",
                u32::from_ne_bytes([word[0], word[1], word[2], word[3]])
            )
        })
        .collect()
}

/// `pid` and the processes it started, at any depth, from the parent of each in `/proc`.
#[cfg(target_os = "linux")]
fn family(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(process) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (name) state ppid ...`: the name may hold spaces and parentheses.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(parent) = parent {
            parents.push((process, parent));
        }
    }
    let mut family = vec![pid];
    let mut i = 0;
    while i < family.len() {
        let parent = family[i];
        family.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(child, _)| *child),
        );
        i += 1;
    }
    family
}

/// The inodes of the sockets that `processes` hold open.
#[cfg(target_os = "linux")]
fn socket_inodes(processes: &[u32]) -> Vec<u64> {
    let mut inodes = Vec::new();
    for pid in processes {
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"));
        for fd in fds.into_iter().flatten().flatten() {
            let target = std::fs::read_link(fd.path()).unwrap_or_default();
            let target = target.to_string_lossy();
            if let Some(inode) = target
                .strip_prefix("socket:[")
                .and_then(|rest| rest.strip_suffix(']'))
                .and_then(|n| n.parse().ok())
            {
                inodes.push(inode);
            }
        }
    }
    inodes
}

/// Who listens on `port`, from `lsof` (macOS has no `/proc`): the child itself, since Spark's
/// launcher scripts `exec` the JVM in its place.
#[cfg(not(target_os = "linux"))]
pub fn listener(port: u16, child: u32) -> Listener {
    let output = std::process::Command::new("lsof")
        .args(["-nP", &format!("-iTCP:{port}"), "-sTCP:LISTEN", "-Fpn"])
        .output();
    let text = output
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let pids: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix('p')).collect();
    if text.lines().any(|l| l.starts_with("n[::1]:")) {
        Listener::Other
    } else if pids.is_empty() {
        Listener::Nobody
    } else if pids.iter().all(|p| *p == child.to_string()) {
        Listener::Child
    } else {
        Listener::Other
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_listener_of_another_process_is_not_taken_for_the_child() {
        let listening = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listening.local_addr().expect("its address").port();
        // This process listens; `sleep` is the child that a server would be.
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        assert_eq!(listener(port, sleeper.id()), Listener::Other);
        assert_eq!(listener(port, std::process::id()), Listener::Child);
        drop(listening);
        assert_eq!(listener(port, std::process::id()), Listener::Nobody);
        let _ = sleeper.kill();
        let _ = sleeper.wait();
    }

    #[test]
    fn a_listener_on_the_ipv4_mapped_loopback_of_an_ipv6_socket_is_seen() {
        // As a JVM listens on 127.0.0.1: an IPv6 socket bound to ::ffff:127.0.0.1.
        let Ok(listening) = std::net::TcpListener::bind("[::ffff:127.0.0.1]:0") else {
            return; // no IPv6 on this machine
        };
        let port = listening.local_addr().expect("its address").port();
        assert_eq!(listener(port, std::process::id()), Listener::Child);
    }

    #[test]
    fn a_listener_on_the_ipv6_loopback_is_another_process_even_the_childs() {
        let Ok(listening) = std::net::TcpListener::bind("[::1]:0") else {
            return; // no IPv6 on this machine
        };
        let port = listening.local_addr().expect("its address").port();
        // The server listens on 127.0.0.1 only: [::1] is never its.
        assert_eq!(listener(port, std::process::id()), Listener::Other);
    }

    #[test]
    fn a_listener_of_a_grandchild_is_the_childs() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        // sh starts python3, which listens: the child's family holds the socket.
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "python3 -c 'import socket, time; s = socket.socket(); \
                 s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); \
                 s.bind((\"127.0.0.1\", {port})); s.listen(); time.sleep(30)'; true"
            ))
            .spawn()
            .expect("sh runs");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let mut seen = listener(port, child.id());
        while seen == Listener::Nobody && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
            seen = listener(port, child.id());
        }
        let _ = std::process::Command::new("pkill")
            .args(["-P", &child.id().to_string()])
            .status();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen, Listener::Child);
    }
}
