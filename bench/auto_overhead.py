#!/usr/bin/env python3
"""The automatic instrumentation's overhead, and the probe's full-stage figure against the script's own.

1. The example trainer run unmodified (--no-helper) with saturate's folder on PYTHONPATH and a live channel, once
   with the automatic instrumentation on and once with SATURATE_AUTO=0, alternating, side by side in one run;
   samples/s from the trainer's own `done:` line (the training loop only). Target: ratio >= 0.99.
2. The hooks' own cost, in one process: the per-step calls (step end, batch request + hand-over) timed 100,000
   times each after a real first step has armed them; less sensitive to a loaded machine than (1).
3. `saturate probe` of the same unmodified trainer: the full stage's samples/s against the mean of the trainer's
   own `step ... samples/s` lines printed during that stage (their steady part: the second half).
4. With --instructions: the per-step cost as instructions, which no load on the machine changes. Each of off and on
   runs under `valgrind --tool=callgrind` at two step counts; the difference between the two counts is the cost of
   the extra steps alone (start-up, imports and data loading cancel), and on over off is the overhead. Reports are
   sent on a clock, so under valgrind's slowdown each step carries ~50x more of them than it would natively: the
   figure overstates the overhead, never understates it. Takes ~6 minutes of one core.

5. With --loops [CASE...]: (4) for each loop shape of tests/e2e/scripts/loops.py (dict and mapping batches,
   gradient accumulation, two optimizers a batch, a closure, skipped steps, a Trainer that owns the loop), with no
   sleep in the step: the tiniest steps each shape allows, where a per-step cost shows most. Counted on the main
   thread from after torch's import (bench/callgrind_start.c): about 20 s a run instead of 4 minutes. The progress
   reports, sent on a clock rather than per step, are kept out of these runs and timed apart (report_cost).

6. With --hooks: the per-step paths alone (bench/hook_instructions.py): saturate's DataLoader __next__ and
   optimizer.step wrappers against torch's own functions on the same objects, in instructions between callgrind
   client requests, for (x, y) and dict batches; three rounds of 1,000 steps, with the garbage collector off and a
   fixed hash seed (the spread between rounds is about 200 instructions a step). About a minute a layout.

Run: /usr/bin/python3 bench/auto_overhead.py [rounds] [path/to/saturate] [--instructions | --loops [CASE...] | --hooks]
"""
import json, os, re, shutil, subprocess, sys, tempfile

from helper_overhead import CMD, HERE, alternate, median, open_sink, samples_per_s


def auto_env(auto, channel, **extra):
    """The trainer's environment: saturate's folder on PYTHONPATH, a live channel, the instrumentation on or off."""
    return dict(os.environ, PYTHONPATH=os.path.join(HERE, "python"), SATURATE_CHANNEL=channel,
                SATURATE_RUN_ID="bench", SATURATE_AUTO="1" if auto else "0", **extra)


def run(auto, channel):
    out = subprocess.run(CMD + ["--no-helper"], env=auto_env(auto, channel), capture_output=True, text=True, check=True).stdout
    return samples_per_s(out)


