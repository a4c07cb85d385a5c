//! The measures' own tests: /proc/self/status, the names of the protocols, the sample batches.

use super::measure::BenchProtocol;
use super::rss::status_bytes;
use super::run::sample_batches;

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

#[test]
fn sample_batches_give_the_rows_asked_for_the_last_batch_sliced() {
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "id",
        arrow_schema::DataType::Int64,
        false,
    )]));
    let sample = sparkds::sample::rows(&schema, 0, 4).expect("sample rows");
    let sizes: Vec<usize> = sample_batches(&sample, 10).map(|b| b.num_rows()).collect();
    assert_eq!(sizes, [4, 4, 2]);
    assert_eq!(sample_batches(&sample, 0).count(), 0);
}
