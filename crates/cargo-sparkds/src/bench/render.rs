//! The report of `cargo sparkds bench` as a table.

use super::measure::{BenchReport, Measure};

/// A number with an SI prefix and three significant digits: `12.3 k`, `45.6 M`.
pub fn si(value: f64) -> String {
    const PREFIXES: [&str; 5] = ["", " k", " M", " G", " T"];
    let mut value = value;
    let mut prefix = 0;
    while value.abs() >= 999.5 && prefix < PREFIXES.len() - 1 {
        value /= 1000.0;
        prefix += 1;
    }
    let digits = if value.abs() >= 99.95 {
        0
    } else if value.abs() >= 9.995 {
        1
    } else {
        2
    };
    format!("{value:.digits$}{}", PREFIXES[prefix])
}

/// Bytes in binary units: `512 B`, `1.50 MiB`, `12.3 GiB`.
pub fn bytes(value: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = value;
    let mut unit = 0;
    while value.abs() >= 1023.5 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        return format!("{value:.0} B");
    }
    let digits = if value.abs() >= 99.95 {
        0
    } else if value.abs() >= 9.995 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {}", UNITS[unit])
}

/// A duration in seconds with its share of a whole: `1.23 s (45%)`.
fn seconds(part: f64, whole: f64) -> String {
    let share = if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    };
    format!("{part:.3} s ({share:.0}%)")
}

/// The report as a table, one row per measure, then the cost of the checks.
pub fn render(report: &BenchReport) -> String {
    let mut text = render_heading(report);
    text.push('\n');
    text.push_str(&render_table(&report.measures));
    let costs = render_costs(report);
    if !costs.is_empty() {
        text.push('\n');
        text.push_str(&costs);
    }
    text
}

/// The library, the options, the columns, the repeat count and each filter's status.
fn render_heading(report: &BenchReport) -> String {
    let mut text = format!("sparkds bench {}\n", report.library);
    let options: Vec<String> = report
        .options
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    text.push_str(&format!(
        "options: {}; columns: {}; best of {}; one task at a time\n",
        if options.is_empty() {
            "none".to_string()
        } else {
            options.join(" ")
        },
        report
            .columns
            .as_ref()
            .map_or("all".to_string(), |c| c.join(",")),
        report.repeat
    ));
    for f in &report.filters {
        let status = match f.accepted {
            Some(true) => "accepted",
            Some(false) => "not accepted (its rows are measured unfiltered)",
            None => "not pushed (no filter pushdown)",
        };
        text.push_str(&format!("filter: {}: {status}\n", f.filter));
    }
    text
}

const TABLE_HEADER: [&str; 9] = [
    "protocol",
    "checks",
    "rows",
    "rows/s",
    "Arrow bytes/s",
    "batches/s",
    "in library",
    "in host",
    "peak RSS",
];

