#!/usr/bin/env python3
"""Turns the raw data bench/gpu_checks.sh collected on a GPU machine into the tables of docs/benchmarks.md. Runs
anywhere (stdlib only); the truth each figure is checked against is something saturate did not produce: the
script's own step lines (`[rank R ][step N ]t=<time.monotonic()> samples=S`), nvidia-smi's own power.draw and
memory.used log on the same clock, nvidia-smi's own query output, the runs' own ends (a `.done` file) and peaks.

    python3 bench/gpu_report.py OUTDIR

OUTDIR holds what parts 1-3 left there, and/or issue 40's packs (sweep.tgz, stacks.tgz, oom.tgz, tune.tgz), each
unpacked into a temporary folder and reported as its own section. A pack made by the CPU rehearsal (--cpu) says so
in its section's title: its figures are CPU torch against the NVML stand-in, never a GPU's.
"""

import collections
import contextlib
import csv
import glob
import json
import os
import re
import sqlite3
import statistics
import sys
import tarfile
import tempfile

STEP_LINE = re.compile(r"(?:rank (\d+) )?(?:step \d+ )?t=(\d+\.\d+) samples=(\d+)")


def own_points(path):
    """The script's own (time, samples) points from a log, in order, by rank (0 for a script without ranks)."""
    points = collections.defaultdict(list)
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = STEP_LINE.search(line)
                if m:
                    points[int(m.group(1) or 0)].append((float(m.group(2)), int(m.group(3))))
    except OSError:
        pass
    return points


