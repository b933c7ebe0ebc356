#!/usr/bin/env python3
"""Draws `rk bench seed-table --json` output as an SVG chart.

    rk bench seed-table --backend cuda --json > seed.json
    scripts/seed_table_chart.py seed.json -o seed.svg

One row per measurement: the persistent and the traditional median as bars
on a log scale, p99 as a whisker, and the spec's published reference figures as
diamonds where the spec gives them. Standard library only.
"""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

COLOURS = {"persistent": "#e8893a", "traditional": "#3a7be8", "spec": "#444444"}
ROW_H, BAR_H, LEFT, RIGHT, TOP = 54, 16, 250, 40, 96


def fmt_us(us):
    if us >= 1e6:
        return "%.2f s" % (us / 1e6)
    if us >= 1e3:
        return "%.2f ms" % (us / 1e3)
    if us >= 1:
        return "%.2f us" % us
    return "%.0f ns" % (us * 1e3)


def finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v) and v > 0


def load(path):
    with (sys.stdin if path == "-" else open(path)) as f:
        data = json.load(f)
    if data.get("tool") != "rk bench seed-table" or "rows" not in data:
        raise SystemExit("%s: not the output of rk bench seed-table --json" % path)
    return data


def chart(data, width):
    rows = data["rows"]
    values = []
    for r in rows:
        for side in ("persistent", "traditional"):
            values += [r[side].get("median_us"), r[side].get("p99_us")]
        values += [r.get("spec_persistent_us"), r.get("spec_traditional_us")]
    values = [v for v in values if finite(v)]
    lo = 10 ** math.floor(math.log10(min(values))) if values else 0.01
    hi = 10 ** math.ceil(math.log10(max(values))) if values else 1e6
    plot_w = width - LEFT - RIGHT

    def x(us):
        return LEFT + plot_w * (math.log10(us) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    cpf = data.get("commands_per_frame", {})
    height = TOP + ROW_H * len(rows) + 110
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (width, height), '<rect width="100%" height="100%" fill="white"/>']
    title = "Persistent vs traditional: %s (%s), %dx%d grid" % (
        data.get("device"), data.get("backend"), data["grid"]["nx"], data["grid"]["ny"])
    out.append('<text x="%d" y="26" font-size="16" font-weight="bold">%s</text>' % (LEFT // 4, escape(title)))
    sub = "driver %s - %s - commit %s - median bars, p99 whiskers, log scale (lower is faster)" % (
        data.get("driver"), data.get("date"), data.get("commit"))
    out.append('<text x="%d" y="46" fill="#555">%s</text>' % (LEFT // 4, escape(sub)))
    # legend
    lx = LEFT
    for name, label in (("persistent", "persistent"), ("traditional", "traditional"), ("spec", "reference (published, not measured here)")):
        if name == "spec":
            out.append('<path d="M%d %d l6 6 l-6 6 l-6 -6 z" fill="%s"/>' % (lx + 6, 58, COLOURS[name]))
        else:
            out.append('<rect x="%d" y="60" width="12" height="12" fill="%s"/>' % (lx, COLOURS[name]))
        out.append('<text x="%d" y="70">%s</text>' % (lx + 18, label))
        lx += 150
    # grid lines per decade
    decade = lo
    while decade <= hi * 1.0001:
        gx = x(decade)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (gx, TOP - 8, gx, TOP + ROW_H * len(rows)))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#777">%s</text>'
                   % (gx, TOP + ROW_H * len(rows) + 16, fmt_us(decade)))
        decade *= 10
    for i, r in enumerate(rows):
        y0 = TOP + i * ROW_H
        name = r["name"]
        if r["key"] == "batch":
            name = "%s steps in one batch" % data.get("batch_steps")
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (LEFT - 10, y0 + BAR_H + 4, escape(name)))
        for j, side in enumerate(("persistent", "traditional")):
            s = r[side]
            by = y0 + j * (BAR_H + 2)
            med, p99 = s.get("median_us"), s.get("p99_us")
            if not finite(med):
                continue
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                       % (LEFT, by, max(1.0, x(med) - LEFT), BAR_H, COLOURS[side]))
            if finite(p99) and p99 > med:
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#222"/>'
                           % (x(med), by + BAR_H // 2, x(p99), by + BAR_H // 2))
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#222"/>'
                           % (x(p99), by + 3, x(p99), by + BAR_H - 3))
            out.append('<text x="%.1f" y="%d" font-size="11">%s</text>'
                       % (min(x(max(med, p99 if finite(p99) else med)) + 5, width - RIGHT - 60), by + BAR_H - 4,
                          fmt_us(med)))
            spec = r.get("spec_%s_us" % side)
            if finite(spec):
                out.append('<path d="M%.1f %d l5 5 l-5 5 l-5 -5 z" fill="%s"/>'
                           % (x(spec), by + BAR_H // 2 - 5, COLOURS["spec"]))
    # commands per frame
    fy = TOP + ROW_H * len(rows) + 48
    p, t = cpf.get("persistent"), cpf.get("traditional")
    if finite(p) and finite(t):
        text = ("Commands per 60 FPS frame (mixed ops, each waited): persistent %.0f, traditional %.0f "
                "- persistent %.1fx (spec: 2.7x)" % (p, t, p / t))
        out.append('<text x="%d" y="%d" font-size="13">%s</text>' % (LEFT // 4, fy, escape(text)))
    agree = data.get("agreement", {})
    if agree:
        text = "Same commands to both patterns: %d query answers compared, %d differ" % (
            agree.get("queries_compared", 0), agree.get("queries_differing", 0))
        out.append('<text x="%d" y="%d" fill="#555">%s</text>' % (LEFT // 4, fy + 20, escape(text)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="rk bench seed-table --json output ('-' for stdin)")
    ap.add_argument("-o", "--output", help="SVG file to write (default: stdout)")
    ap.add_argument("--width", type=int, default=960)
    args = ap.parse_args()
    svg = chart(load(args.json), args.width)
    if args.output:
        with open(args.output, "w") as f:
            f.write(svg)
    else:
        sys.stdout.write(svg)


if __name__ == "__main__":
    main()
