#!/usr/bin/env python3
"""Turns the raw data bench/gpu_checks.sh collected on a GPU machine into the tables of docs/benchmarks.md. Runs
anywhere (stdlib only); the truth each figure is checked against is something saturate did not produce: the
script's own step lines (`step N t=<time.monotonic()> samples=S`), nvidia-smi's own power.draw log on the same clock,
nvidia-smi's own query output.

    python3 bench/gpu_report.py OUTDIR
"""

import csv
import json
import os
import re
import statistics
import sys

STEP_LINE = re.compile(r"step (\d+) t=(\S+) samples=(\d+)")


def own_points(path):
    """The script's own (time, samples) points from a log, in order."""
    points = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = STEP_LINE.search(line)
                if m:
                    points.append((float(m.group(2)), int(m.group(3))))
    except OSError:
        pass
    return points


def own_rate(points, t_from, t_to):
    """Samples/s between the script's last line at or before t_from and its last line at or before t_to."""
    before = [p for p in points if p[0] <= t_from] or points[:1]
    inside = [p for p in points if p[0] <= t_to]
    if not before or not inside or inside[-1][0] <= before[-1][0]:
        return None
    (t0, s0), (t1, s1) = before[-1], inside[-1]
    return (s1 - s0) / (t1 - t0)


def power_log(path):
    """nvidia-smi's (monotonic time, power W, util %, memory MiB, SM MHz) rows."""
    rows = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                parts = [p.strip() for p in line.split(",")]
                try:
                    rows.append(tuple(float(p) for p in parts[:5]))
                except ValueError:
                    continue
    except OSError:
        pass
    return rows


def mean_power(rows, t_from, t_to):
    inside = [r for r in rows if t_from <= r[0] <= t_to]
    if len(inside) < 2:
        return None, 0
    return statistics.fmean(r[1] for r in inside), len(inside)


def fmt(v, spec="{:.1f}"):
    return "n/a" if v is None else spec.format(v)


def probe_section(out, name):
    path = os.path.join(out, name, "probe.json")
    try:
        j = json.load(open(path))
    except (OSError, ValueError) as e:
        print(f"### {name}: no probe.json ({e})\n")
        return
    print(f"### {name}: {' '.join(j['command'][1:])}")
    print()
    print("| stage | samples/s (probe) | ±95% | script's own count, same window | ratio | steady s | MFU | precision |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for stage_name in ("loader", "compute", "full"):
        s = j["stages"][stage_name]
        rate = s.get("samples_per_s")
        own = None
        if rate is not None and stage_name != "loader":
            own = own_rate(own_points(os.path.join(out, name, stage_name, "stdout.log")), s["steady_from_t"],
                           s["steady_to_t"])
        fr = s.get("flops_rate") or {}
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            stage_name, fmt(rate), fmt(s.get("rel_half_width") and 100 * s["rel_half_width"], "{:.1f}%"),
            fmt(own), fmt(own and rate and rate / own, "{:.3f}"), fmt(s.get("steady_s")),
            fmt(fr.get("mfu") and 100 * fr["mfu"], "{:.1f}%"), fr.get("precision") or "n/a"))
    print()
    rows = power_log(os.path.join(out, name + ".power.csv"))
    print("| stage | saturate: J/sample | W | method | nvidia-smi power.draw over the same window: W (samples) | "
          "J/sample from it | ratio |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: |")
    for stage_name in ("compute", "full"):
        s = j["stages"][stage_name]
        e = s.get("energy") or {}
        rate = s.get("samples_per_s")
        w, n = (None, 0) if rate is None else mean_power(rows, s["steady_from_t"], s["steady_to_t"])
        jps = w / rate if w and rate else None
        print("| %s | %s | %s | %s | %s (%d) | %s | %s |" % (
            stage_name, fmt(e.get("joules_per_sample"), "{:.4f}"), fmt(e.get("watts")), e.get("method") or "n/a",
            fmt(w), n, fmt(jps, "{:.4f}"),
            fmt(jps and e.get("joules_per_sample") and e["joules_per_sample"] / jps, "{:.3f}")))
    print()
    v = j.get("verdict") or {}
    print("verdict:", v.get("bottleneck"), "-", v.get("cause"), "|", v.get("evidence"), "| next:", v.get("next"))
    for note in v.get("notes") or []:
        print("  note:", note)
    t = (j.get("trace") or {}).get("summary") or {}
    if t:
        print("trace:", json.dumps({k: t[k] for k in t if k.endswith("share")}))
    print()


def side_by_side(out):
    def read(path):
        try:
            rows = list(csv.reader(open(path, errors="replace"), skipinitialspace=True))
        except OSError:
            return [], []
        return (rows[0], rows[1:]) if rows else ([], [])

    h1, r1 = read(os.path.join(out, "side_saturate.csv"))
    h2, r2 = read(os.path.join(out, "side_nvidia_smi.csv"))
    print("### saturate monitor beside nvidia-smi (same fields, same 12 s, 1 s samples)")
    print()
    print("header identical:", h1 == h2)
    if h1 != h2:
        print("  saturate:  ", h1)
        print("  nvidia-smi:", h2)
    print()
    print("| field | saturate (first / median / last) | nvidia-smi (first / median / last) |")
    print("| --- | --- | --- |")
    for i, field in enumerate(h2):
        a = [r[i] for r in r1 if len(r) > i]
        b = [r[i] for r in r2 if len(r) > i]

        def summary(vals):
            if not vals:
                return "n/a"
            nums = []
            for v in vals:
                try:
                    nums.append(float(v.split()[0]))
                except (ValueError, IndexError):
                    pass
            mid = statistics.median(nums) if len(nums) == len(vals) else vals[len(vals) // 2]
            return f"{vals[0]} / {mid} / {vals[-1]}"

        print(f"| {field} | {summary(a)} | {summary(b)} |")
    print()


def tune_section(out):
    try:
        j = json.load(open(os.path.join(out, "tune", "results.json")))
    except (OSError, ValueError) as e:
        print(f"### tune: no results.json ({e})\n")
        return
    print("### tune:", " ".join(j["command"]))
    print()
    print("budget %s s, took %.0f s, stop: %s" % (j["budget_s"], j["wall_s"], j.get("stop_reason")))
    print("baseline:", j["throughput"]["baseline"], "recommended:", j["throughput"]["recommended"])
    print("recommended values:", j["recommended"])
    print("from flags:", j.get("from_flags"))
    print("recommended command:", j["recommended_command"])
    pts = own_points(os.path.join(out, "pasted.txt"))
    if len(pts) >= 4:
        half = pts[len(pts) // 3:]
        print("pasted command, its own count over its last two thirds: %.1f samples/s (%d lines)" % (
            (half[-1][1] - half[0][1]) / (half[-1][0] - half[0][0]), len(half)))
    else:
        print("pasted command: too few step lines", len(pts))
    print()


def main():
    out = sys.argv[1]
    side_by_side(out)
    for name in ("probe_amp_off", "probe_amp_bf16", "probe_compile_bf16"):
        if os.path.isdir(os.path.join(out, name)):
            probe_section(out, name)
    tune_section(out)


if __name__ == "__main__":
    main()