def own_rate(points, t_from, t_to):
    """Samples/s, summed over ranks: for each, between its last line at or before t_from and its last line at or
    before t_to."""
    total = None
    for rank_points in points.values():
        before = [p for p in rank_points if p[0] <= t_from] or rank_points[:1]
        inside = [p for p in rank_points if p[0] <= t_to]
        if not before or not inside or inside[-1][0] <= before[-1][0]:
            return None
        (t0, s0), (t1, s1) = before[-1], inside[-1]
        total = (total or 0.0) + (s1 - s0) / (t1 - t0)
    return total


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
    pts = own_points(os.path.join(out, "pasted.txt"))[0]
    if len(pts) >= 3:
        half = pts[max(1, len(pts) // 3):]
        print("pasted command, its own count over its last two thirds: %.1f samples/s (%d lines)" % (
            (half[-1][1] - half[0][1]) / (half[-1][0] - half[0][0]), len(half)))
    else:
        print("pasted command: too few step lines", len(pts))
    print()


def read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def exit_line(path):
    """The `== exit N after S s` line bench/gpu_checks.sh's step appends, as (rc, seconds), else (None, None)."""
    m = re.search(r"^== exit (\d+) after (\d+) s", read(path), re.M)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def journal_rows(path, query):
    if not os.path.exists(path):
        return []
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def most_at_once(intervals):
    """The most intervals (start, end) open at one time."""
    events = sorted([(s, 1) for s, e in intervals] + [(e, -1) for s, e in intervals if e is not None])
    alive = peak = 0
    for _, d in events:
        alive += d
        peak = max(peak, alive)
    return peak


def attempt_log(journal, log_dir, name="stdout.log"):
    """An attempt's log inside the unpacked part: the journal's log folder is JOURNAL-stem.logs beside it."""
    stem = os.path.basename(journal)[:-len(".journal")]
    marker = "/" + stem + ".logs/"
    if marker not in log_dir:
        return None
    return os.path.join(os.path.dirname(journal), stem + ".logs", log_dir.split(marker, 1)[1], name)


def peak_mib(text):
    vals = [float(v) for v in re.findall(r"^peak_device_mib=(\d+(?:\.\d+)?)", text, re.M)]
    return max(vals) if vals else None


def part_title(d, name, gpu_title):
    cpu = read(os.path.join(d, "cpu.txt")).strip() == "1"
    env = read(os.path.join(d, "env.txt")).strip().splitlines()
    where = "CPU rehearsal (CPU torch, the NVML stand-in; not GPU figures)" if cpu else gpu_title
    print(f"## {name}: {where}")
    print()
    for line in env[1:]:
        print("    " + line)
    print()


def sweep_part(d):
    part_title(d, "sweep", "8 runs of a small model on one GPU")
    runs = int(read(os.path.join(d, "runs.txt"), "0").strip() or 0)
    print(f"{runs} runs of {read(os.path.join(d, 'steps.txt')).strip() or 'n/a'} steps each "
          f"(calibrated to a few seconds of training alone: calibrate.txt); `saturate sweep` flags: "
          f"{read(os.path.join(d, 'sweep_flags.txt')).strip() or 'none'}")
    print()
    memory = power_log(os.path.join(d, "memory.csv"))
    idle = min((r[3] for r in memory), default=None)
    windows = []
    with contextlib.suppress(OSError):
        windows = [row for row in csv.reader(open(os.path.join(d, "windows.csv")))]
    # A schedule that did not finish has no ratio: skipped (its step found the part's time spent; its .txt says so),
    # cut off at its limit (timeout's 124, or 137 when killed), or failed with another exit. Only finished schedules
    # are ratios' bases. A schedule whose .txt exists but has no window was stopped with the part (no end recorded).
    fate = {}
    for name, _, _ in windows:
        text = read(os.path.join(d, name + ".txt"))
        rc, _ = exit_line(os.path.join(d, name + ".txt"))
        if text.startswith("skipped:"):
            fate[name] = "skipped (part's time spent)"
        elif rc in (124, 137):
            fate[name] = "cut off at its limit"
        elif rc not in (0, None):
            fate[name] = f"exit {rc}"
    makespans = {name: float(t1) - float(t0) for name, t0, t1 in windows if name not in fate}
    fixed = [m for n, m in makespans.items() if re.fullmatch(r"k\d+", n)]
    best_fixed = min(fixed) if fixed else None
    seq = makespans.get("sequential")
    print("| schedule | makespan s | vs sequential | vs best fixed k | runs done (each once) | most at once | "
          "device memory.used peak MiB (idle %s) | runs' own peak MiB, max | saturate's per-run peak MiB, max |"
          % fmt(idle, "{:.0f}"))
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for name, t0, t1 in windows:
        t0, t1 = float(t0), float(t1)
        span = t1 - t0
        if fate.get(name, "").startswith("skipped"):
            print(f"| {name.replace('_', ' ')} | {fate[name]} | - | - | - | - | - | - | - |")
            continue
        done = [int(x) for x in read(os.path.join(d, name + ".done")).split()]
        once = sorted(done) == list(range(1, runs + 1))
        counts = collections.Counter(done)
        done_text = f"{len(set(done))}/{runs} " + ("(yes)" if once else "(NO: %s)" % dict(sorted(counts.items())))
        device_peak = max((r[3] for r in memory if t0 <= r[0] <= t1), default=None)
        journal = os.path.join(d, name + ".journal")
        if os.path.exists(journal):
            rows = journal_rows(journal, "SELECT started_unix, ended_unix, log_dir FROM attempts")
            at_once = str(most_at_once([(a, b) for a, b, _ in rows]))
            own = [peak_mib(read(attempt_log(journal, log) or "")) for _, _, log in rows]
            sat_peaks = [b for (b,) in journal_rows(journal, "SELECT peak_gpu_memory_bytes FROM runs") if b]
            sat_peak = fmt(max(sat_peaks) / 2**20 if sat_peaks else None, "{:.0f}")
        else:
            at_once = "1" if name == "sequential" else name[1:] if re.fullmatch(r"k\d+", name) else "n/a"
            own = [peak_mib(read(f)) for f in glob.glob(os.path.join(d, name, "run-*.log"))]
            sat_peak = "-"
        own = [v for v in own if v is not None]
        if name in fate:
            makespan, vs_seq, vs_fixed = f"{fate[name]} ({span:.1f} s)", "-", "-"
        else:
            makespan, vs_seq, vs_fixed = (f"{span:.1f}", fmt(seq and seq / span, "{:.2f}x"),
                                          fmt(best_fixed and span / best_fixed, "{:.2f}"))
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name.replace("_", " "), makespan, vs_seq, vs_fixed, done_text, at_once, fmt(device_peak, "{:.0f}"),
            fmt(max(own) if own else None, "{:.0f}"), sat_peak))
    recorded = {name for name, _, _ in windows}
    for path in sorted(glob.glob(os.path.join(d, "*.txt"))):
        name = os.path.basename(path)[:-len(".txt")]
        if name not in recorded and re.fullmatch(r"sequential|k\d+|saturate(_mps)?", name):
            print(f"| {name.replace('_', ' ')} | stopped with the part (no end recorded) | - | - | - | - | - | - | - |")
    print()
    for name in ("saturate", "saturate_mps"):
        held = [line.strip() for line in read(os.path.join(d, name + ".txt")).splitlines()
                if re.search(r"held|raised|not growing|out of memory|error", line)]
        if held:
            print(f"{name}: " + " / ".join(held[-4:]))
    print()