def overhead(rounds):
    off, on, received = alternate(run, rounds)
    print("| rounds | SATURATE_AUTO=0 (median samples/s) | automatic instrumentation | ratio | messages received |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    print(f"| {rounds} | {median(off):.1f} | {median(on):.1f} | {median(on) / median(off):.3f} | {received} |")
    print("per round off:", " ".join(f"{x:.1f}" for x in off))
    print("per round on: ", " ".join(f"{x:.1f}" for x in on))


HOOK_COST = """
import sys, time, torch
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.zeros(64, dtype=torch.long)), batch_size=4, shuffle=True)
model = torch.nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    opt.zero_grad(); torch.nn.functional.cross_entropy(model(x), y).backward(); opt.step()
auto, n = sys.modules["saturate._auto"]._AUTO, 100000
batch = next(iter(loader))
t = time.perf_counter()
for i in range(n):
    auto.step_depth += 1
    auto.on_step_end("optimizer")
end = (time.perf_counter() - t) / n * 1e6
t = time.perf_counter()
for i in range(n):
    auto.on_next(None, auto.train, lambda _it: batch, takeover=False)
hand_over = (time.perf_counter() - t) / n * 1e6
# backward(): the patched function against torch's own, on one small graph each call.
patched, original = torch.autograd.backward, torch.autograd.backward.__wrapped__
w = torch.ones(1, requires_grad=True)
times = []
for fn in (original, patched, original, patched):
    t = time.perf_counter()
    for i in range(n // 10):
        fn((w * 2).sum())
    times.append((time.perf_counter() - t) / (n // 10) * 1e6)
backward = (times[1] + times[3] - times[0] - times[2]) / 2
# A second optimizer on the same batch (a GAN): the step continues.
t = time.perf_counter()
for i in range(n):
    auto.step_depth += 1
    auto.on_step_end("optimizer")
    auto.step_depth += 1
    auto.on_step_end("optimizer")
    auto.on_next(None, auto.train, lambda _it: batch, takeover=False)
two = (time.perf_counter() - t) / n * 1e6 - hand_over
print("%.2f %.2f %.2f %.2f" % (end, hand_over, backward, two))
"""


def hook_cost(channel):
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "python"), SATURATE_CHANNEL=channel)
    out = subprocess.run([sys.executable, "-c", HOOK_COST], env=env, capture_output=True, text=True, check=True)
    end, batch, backward, two = map(float, out.stdout.split())
    print()
    print("| step end (us) | batch request + hand-over (us) | backward() wrapper (us) | per step at one batch a "
          "step (us) | two optimizers on one batch, both step ends (us) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    print(f"| {end:.2f} | {batch:.2f} | {backward:.2f} | {end + batch + backward:.2f} | {two:.2f} |")


def probe_against_own_figures(saturate):
    out = tempfile.mkdtemp()
    cmd = [saturate, "probe", "--budget", "60s", "--json", "--out", out, "--"] + CMD[:-4] + [
        "--steps", "0", "--epochs", "100000", "--log-every", "20", "--no-helper"]
    probe = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    full = probe["stages"]["full"]["samples_per_s"]
    log = open(os.path.join(out, "full", "stdout.log")).read()
    own = [float(x) for x in re.findall(r"samples/s ([\d.]+)", log)]
    steady = own[len(own) // 2:]
    mean = sum(steady) / len(steady)
    print()
    print("| probe full stage (samples/s) | script's own step lines, second half (mean) | ratio | lines |")
    print("| ---: | ---: | ---: | ---: |")
    print(f"| {full:.1f} | {mean:.1f} | {full / mean:.3f} | {len(steady)} |")
    print("verdict:", probe["verdict"].get("bottleneck"), "| stages ran:",
          {k: v.get("ran") for k, v in probe["stages"].items()})


_SHIM = []  # the built bench/valgrind_no_rdtscp.c, once


def no_rdtscp_shim():
    """bench/valgrind_no_rdtscp.c and bench/callgrind_start.c built as one shared object (once per run of this
    script), to preload under valgrind so that importing torch does not stop it."""
    if not _SHIM:
        shim = os.path.join(tempfile.mkdtemp(), "no_rdtscp.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(HERE, "bench", "valgrind_no_rdtscp.c"),
                        os.path.join(HERE, "bench", "callgrind_start.c")], check=True)
        _SHIM.append(shim)
    return _SHIM[0]


def callgrind(args, env, main_thread_after_start=False):
    """callgrind's instruction count (Ir) of one whole run of `args`, with no_rdtscp_shim() preloaded. With
    `main_thread_after_start`, only the main thread's, from the moment the run calls callgrind_start.c's function:
    torch's thread pools spin a varying number of instructions in their own threads, which is no part of a step."""
    out = tempfile.mkdtemp()
    flags = ["--instr-atstart=no", "--separate-threads=yes"] if main_thread_after_start else []
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.path.join(out, "cg")] + flags +
                          args, env=dict(env, LD_PRELOAD=no_rdtscp_shim()), capture_output=True, text=True, check=True)
    if main_thread_after_start:
        with open(os.path.join(out, "cg-01")) as f:
            count = int(re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M).group(1))
    else:
        count = int(re.search(r"Collected : (\d+)", proc.stderr).group(1))
    shutil.rmtree(out)
    return count


