#!/usr/bin/env bash
# Every file saturate writes goes through util/safe_file.h (written in place) or util/atomic_file.h (written whole):
# in a shared folder a link planted at the name must never be followed, nor another user's file written into. This
# fails, naming the place, on any non-test source under src/ that writes a file another way: std::ofstream, a stdio
# fopen for writing or appending, or an open() that creates (O_CREAT) without refusing links and what exists
# (O_NOFOLLOW or O_EXCL). The few raw creating opens left (lock files, the tune cache's SQLite file, the dataset
# store's copies) carry those flags, which this checks line by line.
set -euo pipefail
src="${SATURATE_SOURCE_DIR:?}/src"
allowed='^[^:]*/util/(safe_file|atomic_file)\.cc:'
problems=""
add() { [ -z "$1" ] || problems+="$1"$'\n'; }
files=$(find "$src" -name '*.cc' ! -name '*_test.cc' ! -name 'test_*')
# shellcheck disable=SC2086
add "$(grep -nE 'std::ofstream|std::fstream' $files | grep -vE "$allowed" | grep -vE '^[^:]*:[0-9]+: *//' || true)"
# shellcheck disable=SC2086
add "$(grep -nE 'fopen\([^;]*"[^"]*[wa+]' $files | grep -vE "$allowed" | grep -vE '^[^:]*:[0-9]+: *//' || true)"
# An open() call that creates, joined with its continuation lines, must refuse links or existing files.
for f in $files; do
  [[ "$f" =~ /util/(safe_file|atomic_file)\.cc$ ]] && continue
  add "$(awk -v file="$f" '
    /^ *\/\// { next }
    !open_call && /[^A-Za-z_:]open\(/ { call = ""; start = NR; open_call = 1 }
    open_call { call = call " " $0 }
    open_call && /;/ {
      if (call ~ /O_CREAT/ && call !~ /O_NOFOLLOW/ && call !~ /O_EXCL/) print file ":" start ":" call
      open_call = 0
    }' "$f")"
done
if [ -n "$problems" ]; then
  echo "FAIL: files written outside util/safe_file.h and util/atomic_file.h (a planted link would be followed):" >&2
  printf '%s' "$problems" >&2
  exit 1
fi
# The helpers are still there, and used.
grep -q "O_NOFOLLOW" "$src/util/safe_file.cc" || { echo "FAIL: safe_file.cc no longer refuses links" >&2; exit 1; }
# shellcheck disable=SC2086
[ "$(grep -l "OpenForWriting\|OpenStreamForWriting" $files | wc -l)" -ge 4 ] ||
  { echo "FAIL: util/safe_file.h is not used where files are written" >&2; exit 1; }
echo ok
