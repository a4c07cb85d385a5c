//! The bench engine's own tests: /proc/self/status, and the names of the protocols.

use super::{status_bytes, BenchProtocol};

#[test]
fn status_bytes_reads_a_field_of_proc_status_in_bytes() {
    let status = "Name:\tcargo-sparkds\nVmPeak:\t  200000 kB\nVmHWM:\t    4096 kB\nVmRSS:\t    2048 kB\nThreads:\t1\n";
    assert_eq!(status_bytes(status, "VmHWM"), Some(4096 * 1024));
    assert_eq!(status_bytes(status, "VmRSS"), Some(2048 * 1024));
    assert_eq!(status_bytes(status, "Threads"), Some(1));
    assert_eq!(status_bytes(status, "VmSwap"), None);
    assert_eq!(status_bytes("VmHWM:\t lots kB\n", "VmHWM"), None);
    assert_eq!(status_bytes("VmHWM:\t 12 MB\n", "VmHWM"), None);
}

#[test]
fn protocols_are_named_as_the_command_line_names_them() {
    for protocol in BenchProtocol::ALL {
        assert_eq!(
            protocol.name().parse::<BenchProtocol>().ok(),
            Some(protocol)
        );
    }
    assert_eq!(
        "batch"
            .parse::<BenchProtocol>()
            .err()
            .map(|e| e.to_string()),
        Some(
            "unknown protocol `batch`: use batch-read, micro-batch-read or batch-write".to_string()
        )
    );
}
