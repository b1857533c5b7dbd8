#!/usr/bin/env bash
# Bad input gets exit code 2 and a message that says where and what: malformed YAML with line and column,
# unknown settings with a suggestion, a shape that is not a parameter, a missing journal.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

printf 'program: train.py\nmethod: grid\nparameters:\n  lr: {values: [0.1, 0.01}\n' >"$WORK/broken.yaml"
expect_exit 2 "$SATURATE" sweep "$WORK/broken.yaml"
expect_contains "$ERR" "$WORK/broken.yaml:4:"
[[ "$ERR" =~ broken\.yaml:4:[0-9]+: ]] || fail "no line and column in: $ERR"

printf 'program: train.py\nmethod: grid\nparameters:\n  lr: {values: [0.1]}\nsaturate:\n  max_per_gpus: 2\n' >"$WORK/typo.yaml"
expect_exit 2 "$SATURATE" sweep "$WORK/typo.yaml"
expect_contains "$ERR" "typo.yaml:6:3: saturate: unknown key 'max_per_gpus' (did you mean 'max_per_gpu'?)"

printf 'program: train.py\nmethod: grid\nparameters:\n  bs: {values: [32, 64]}\nsaturate:\n  shape: [batch]\n' >"$WORK/shape.yaml"
expect_exit 2 "$SATURATE" sweep "$WORK/shape.yaml"
expect_contains "$ERR" "saturate.shape: 'batch' is not a parameter of this sweep"

expect_exit 2 "$SATURATE" sweep
expect_contains "$ERR" "needs a spec file"
expect_exit 2 "$SATURATE" sweep --grid lr=0.1 -- echo
expect_contains "$ERR" "put {lr} where its value goes"
expect_exit 2 "$SATURATE" sweep --warmup soon --grid lr=0.1 -- echo '{lr}'
expect_contains "$ERR" "--warmup 'soon'"
expect_exit 2 "$SATURATE" sweep status --journal "$WORK/none.journal"
expect_contains "$ERR" "no sweep journal at $WORK/none.journal"
expect_exit 2 "$SATURATE" sweep export --journal "$WORK/none.journal"
expect_contains "$ERR" "one of --csv or --json"
[ ! -e "$WORK/none.journal" ] || fail "reading must not create a journal"
echo PASS
