#!/usr/bin/env python3
"""Draws the chart of the performance chapter from `cargo sparkds bench --json` reports.

    book/tools/bench_chart.py --svg OUT.svg --table OUT.md REPORT.json [REPORT.json ...]

Each report becomes a group of bars, one per measure (protocol, and how it ran: through the C
interface with the checks, without them, or in process), their length the rows per second on the
scale of the group's fastest measure: the chart compares the ways a read runs, not the reads. The table holds the same figures, for the book to include next to the chart.
Python's standard library only: the SVG is written by hand.
"""

import argparse
import json
import sys
from html import escape

BAR = 18
GAP = 6
GROUP_GAP = 26
LABEL_WIDTH = 300
PLOT_WIDTH = 440
VALUE_WIDTH = 120
COLOURS = {"on": "#9bb7d4", "off": "#3b6ea5", "in-process": "#e0a458"}


def mode(measure):
    """How a measure ran, as the text report of `cargo sparkds bench` names it."""
    if measure.get("in_process"):
        return "in-process"
    return "on" if measure["checks"] else "off"


def describe(mode_name):
    return {
        "on": "C interface, checks on",
        "off": "C interface, checks off",
        "in-process": "in process",
    }[mode_name]


def si(value):
    """A rate with an SI prefix and three significant digits, as the text report prints it."""
    for prefix in ["", " k", " M", " G", " T"]:
        if abs(value) < 999.5 or prefix == " T":
            digits = 0 if abs(value) >= 99.95 else 1 if abs(value) >= 9.995 else 2
            return f"{value:.{digits}f}{prefix}"
        value /= 1000.0
    raise AssertionError("unreachable")


def title(report):
    columns = report.get("columns")
    options = " ".join(f"{k}={v}" for k, v in report.get("options", []))
    return f"columns {','.join(columns) if columns else 'all'}; {options or 'no options'}"


def ratio(report, measure):
    """The rate of `measure` over its protocol's in-process rate, when there is one."""
    for other in report["measures"]:
        if other.get("in_process") and other["protocol"] == measure["protocol"]:
            if other["rows_per_second"] > 0:
                return measure["rows_per_second"] / other["rows_per_second"]
    return None


def svg(reports):
    rows = [(report, m) for report in reports for m in report["measures"]]
    if not rows:
        raise SystemExit("bench_chart.py: the reports hold no measure")
    height = 40 + len(reports) * (GROUP_GAP + 8) + len(rows) * (BAR + GAP) + 40
    width = LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="10" y="22" font-size="14" font-weight="bold">'
        "cargo sparkds bench: rows per second, one task at a time</text>",
    ]
    y = 40
    for report in reports:
        y += GROUP_GAP - 8
        out.append(f'<text x="10" y="{y}" font-weight="bold">{escape(title(report))}</text>')
        y += 8
        top = max(m["rows_per_second"] for m in report["measures"]) or 1.0
        for measure in report["measures"]:
            name = mode(measure)
            length = PLOT_WIDTH * measure["rows_per_second"] / top
            label = f"{measure['protocol']}, {describe(name)}"
            value = si(measure["rows_per_second"])
            share = ratio(report, measure)
            if share is not None and name != "in-process":
                value += f" ({share:.2f}x)"
            out.append(
                f'<text x="{LABEL_WIDTH - 8}" y="{y + BAR - 5}" text-anchor="end">'
                f"{escape(label)}</text>"
            )
            out.append(
                f'<rect x="{LABEL_WIDTH}" y="{y}" width="{length:.1f}" height="{BAR}" '
                f'fill="{COLOURS[name]}"/>'
            )
            out.append(
                f'<text x="{LABEL_WIDTH + length + 6:.1f}" y="{y + BAR - 5}">{escape(value)}</text>'
            )
            y += BAR + GAP
    y += 16
    out.append(
        f'<text x="10" y="{y}" fill="#555">(x): the rate over the same read in process, '
        f"without the C interface; each group on its own scale</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def table(reports):
    lines = [
        "| run | protocol | how | rows | rows/s | Arrow bytes/s | x in process | peak RSS |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for report in reports:
        for m in report["measures"]:
            share = ratio(report, m)
            rss = m.get("peak_rss_bytes")
            lines.append(
                f"| {title(report)} | {m['protocol']} | {describe(mode(m))} | {m['rows']} "
                f"| {si(m['rows_per_second'])} | {si(m['arrow_bytes_per_second'])}B "
                f"| {'' if share is None else f'{share:.2f}'} "
                f"| {'n/a' if rss is None else f'+{rss / 1048576:.1f} MiB'} |"
            )
    return "\n".join(lines) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", required=True, help="the SVG file to write")
    parser.add_argument("--table", help="the Markdown table to write")
    parser.add_argument("reports", nargs="+", help="JSON of `cargo sparkds bench --json`")
    args = parser.parse_args(argv)
    reports = []
    for path in args.reports:
        try:
            with open(path, encoding="utf-8") as f:
                report = json.load(f)
            report["measures"]  # noqa: B018 - a report without measures is refused here
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise SystemExit(
                f"bench_chart.py: {path} is not a report of `cargo sparkds bench --json`: {error}"
            )
        reports.append(report)
    with open(args.svg, "w", encoding="utf-8") as f:
        f.write(svg(reports))
    if args.table:
        with open(args.table, "w", encoding="utf-8") as f:
            f.write(table(reports))


if __name__ == "__main__":
    main(sys.argv[1:])
