#!/usr/bin/env bash
# saturate makes its own files durable with fsync/fdatasync on their descriptors (util/atomic_file.h, the staging
# store's copies), never with sync(2) or syncfs(2), which flush every user's dirty data on the machine (or the
# whole filesystem) and can stall a shared node for seconds. This fails, naming the place, on any call of either
# in a non-test source under src/.
set -euo pipefail
src="${SATURATE_SOURCE_DIR:?}/src"
files=$(find "$src" -name '*.cc' ! -name '*_test.cc' ! -name 'test_*')
# shellcheck disable=SC2086
found=$(grep -nE '(^|[^A-Za-z0-9_.>])(::)?(sync|syncfs)\(' $files | grep -vE '^[^:]*:[0-9]+: *//' || true)
if [ -n "$found" ]; then
  echo "FAIL: sync()/syncfs() flush the whole machine's (or filesystem's) data; fsync the files written instead:" >&2
  echo "$found" >&2
  exit 1
fi
echo ok