def instructions_of(auto, channel, steps):
    """Instructions (callgrind's Ir) of one whole run of the trainer for `steps` steps, on one thread."""
    args = list(CMD) + ["--no-helper"]
    args[args.index("--steps") + 1] = str(steps)
    return callgrind(args, auto_env(auto, channel, OMP_NUM_THREADS="1", PYTHONHASHSEED="0"))


def instructions(low=20, high=60):
    sock, path, received = open_sink()
    per_step = {}
    for auto in (False, True):
        a, b = instructions_of(auto, path, low), instructions_of(auto, path, high)
        per_step[auto] = (b - a) / (high - low)
    sock.close()
    print()
    print(f"| steps | off: instructions per step | on: instructions per step | on over off | messages received |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    print(f"| {high} - {low} | {per_step[False]:,.0f} | {per_step[True]:,.0f} | "
          f"{per_step[True] / per_step[False]:.4f} | {received[0]} |")


LOOPS = os.path.join(HERE, "tests", "e2e", "scripts", "loops.py")
LOOP_CASES = ("plain", "dict", "mapping", "accum", "gan", "closure", "skip", "trainer")


# Imports torch (saturate's sitecustomize attaches to that import, as it does in the script), starts counting, then
# runs the script as __main__ with its own arguments.
_RUN_COUNTED = ("import ctypes, runpy, sys, torch; ctypes.CDLL(None).saturate_bench_callgrind_start(); "
                "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def loop_instructions_of(case, auto, channel, steps):
    """Instructions of one run of tests/e2e/scripts/loops.py's `case` for `steps` training steps, on one thread,
    with no sleep in the step and no own logging: the tiniest steps that loop shape allows. Counted from after
    torch's import, on the main thread only."""
    args = ["/usr/bin/python3", "-c", _RUN_COUNTED, LOOPS, "--case", case, "--steps", str(steps), "--step-ms", "0",
            "--log-every", "0"]
    # Reports go out on a clock (0.1 s), so how many fall in a run under valgrind's slowdown varies from run to run
    # (one report more is ~4,000 instructions a step over 40 steps): the clock is stretched past the run, which
    # then sends the first step's report and the final one, as many in every run. What a report costs natively
    # per step is measured apart (report_instructions).
    return callgrind(args, auto_env(auto, channel, OMP_NUM_THREADS="1", PYTHONHASHSEED="0",
                                    SATURATE_REPORT_INTERVAL="100000"), main_thread_after_start=True)


REPORT_COST = """
import sys, time, torch
from torch.utils.data import DataLoader, TensorDataset
torch.set_num_threads(1)
loader = DataLoader(TensorDataset(torch.randn(4096, 32), torch.zeros(4096, dtype=torch.long)), batch_size=16)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for i, (x, y) in enumerate(loader):  # the first step arms the instrumentation
    opt.zero_grad(); torch.nn.functional.cross_entropy(model(x), y).backward(); opt.step()
    if i == 3: break
state = sys.modules["saturate._auto"]._AUTO.state
rounds = []
for r in range(5):
    t = time.perf_counter()
    for i in range(1000):
        state.progress(time.perf_counter())
    rounds.append((time.perf_counter() - t) / 1000)
print(min(rounds), state.report_interval_s)
"""


def report_cost(channel):
    """What the progress reports cost, natively: the time of one (encode, send to a live channel), the fastest of
    five rounds of 1,000, as a share of the reporting clock's interval (its default, 0.1 s). Not in instructions:
    under valgrind the report's system calls run in valgrind's own code."""
    env = dict(auto_env(True, channel, OMP_NUM_THREADS="1"))
    env.pop("SATURATE_REPORT_INTERVAL", None)
    out = subprocess.run(["/usr/bin/python3", "-c", REPORT_COST], env=env, capture_output=True, text=True, check=True)
    per_report_s, interval_s = map(float, out.stdout.split())
    print(f"a progress report: {per_report_s * 1e6:.1f} us, one every {interval_s:g} s: "
          f"{per_report_s / interval_s * 100:.3f}% of the run's time, whatever the step")


def loop_instructions(cases, low=20, high=1020):
    """The per-step overhead of each loop shape issue 18 names, in instructions (as instructions() does). Over 1,000
    steps: what varies from run to run is start-up (the first step's messages wait, a varying number of times, when
    the channel's queue of 10 datagrams is full on a loaded machine, and Python's garbage collector runs when
    allocations cross its thresholds), about 200,000 instructions a run; over 200 steps that moved a figure by 0.1%."""
    sock, path, received = open_sink()
    print("| loop (tests/e2e/scripts/loops.py --case) | off: instructions per step | on: instructions per step | "
          "on over off |")
    print("| --- | ---: | ---: | ---: |")
    for case in cases:
        per_step = {}
        for auto in (False, True):
            a, b = loop_instructions_of(case, auto, path, low), loop_instructions_of(case, auto, path, high)
            per_step[auto] = (b - a) / (high - low)
        print(f"| {case} | {per_step[False]:,.0f} | {per_step[True]:,.0f} | {per_step[True] / per_step[False]:.4f} |",
              flush=True)
    report_cost(path)
    sock.close()
    print(f"messages received: {received[0]}")


def hook_instructions(steps=1000, rounds=3):
    """bench/hook_instructions.py under callgrind, once per batch layout: the batch path (next - off) and the step
    path (all - next) in instructions a step, the median over the rounds."""
    sock, path, received = open_sink()
    print("| batches | torch's own: instructions per step | saturate's batch path | saturate's step path | both |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for layout in ("tuple", "dict"):
        out = tempfile.mkdtemp()
        env = auto_env(True, path, OMP_NUM_THREADS="1", PYTHONHASHSEED="0", SATURATE_REPORT_INTERVAL="100000",
                       LD_PRELOAD=no_rdtscp_shim())
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                        "--callgrind-out-file=" + os.path.join(out, "cg"), "/usr/bin/python3",
                        os.path.join(HERE, "bench", "hook_instructions.py"), str(steps), str(rounds), layout],
                       env=env, capture_output=True, text=True, check=True)
        counts = {}
        for name in sorted(os.listdir(out)):
            if not re.fullmatch(r"cg\.\d+", name):
                continue
            with open(os.path.join(out, name)) as f:
                text = f.read()
            which = re.search(r"^desc: Trigger: Client Request: (\w+)", text, re.M).group(1)
            total = int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))
            counts.setdefault(which, []).append(total / steps)
        shutil.rmtree(out)
        off, nxt, both = (median(counts[k]) for k in ("off", "next", "all"))
        print(f"| {layout} | {off:,.0f} | {nxt - off:,.0f} | {both - nxt:,.0f} | {both - off:,.0f} |", flush=True)
    sock.close()


def main():
    if "--instructions" in sys.argv:
        sys.argv.remove("--instructions")
        instructions()
        return
    if "--hooks" in sys.argv:
        hook_instructions()
        return
    if "--loops" in sys.argv:
        sys.argv.remove("--loops")
        loop_instructions(sys.argv[1:] or LOOP_CASES)
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    saturate = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "build", "saturate")
    sock, path, _ = open_sink()
    hook_cost(path)
    sock.close()
    overhead(rounds)
    probe_against_own_figures(saturate)


if __name__ == "__main__":
    main()
