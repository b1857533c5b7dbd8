#!/usr/bin/env bash
# No source file under src/ passes 800 lines (issue 41): a file that long holds more than one concept, and is split
# along one (its own .h/.cc pair), never squeezed. Tests (*_test.cc) are held to it too: a test file that long is
# split along the concepts it tests, its shared fixture in a test_*.h beside it. This fails, naming each file and
# its length.
set -euo pipefail
src="${SATURATE_SOURCE_DIR:?}/src"
limit=800
found=$(cd "$src/.." && find src -name '*.cc' -exec wc -l {} + |
        awk -v limit="$limit" '$2 != "total" && $1 > limit { print "  " $2 ": " $1 " lines" }')
if [ -n "$found" ]; then
  echo "FAIL: source files over $limit lines (split each along a concept: its own .h/.cc pair, or its own test file):" >&2
  echo "$found" >&2
  exit 1
fi
echo ok