/// The table of measures: a header, then one row per measure, in aligned columns.
fn render_table(measures: &[Measure]) -> String {
    let rows: Vec<[String; 9]> = measures.iter().map(table_row).collect();
    let widths: Vec<usize> = (0..TABLE_HEADER.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([TABLE_HEADER[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = table_line(&TABLE_HEADER, &widths);
    for row in &rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        text.push_str(&table_line(&cells, &widths));
    }
    text
}

/// One measure's cells, in the order of [`TABLE_HEADER`].
fn table_row(m: &Measure) -> [String; 9] {
    [
        m.protocol.clone(),
        if m.in_process {
            "in-process"
        } else if m.checks {
            "on"
        } else {
            "off"
        }
        .to_string(),
        m.rows.to_string(),
        si(m.rows_per_second),
        format!("{}/s", bytes(m.arrow_bytes_per_second)),
        si(m.batches_per_second),
        seconds(m.library_seconds, m.seconds),
        seconds(m.host_seconds, m.seconds),
        m.peak_rss_bytes
            .map_or("n/a".to_string(), |b| format!("+{}", bytes(b as f64))),
    ]
}

/// One line of the table: the first two columns aligned left, the numbers right.
fn table_line(cells: &[&str], widths: &[usize]) -> String {
    let padded: Vec<String> = cells
        .iter()
        .zip(widths)
        .enumerate()
        .map(|(i, (cell, width))| {
            if i < 2 {
                format!("{cell:<width$}")
            } else {
                format!("{cell:>width$}")
            }
        })
        .collect();
    format!("{}\n", padded.join("  ").trim_end())
}

/// The cost of the C interface against the in-process reference, then of the checks.
fn render_costs(report: &BenchReport) -> String {
    let mut costs = String::new();
    for reference in report.measures.iter().filter(|m| m.in_process) {
        costs.push_str(&interface_cost(&report.measures, reference));
    }
    for on in report.measures.iter().filter(|m| m.checks) {
        costs.push_str(&checks_cost(&report.measures, on));
    }
    if !report.reference {
        costs.push_str(
            "no in-process reference: the library does not export spark_ds_bench_v1 (spark_datasource::export! adds it)\n",
        );
    }
    costs
}

/// The rate through the C interface against the in-process `reference`, without and with the
/// checks (empty without a measure to compare).
fn interface_cost(measures: &[Measure], reference: &Measure) -> String {
    let ratio = |checks: bool| {
        measures
            .iter()
            .find(|m| !m.in_process && m.checks == checks && m.protocol == reference.protocol)
            .filter(|_| reference.rows_per_second > 0.0)
            .map(|m| m.rows_per_second / reference.rows_per_second)
    };
    let with_checks = ratio(true).map_or(String::new(), |r| format!(", {r:.2}x with them"));
    match ratio(false) {
        Some(without) => format!(
            "{}: through the C interface at {without:.2}x the in-process rate ({} rows/s) without the checks{with_checks}\n",
            reference.protocol,
            si(reference.rows_per_second)
        ),
        None => String::new(),
    }
}

/// How much slower the measure `on` (with the checks) is than the same protocol without them
/// (empty without a measure to compare).
fn checks_cost(measures: &[Measure], on: &Measure) -> String {
    let off = measures
        .iter()
        .find(|m| !m.checks && !m.in_process && m.protocol == on.protocol);
    match off.filter(|off| off.seconds > 0.0) {
        Some(off) => format!(
            "{}: the checks make the read {:.2}x slower: {:.3} s in the host with them, {:.3} s without\n",
            on.protocol,
            on.seconds / off.seconds,
            on.host_seconds,
            off.host_seconds
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::measure::BenchFilter;
    use super::*;

    #[test]
    fn si_keeps_three_significant_digits() {
        assert_eq!(si(0.0), "0.00");
        assert_eq!(si(12.345), "12.3");
        assert_eq!(si(999.0), "999");
        assert_eq!(si(1_000.0), "1.00 k");
        assert_eq!(si(45_600_000.0), "45.6 M");
        assert_eq!(si(1.234e9), "1.23 G");
    }

    #[test]
    fn bytes_uses_binary_units() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(bytes(4.0 * 1024.0 * 1024.0), "4.00 MiB");
        assert_eq!(bytes(123.0 * 1024.0 * 1024.0 * 1024.0), "123 GiB");
    }

    #[test]
    fn the_table_has_a_row_per_measure_and_the_cost_of_the_checks() {
        // 1000 rows in 4 batches of 8000 bytes, 2 ms of it inside the library.
        let measure = |wall_ms: f64, checks, in_process, peak_rss_bytes| {
            let seconds = wall_ms / 1000.0;
            Measure {
                protocol: "batch-read".into(),
                checks,
                in_process,
                rows: 1000,
                batches: 4,
                arrow_bytes: 8000,
                seconds,
                library_seconds: 0.002,
                host_seconds: seconds - 0.002,
                rows_per_second: 1000.0 / seconds,
                arrow_bytes_per_second: 8000.0 / seconds,
                batches_per_second: 4.0 / seconds,
                peak_rss_bytes,
            }
        };
        let report = BenchReport {
            library: "libx.so".into(),
            options: vec![("end".into(), "1000".into())],
            columns: None,
            filters: vec![
                BenchFilter {
                    filter: "id > 3".into(),
                    accepted: Some(true),
                },
                BenchFilter {
                    filter: "name IS NULL".into(),
                    accepted: Some(false),
                },
            ],
            repeat: 1,
            reference: true,
            measures: vec![
                measure(10.0, true, false, Some(1024 * 1024)),
                measure(5.0, false, false, None),
                measure(4.0, false, true, None),
            ],
        };
        let text = render(&report);
        assert!(
            text.contains("options: end=1000; columns: all; best of 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "filter: id > 3: accepted\nfilter: name IS NULL: not accepted (its rows are measured unfiltered)\n\n"
            ),
            "{text}"
        );
        assert!(text.contains("batch-read  on"), "{text}");
        assert!(text.contains("100 k"), "{text}");
        assert!(text.contains("0.002 s (20%)"), "{text}");
        assert!(text.contains("+1.00 MiB"), "{text}");
        assert!(text.contains("n/a"), "{text}");
        assert!(
            text.contains("the checks make the read 2.00x slower"),
            "{text}"
        );
        assert!(text.contains("batch-read  in-process"), "{text}");
        assert!(
            text.contains("batch-read: through the C interface at 0.80x the in-process rate (250 k rows/s) without the checks, 0.40x with them"),
            "{text}"
        );
        assert!(!text.contains("no in-process reference"), "{text}");
        let without = render(&BenchReport {
            reference: false,
            measures: report.measures[..2].to_vec(),
            ..report
        });
        assert!(
            without
                .contains("no in-process reference: the library does not export spark_ds_bench_v1"),
            "{without}"
        );
    }
}
