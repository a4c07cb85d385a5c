#!/usr/bin/env python3
"""Draws the text_files chart of the performance chapter from the figures of
examples/text_files/bench/compare.py --json.

    book/tools/text_files_chart.py --svg OUT.svg --table OUT.md AFTER.json [--before BEFORE.json]

One group of bars per format, schema and query: the seconds of Spark's reader, of text_files
through the JVM plugin (and, with --before, of the plugin before the change that AFTER
measures), on the scale of the group's slowest bar, each labelled with its seconds and its
speed-up over Spark's reader. The table holds the same figures, for the book to include next to
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


def groups(after, before):
    now = seconds_by_cell(after)
    then = seconds_by_cell(before) if before else {}
    for fmt in sorted(after["tables"]):
        for mode in ["given", "inferred"]:
            for query in QUERIES:
                spark = now[(fmt, mode, query, "spark")]
                bars = [("spark", spark)]
                if then:
                    bars.append(("before", then[(fmt, mode, query, "text_files")]))
                bars.append(("text_files", now[(fmt, mode, query, "text_files")]))
                yield f"{fmt}, schema {mode}, {query}", spark, bars


def svg(after, before):
    data = list(groups(after, before))
    per_group = len(data[0][2])
    height = 70 + len(data) * (per_group * (BAR + GAP) + GROUP_GAP) + 30
    width = LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="10" y="20" font-size="14" font-weight="bold">'
        "flights repeated to 300 MB: seconds a query (shorter is faster)</text>",
    ]
    x = 10
    for key in [k for k in COLOURS if k != "before" or before]:
        out.append(f'<rect x="{x}" y="32" width="12" height="12" fill="{COLOURS[key]}"/>')
        out.append(f'<text x="{x + 16}" y="42">{escape(NAMES[key])}</text>')
        x += 24 + 7 * len(NAMES[key])
    y = 62
    for label, spark, bars in data:
        longest = max(s for _, s in bars) or 1.0
        out.append(f'<text x="10" y="{y + BAR}" font-weight="bold">{escape(label)}</text>')
        for key, seconds in bars:
            length = max(1.0, PLOT_WIDTH * seconds / longest)
            out.append(f'<rect x="{LABEL_WIDTH}" y="{y}" width="{length:.1f}" height="{BAR}" '
                       f'fill="{COLOURS[key]}"/>')
            text = f"{seconds:.2f} s" + ("" if key == "spark" else f" ({spark / seconds:.1f}x)")
            out.append(f'<text x="{LABEL_WIDTH + length + 4:.1f}" y="{y + BAR - 3}">{text}</text>')
            y += BAR + GAP
        y += GROUP_GAP
    versions = after["versions"]
    out.append(f'<text x="10" y="{height - 12}" fill="#555">{escape(after["machine"])}; Spark '
               f'{escape(versions["spark"])}; local[{after["cores"]}]; best of {after["repeat"]}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def table(after, before):
    now = seconds_by_cell(after)
    then = seconds_by_cell(before) if before else {}
    native = {(c["format"], c["query"]): c["seconds"] for c in after["c_interface"]}
    head = "| format | schema | query | Spark's reader |"
    rule = "|---|---|---|---:|"
    if before:
        head += " text_files before | x |"
        rule += "---:|---:|"
    head += " text_files | x | C interface, per split | x |"
    rule += "---:|---:|---:|---:|"
    lines = [head, rule]
    for fmt in sorted(after["tables"]):
        for mode in ["given", "inferred"]:
            for query in QUERIES:
                spark = now[(fmt, mode, query, "spark")]
                row = f"| {fmt} | {mode} | {query} | {spark:.2f} s |"
                if before:
                    old = then[(fmt, mode, query, "text_files")]
                    row += f" {old:.2f} s | {spark / old:.2f} |"
                ours = now[(fmt, mode, query, "text_files")]
                row += f" {ours:.2f} s | **{spark / ours:.2f}** |"
                if mode == "given":
                    split = native[(fmt, query)] / after["cores"]
                    row += f" {split:.2f} s | {spark / split:.2f} |"
                else:
                    row += " | |"
                lines.append(row)
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
