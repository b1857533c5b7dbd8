#!/usr/bin/env bash
# Scripts that know nothing of saturate and print nothing parseable, probed through the automatic instrumentation:
# hand-written batching and SGD (no DataLoader, no optimizer) still gets a throughput, under a user's own
# sitecustomize that must still run; a validation loader between epochs is left out of the training figure; a
# program that never imports torch is left alone.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/probe_lib.bash"
SCRIPTS="$SATURATE_SOURCE_DIR/tests/e2e/scripts"

# --target 0.05 for the two probes that train: what is checked is a throughput's presence, a skipped stage's reason,
# a verdict, and a full-stage rate inside 500-1000 samples/s (about 880 expected), none of it a rate's last percent;
# with the default ±2% the validation probe's compute stage (a 16-sample batch through Linear(8, 2), which no check
# reads) ran 25-28 s of its 40 to converge. Other probe tests keep the default ±2% end to end.

# 1. Manual SGD, with a sitecustomize of the user's own on PYTHONPATH.
mkdir -p "$WORK/usersite"
printf 'import os\nopen(os.environ["MARKER"], "a").write("ran\\n")\n' >"$WORK/usersite/sitecustomize.py"
MARKER="$WORK/marker" PYTHONPATH="$WORK/usersite" probe_json manual --budget 30s --target 0.05 -- "$PY" "$SCRIPTS/manual_sgd.py"
[ -s "$WORK/marker" ] || fail "the user's own sitecustomize did not run"
jq_py "$WORK/manual.json" 'j["stages"]["full"]["samples_per_s"] > 0 or sys.exit("no throughput")' ||
  fail "hand-written SGD should get a throughput"
jq_py "$WORK/manual.json" '"DataLoader" in j["stages"]["loader"]["skipped_why"] or sys.exit(j["stages"]["loader"])' ||
  fail "the loader stage should say there is no DataLoader"
[ "$(jq_py "$WORK/manual.json" 'j["verdict"]["bottleneck"]')" != "" ] || fail "a verdict should be reached"

# 2. A validation pass after every epoch: 16 samples x 1 ms per training batch bounds training at 1,000
# samples/s; mixing in the validation batches (5 ms a sample) would read well under 500.
probe_json val --budget 40s --target 0.05 -- "$PY" "$SCRIPTS/with_validation.py"
jq_py "$WORK/val.json" '500 < j["stages"]["full"]["samples_per_s"] < 1000 or sys.exit(j["stages"]["full"]["samples_per_s"])' ||
  fail "the full stage should measure the training loader only"
jq_py "$WORK/val.json" 'json.dumps(j["stages"]["full"])' | grep -q 'with_validation.py:23#0' ||
  fail "probe.json should name the training loader (with_validation.py:23#0)"

# 3. No torch: nothing of saturate is loaded, and the verdict says nothing was measured.
probe_json notorch --budget 20s -- "$PY" "$SCRIPTS/no_torch.py" 2
# Only the data-file watch (python/saturate/_files.py, loaded by its path, not the package) is there: it sends nothing
# until the program opens a data file (tests/python/test_auto.py, test_script_without_torch_is_untouched).
grep -q "modules: \['saturate._files'\]" "$WORK/notorch/full/stdout.log" ||
  fail "a program without torch should load nothing of saturate but the data-file watch: $(grep modules: "$WORK/notorch/full/stdout.log")"
[ "$(jq_py "$WORK/notorch.json" 'j["verdict"]["bottleneck"] or ""')" = "" ] || fail "nothing measured, no bottleneck"
echo ok
