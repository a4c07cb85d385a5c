#!/usr/bin/env python3
"""Draws the text_files chart of the performance chapter from the figures of
examples/text_files/bench/compare.py --json.

    book/tools/text_files_chart.py --svg OUT.svg --table OUT.md AFTER.json [--before BEFORE.json]

One group of bars per format, schema and query: how many times faster than Spark's reader
text_files is through the JVM plugin (and, with --before, was before the change that AFTER
measures), each ratio taken within its own run, since runs on a shared machine see other
loads. The table holds the same figures, for the book to include next to
the chart. Python's standard library only: the SVG is written by hand, as bench_chart.py writes
its own.
"""

import argparse
import json
from html import escape

BAR = 14
GAP = 3
GROUP_GAP = 16
LABEL_WIDTH = 190
PLOT_WIDTH = 420
VALUE_WIDTH = 130
COLOURS = {"spark": "#9bb7d4", "before": "#e0a458", "text_files": "#3b6ea5"}
NAMES = {"spark": "Spark's reader", "before": "text_files before", "text_files": "text_files"}
QUERIES = ["count", "sum", "noop"]


def seconds_by_cell(results):
    return {(c["format"], c["schema"], c["query"], c["reader"]): c["seconds"] for c in results["cells"]}


def speedups(results):
    """{(format, schema, query): Spark's seconds over text_files's}, within the one run."""
    seconds = seconds_by_cell(results)
    return {
        (f, m, q): seconds[(f, m, q, "spark")] / seconds[(f, m, q, "text_files")]
        for (f, m, q, r) in seconds
        if r == "spark"
    }


def cells(after):
    for fmt in sorted(after["tables"]):
        for mode in ["given", "inferred"]:
            for query in QUERIES:
                yield fmt, mode, query


def svg(after, before):
    now, then = speedups(after), speedups(before) if before else {}
    kinds = (["before"] if before else []) + ["text_files"]
    longest = max(list(now.values()) + list(then.values()) + [2.0])
    height = 70 + len(now) * (len(kinds) * (BAR + GAP) + GROUP_GAP) + 30
    width = LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH
    megabytes = max(t["bytes"] for t in after["tables"].values()) / 1e6
    scale = PLOT_WIDTH / longest
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="10" y="20" font-size="14" font-weight="bold">'
        f"{megabytes:.0f} MB tables: times faster than Spark's reader, in the same run</text>",
    ]
    x = 10
    for key in kinds:
        out.append(f'<rect x="{x}" y="32" width="12" height="12" fill="{COLOURS[key]}"/>')
        out.append(f'<text x="{x + 16}" y="42">{escape(NAMES[key])}</text>')
        x += 24 + 7 * len(NAMES[key])
    for mark in (1, 2):
        at = LABEL_WIDTH + mark * scale
        out.append(f'<line x1="{at:.1f}" y1="50" x2="{at:.1f}" y2="{height - 28}" stroke="#999" '
                   f'stroke-dasharray="3,3"/>')
        out.append(f'<text x="{at - 6:.1f}" y="58" fill="#555">{mark}x</text>')
    y = 66
    for cell in cells(after):
        out.append(f'<text x="10" y="{y + BAR}" font-weight="bold">{escape(", ".join(cell))}</text>')
        for key in kinds:
            value = (then if key == "before" else now)[cell]
            out.append(f'<rect x="{LABEL_WIDTH}" y="{y}" width="{max(1.0, value * scale):.1f}" '
                       f'height="{BAR}" fill="{COLOURS[key]}"/>')
            out.append(f'<text x="{LABEL_WIDTH + value * scale + 4:.1f}" y="{y + BAR - 3}">'
                       f"{value:.2f}x</text>")
            y += BAR + GAP
        y += GROUP_GAP
    versions = after["versions"]
    out.append(f'<text x="10" y="{height - 12}" fill="#555">{escape(after["machine"])}; Spark '
               f'{escape(versions["spark"])}; local[{after["cores"]}]; best of {after["repeat"]}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def table(after, before):
    """Each run's seconds and its own ratio: runs at other loads are not compared by time."""
    runs = ([("before", before)] if before else []) + [("after", after)]
    head = "| format | schema | query |"
    rule = "|---|---|---|"
    for name, _ in runs:
        head += f" {name}: Spark's reader | {name}: text_files | x |"
        rule += "---:|---:|---:|"
    head += " C interface, per split (after) | x |"
    rule += "---:|---:|"
    lines = [head, rule]
    native = {(c["format"], c["query"]): c["seconds"] for c in after["c_interface"]}
    for fmt, mode, query in cells(after):
        row = f"| {fmt} | {mode} | {query} |"
        for name, results in runs:
            seconds = seconds_by_cell(results)
            spark = seconds[(fmt, mode, query, "spark")]
            ours = seconds[(fmt, mode, query, "text_files")]
            x = f"**{spark / ours:.2f}**" if name == "after" else f"{spark / ours:.2f}"
            row += f" {spark:.2f} s | {ours:.2f} s | {x} |"
        if mode == "given":
            spark = seconds_by_cell(after)[(fmt, mode, query, "spark")]
            split = native[(fmt, query)] / after["cores"]
            row += f" {split:.2f} s | {spark / split:.2f} |"
        else:
            row += " | |"
        lines.append(row)
    loads = "; ".join(f"{name}: load average {r['load_average']}" for name, r in runs)
    lines.append("")
    lines.append(f"({loads}; one run each, best of {after['repeat']}.)")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--before", help="the figures before the change, for comparison")
    parser.add_argument("after")
    args = parser.parse_args()
    with open(args.after, encoding="utf-8") as f:
        after = json.load(f)
    before = None
    if args.before:
        with open(args.before, encoding="utf-8") as f:
            before = json.load(f)
    with open(args.svg, "w", encoding="utf-8") as f:
        f.write(svg(after, before))
    with open(args.table, "w", encoding="utf-8") as f:
        f.write(table(after, before))


if __name__ == "__main__":
    main()