def stacks_part(d):
    part_title(d, "stacks", "the real stacks, unmodified")
    print("| stack | full samples/s (probe) | ±95% | own count, same window | probe / own | loader | compute | "
          "verdict | what broke |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for name in ("hf_trainer", "lightning", "accelerate", "torchrun"):
        skipped = [line for line in read(os.path.join(d, "skipped.txt")).splitlines() if line.startswith(name + ":")]
        if skipped:
            print(f"| {name} | - | - | - | - | - | - | - | {skipped[0].split(': ', 1)[1]} |")
            continue
        try:
            j = json.load(open(os.path.join(d, name, "probe.json")))
        except (OSError, ValueError):
            rc, secs = exit_line(os.path.join(d, name + ".txt"))
            tail = " / ".join(read(os.path.join(d, name + ".txt")).strip().splitlines()[-3:])[-300:]
            print(f"| {name} | - | - | - | - | - | - | - | no probe.json (exit {rc} after {secs} s): {tail} |")
            continue
        st = j["stages"]
        full = st["full"]
        rate = full.get("samples_per_s")
        own = None
        if rate is not None:
            own = own_rate(own_points(os.path.join(d, name, "full", "stdout.log")), full["steady_from_t"],
                           full["steady_to_t"])
        broke = []
        for stage_name in ("loader", "compute", "full"):
            stage = st[stage_name]
            if stage.get("samples_per_s") is None:
                why = stage.get("skipped_why") or ((stage.get("outcome") or {}).get("detail")) or "not measured"
                broke.append(f"{stage_name}: {why}")
            if stage.get("auto_failure"):
                broke.append(f"{stage_name}: {stage['auto_failure']}")
        launcher = read(os.path.join(d, name + ".launcher.txt")).strip()
        if launcher:
            broke.insert(0, launcher)
        v = j.get("verdict") or {}
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, fmt(rate), fmt(full.get("rel_half_width") and 100 * full["rel_half_width"], "{:.1f}%"), fmt(own),
            fmt(own and rate and rate / own, "{:.3f}"), fmt(st["loader"].get("samples_per_s")),
            fmt(st["compute"].get("samples_per_s")), f"{v.get('bottleneck')}: {v.get('cause')}",
            "; ".join(broke)[:300] or "nothing"))
    print()


