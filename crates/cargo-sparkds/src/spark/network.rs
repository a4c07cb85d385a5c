//! Where the sessions of `cargo sparkds spark` listen, and whom they take. Every Spark process
//! that the command starts (the driver, the Connect server and, with `--cluster`, the Master,
//! its Workers and their executors) binds to the loopback address only, and takes only peers
//! that authenticate with a secret made for the run (`spark.authenticate`).
//!
//! Left to itself, Spark binds to the machine's network address (on a host whose name resolves
//! to 127.0.0.1 it looks for another interface), its Master's and Workers' web interfaces
//! listen on every interface, and a `local-cluster` Master registers any Worker and any
//! application that reaches it: a Worker of another user received one of the session's
//! executors, and with it the session's options. So:
//!
//! - SPARK_LOCAL_IP and SPARK_LOCAL_HOSTNAME are 127.0.0.1 in the environment of the processes
//!   that the command starts (Spark binds its RPC, its block manager and its web interfaces
//!   there, and a Worker's executors inherit them), and so are `spark.driver.bindAddress` and
//!   `spark.driver.host`, over what `spark-defaults.conf` says.
//! - The Master's and Workers' web interfaces cannot be turned off (Spark starts them with the
//!   Master and each Worker): they listen on 127.0.0.1, where every local user still reaches
//!   them, so they kill no application and decommission no Worker. The application's own web
//!   interface is off (`spark.ui.enabled=false`, set by each session).
//! - The secret reaches the driver (and the local cluster's Master and Workers, which run in
//!   it) in a properties file only this user reads, removed once Spark has read it, at exit and
//!   on signals; the Workers hand it to their executors in their environment, which only this
//!   user reads. It is on no command line.

use sparkds::{Error, Result};

/// The only address that the sessions listen on.
pub const LOOPBACK: &str = "127.0.0.1";

/// The environment of every Spark process that the command starts: the addresses that Spark
/// binds to when no configuration names one (a local cluster's Master, Workers and executors,
/// and the web interfaces of all of them).
pub fn environment() -> [(&'static str, &'static str); 2] {
    [
        ("SPARK_LOCAL_IP", LOOPBACK),
        ("SPARK_LOCAL_HOSTNAME", LOOPBACK),
    ]
}

/// The configuration of every session that holds no secret (spark-submit's command line may
/// show it): loopback addresses, authentication on, and web interfaces that stop nothing.
pub fn configuration() -> [(&'static str, &'static str); 5] {
    [
        ("spark.driver.bindAddress", LOOPBACK),
        ("spark.driver.host", LOOPBACK),
        ("spark.authenticate", "true"),
        // The Master's web interface would kill an application, or decommission Workers, for
        // any local user who asks it.
        ("spark.ui.killEnabled", "false"),
        ("spark.master.ui.decommission.allow.mode", "DENY"),
    ]
}

/// The secret of the session's authentication, for a properties file only this user reads.
pub fn secret_configuration(secret: &str) -> (String, String) {
    ("spark.authenticate.secret".to_string(), secret.to_string())
}

/// A secret for one run: 32 random bytes from the operating system, in hex. `what` names it in
/// the error.
pub fn random_secret(what: &str) -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        Error::usage(format!(
            "cannot make {what}: the operating system's random generator failed: {e}"
        ))
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `[::1]:PORT`, bound and not listening, for as long as it lives: a client of
/// `sc://localhost:PORT` may try `[::1]` before 127.0.0.1, and would give the token to whoever
/// listened there. Bound without SO_REUSEADDR or SO_REUSEPORT, no other socket can bind it, and
/// a client's connection is refused at once and goes on to 127.0.0.1.
pub struct Ipv6LoopbackHold {
    #[cfg(unix)]
    _socket: std::os::fd::OwnedFd,
}

