# The dataset of the storage tests (probe_storage.sh, probe_storage_kinds.sh), sourced after lib.bash: 300 files of
# 4 KiB at $WORK/src, read by tests/e2e/scripts/read_files.py ($READ), and a copy at $WORK/local-copy read once, so
# that it is in the page cache. A what-if's local copy goes under the user's cache, which must not be the data's own
# filesystem: XDG_CACHE_HOME is $WORK/cache.
READ="$SATURATE_SOURCE_DIR/tests/e2e/scripts/read_files.py"
"$PY" "$READ" --data "$WORK/src" --make 300 --file-kib 4 >/dev/null
export XDG_CACHE_HOME="$WORK/cache"
mkdir -p "$XDG_CACHE_HOME"
cp -r "$WORK/src" "$WORK/local-copy"
cat "$WORK"/local-copy/* >/dev/null