def oom_part(d):
    part_title(d, "oom", "out of memory on a real GPU, and the batch searches")
    journal = os.path.join(d, "oom.journal")
    attempts = journal_rows(journal, "SELECT r.idx, a.attempt_no, a.exit_class, a.started_unix, a.ended_unix, "
                                     "a.detail FROM attempts a JOIN runs r ON r.key = a.run_key ORDER BY a.id")
    runs = journal_rows(journal, "SELECT idx, state, attempts, failures FROM runs ORDER BY idx")
    done = collections.Counter(int(x) for x in read(os.path.join(d, "oom.done")).split())
    print(f"Sweep, run {len(runs)} holding more than fits beside another run (`--retries 0`):")
    print()
    print("| run | attempt | ended as | runs alive when it started | detail |")
    print("| ---: | ---: | --- | ---: | --- |")
    spans = [(a[3], a[4]) for a in attempts]
    for idx, no, cls, start, end, detail in attempts:
        alive = sum(1 for s, e in spans if s <= start and (e is None or e > start))
        print(f"| {idx + 1} | {no} | {cls} | {alive} | {detail[:120]} |")
    ooms = [a for a in attempts if a[2] == "gpu_oom"]
    print()
    print("runs: " + ", ".join(f"{i + 1}: {state}, {n} attempts, {f} failures, finished {done.get(i + 1, 0)}x"
                               for i, state, n, f in runs))
    print(f"out-of-memory attempts: {len(ooms)}"
          + ("" if ooms else f" (none: the sweep never put run {len(runs)} beside another run)"))
    print()
    print("Batch searches under one per-process cap of %s MiB:" % read(os.path.join(d, "memory_limit_mib.txt")).strip())
    print()
    print("| search | batches tried (in order) | trials | seconds | batch found | trained afresh |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    verified = {}
    for line in read(os.path.join(d, "verified.txt")).splitlines():
        source, batch, ooms_seen = line.split()
        rc, _ = exit_line(os.path.join(d, f"verify_{batch}.txt"))
        verified[source] = "out of memory" if int(ooms_seen) else ("yes" if rc == 0 else f"exit {rc}")
    try:
        t = json.load(open(os.path.join(d, "tune_batch", "results.json")))
        # The batch step's trials (baseline and ceilings ran at the script's batch before them).
        tried = [str(tr["knobs"]["batch_size"]) + ("" if tr["exit_class"] in ("finished", "stopped") else
                                                   f" ({tr['exit_class']})")
                 for tr in t["trials"] if tr.get("step") == "batch" and "batch_size" in tr.get("knobs", {})]
        for key in ("largest_fitting", "recommended"):
            b = (t.get(key) or {}).get("batch_size")
            print(f"| saturate tune ({key.replace('_', ' ')}) | {', '.join(tried) or 'none'} | "
                  f"{len(t['trials'])} in all | {t['wall_s']:.0f} | {fmt(b, '{}')} | "
                  f"{verified.get('tune_' + key, 'not run')} |")
        oom = [tr["knobs"]["batch_size"] for tr in t["trials"]
               if tr["exit_class"] == "gpu_oom" and "batch_size" in tr.get("knobs", {})]
        tune_boundary = (f"saturate tune: largest fitting {fmt((t.get('largest_fitting') or {}).get('batch_size'), '{}')}"
                         f", smallest out of memory {min(oom) if oom else 'none'}")
    except (OSError, ValueError, KeyError) as e:
        tune_boundary = None
        print(f"| saturate tune | no results.json ({e}) | - | - | - | - |")
    for finder in ("lightning-power", "lightning-binsearch", "accelerate"):
        skipped = [line for line in read(os.path.join(d, "skipped.txt")).splitlines() if line.startswith(finder + ":")]
        m = re.search(r"^finder (\{.*\})$", read(os.path.join(d, f"finder_{finder}.txt")), re.M)
        if skipped:
            print(f"| {finder} | {skipped[0].split(': ', 1)[1]} | - | - | - | - |")
        elif m:
            f = json.loads(m.group(1))
            print(f"| {finder} | {', '.join(str(b) for b in f['tried'])} | {len(f['tried'])} | {f['seconds']:.0f} | "
                  f"{fmt(f['found'], '{}')} | {verified.get(finder, 'not run')} |")
        else:
            rc, secs = exit_line(os.path.join(d, f"finder_{finder}.txt"))
            print(f"| {finder} | no answer (exit {rc} after {secs} s) | - | - | - | - |")
    print()
    if tune_boundary:
        print(tune_boundary)
        print()


def tune_part(d):
    part_title(d, "tune", "tune of the unmodified ResNet-50 loop with a GPU-sized budget")
    tune_section(d)


PARTS = {"sweep": sweep_part, "stacks": stacks_part, "oom": oom_part, "tune": tune_part}


@contextlib.contextmanager
def unpacked(path):
    """A part's folder: PATH itself when it holds an unpacked part, or PATH.tgz unpacked into a temporary folder."""
    if os.path.exists(os.path.join(path, "part.txt")):
        yield path
        return
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(path + ".tgz") as tar:
            tar.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(tmp)
        yield tmp


def main():
    out = sys.argv[1]
    if os.path.exists(os.path.join(out, "side_saturate.csv")):
        side_by_side(out)
    for name in ("probe_amp_off", "probe_amp_bf16", "probe_compile_bf16"):
        if os.path.isdir(os.path.join(out, name)):
            probe_section(out, name)
    if os.path.exists(os.path.join(out, "tune", "results.json")):
        tune_section(out)
    for name, section in PARTS.items():
        if os.path.exists(os.path.join(out, name + ".tgz")) or os.path.exists(os.path.join(out, name, "part.txt")):
            with unpacked(os.path.join(out, name)) as d:
                section(d)


if __name__ == "__main__":
    main()
