#!/usr/bin/env bash
# The readers of a sweep (the live view, `sweep status`, the report) and the Slurm backend stand on what every
# backend shares (sweep/backend.h: options, events, snapshots, result; sweep/sweep_journal.h: the journal's paths
# and opening), never on the local engine's header (sweep/controller.h): a second backend or a dashboard then
# needs nothing of the local loop (issue 41). And an attempt on a compute node is run and measured by sweep
# (sweep/node_attempt.h), whichever backend's wrapper calls it: src/slurm/ keeps what is Slurm's (its job and
# node, its request, its sizing), never the measuring itself. This fails, naming the place, on an include of
# sweep/controller.h in sweep's readers or under src/slurm/, or on one of measure/ or of the attempt's meter,
# watch, launch or energy ledger under src/slurm/ (tests excepted).
set -euo pipefail
src="${SATURATE_SOURCE_DIR:?}/src"
readers=("$src"/sweep/view.* "$src"/sweep/status.* "$src"/sweep/html_report.* "$src"/slurm/*)
found=$(grep -n '#include "sweep/controller.h"' "${readers[@]}" || true)
measuring=$(grep -nE '#include "(measure/|sweep/(attempt_watch|meter|launch|energy_ledger)\.h)' "$src"/slurm/* |
            grep -v '_test\.cc:' || true)
if [ -n "$measuring" ]; then
  echo "FAIL: src/slurm/ measures an attempt itself; sweep/node_attempt.h does that for every backend:" >&2
  echo "$measuring" >&2
  exit 1
fi
if [ -n "$found" ]; then
  echo "FAIL: sweep's readers and the Slurm backend include the local engine's header (use sweep/backend.h or" \
       "sweep/sweep_journal.h):" >&2
  echo "$found" >&2
  exit 1
fi
# The seam is still there, so the rule above still says something.
for f in sweep/backend.h sweep/sweep_journal.h sweep/controller.h sweep/node_attempt.h; do
  [ -f "$src/$f" ] || { echo "FAIL: src/$f is gone; update this test with its new home" >&2; exit 1; }
done
grep -q '#include "sweep/backend.h"' "$src/slurm/slurm_backend.h" ||
  { echo "FAIL: slurm/slurm_backend.h no longer stands on sweep/backend.h" >&2; exit 1; }
echo ok