/// Holds `[::1]:port`; `None` on a machine without IPv6, where no client reaches `[::1]`.
///
/// # Errors
///
/// When another process holds `[::1]:port` (or listens on every IPv6 address of the port), or
/// the socket cannot be made.
#[cfg(unix)]
pub fn hold_ipv6_loopback(port: u16) -> Result<Option<Ipv6LoopbackHold>> {
    use std::os::fd::{FromRawFd, OwnedFd};
    let taken = |e: std::io::Error| {
        Error::usage(format!(
            "port {port} of [::1] is taken by another process ({e}): a client of \
             sc://localhost:{port} may try [::1] first and would hand it the server's token; \
             pass another port with --connect PORT"
        ))
    };
    // SAFETY: socket takes plain integers; a descriptor it returns is owned by `socket` alone.
    let raw = unsafe { libc::socket(libc::AF_INET6, libc::SOCK_STREAM, 0) };
    if raw < 0 {
        let error = std::io::Error::last_os_error();
        return match error.raw_os_error() {
            Some(libc::EAFNOSUPPORT) => Ok(None),
            _ => Err(Error::io("cannot make a socket for [::1]", error)),
        };
    }
    // SAFETY: `raw` is a new descriptor that nothing else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(raw) };
    // Not inherited by Spark's processes, which would keep the port after the command ends.
    // SAFETY: fcntl on a descriptor that `socket` owns, with plain integers.
    if unsafe { libc::fcntl(raw, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
        let error = std::io::Error::last_os_error();
        return Err(Error::io("cannot make a socket for [::1]", error));
    }
    // SAFETY: an all-zero sockaddr_in6 is valid; its fields are then set.
    let mut address: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
    address.sin6_family = libc::AF_INET6 as libc::sa_family_t;
    address.sin6_port = port.to_be();
    address.sin6_addr.s6_addr = std::net::Ipv6Addr::LOCALHOST.octets();
    #[cfg(any(target_os = "macos", target_os = "freebsd", target_os = "openbsd"))]
    {
        address.sin6_len = std::mem::size_of::<libc::sockaddr_in6>() as u8;
    }
    // SAFETY: `address` is a sockaddr_in6 of the length given, alive for the call.
    let bound = unsafe {
        libc::bind(
            raw,
            std::ptr::addr_of!(address).cast::<libc::sockaddr>(),
            std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
        )
    };
    if bound == 0 {
        return Ok(Some(Ipv6LoopbackHold { _socket: socket }));
    }
    let error = std::io::Error::last_os_error();
    match error.raw_os_error() {
        // No ::1 on this machine: no client connects there either.
        Some(libc::EADDRNOTAVAIL) => Ok(None),
        Some(libc::EADDRINUSE) => Err(taken(error)),
        _ => Err(Error::io(format!("cannot bind [::1]:{port}"), error)),
    }
}

/// Off Unix the command's Spark sessions do not run (`spark.rs` runs Spark's shell scripts):
/// there is nothing to hold.
#[cfg(not(unix))]
pub fn hold_ipv6_loopback(_port: u16) -> Result<Option<Ipv6LoopbackHold>> {
    Ok(None)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_64_hex_digits_and_new_each_time() {
        let one = random_secret("a secret").expect("a secret");
        let two = random_secret("a secret").expect("a secret");
        assert_eq!(one.len(), 64);
        assert!(one.chars().all(|c| c.is_ascii_hexdigit()), "{one}");
        assert_ne!(one, two);
    }

    #[test]
    fn a_held_ipv6_loopback_port_cannot_be_bound_by_another_socket_even_sharing() {
        let Ok(probe) = std::net::TcpListener::bind("[::1]:0") else {
            return; // no IPv6 loopback on this machine
        };
        let port = probe.local_addr().expect("its address").port();
        drop(probe);
        let hold = hold_ipv6_loopback(port).expect("the port is free");
        assert!(hold.is_some());
        // std binds with SO_REUSEADDR, as another user's server may.
        assert!(std::net::TcpListener::bind(("::1", port)).is_err());
        assert!(std::net::TcpListener::bind(("::", port)).is_err());
        // A connection is refused at once: a client goes on to 127.0.0.1.
        let refused = std::net::TcpStream::connect(("::1", port)).map_err(|e| e.kind());
        assert_eq!(refused.err(), Some(std::io::ErrorKind::ConnectionRefused));
        drop(hold);
        assert!(std::net::TcpListener::bind(("::1", port)).is_ok());
    }

    #[test]
    fn a_port_another_socket_listens_on_is_refused_naming_the_fix() {
        let Ok(other) = std::net::TcpListener::bind("[::1]:0") else {
            return; // no IPv6 loopback on this machine
        };
        let port = other.local_addr().expect("its address").port();
        let error = hold_ipv6_loopback(port).err().map(|e| e.to_string());
        let error = error.unwrap_or_default();
        assert!(
            error.contains(&format!("port {port} of [::1] is taken by another process"))
                && error.ends_with("pass another port with --connect PORT"),
            "{error}"
        );
    }
}
