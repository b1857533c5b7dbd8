#!/usr/bin/env bash
# Staging beside a hostile user on the same node (issue 45). Another user (nobody) plants, in a shared
# world-writable folder ($WORK/shared, as /tmp or a node's scratch), a store at the victim's default store name
# and links at every name a sweep writes; the victim (root here) also points --stage-dir at a project folder of
# theirs. Nothing outside saturate's own new files may change: every file and link under the victim's folders, the
# dataset and the shared folder is listed with its checksum (or link target) before and after, and each must still
# be there, the same.
#  (a) a store the other user made at the Slurm default name ($TMPDIR/saturate-stage-0) holding an altered copy of
#      the victim's data under its key: an `auto` sweep is refused (exit 2) naming the folder and its owner, and no
#      run reads the altered copy.
#  (b) a link planted at that name, pointing at the victim's project folder, with --stage-cap 4 (before: eviction
#      deleted config.json, results.json and results.data/): refused (exit 2), the project untouched.
#  (c) --stage-dir at the project folder itself: refused (exit 2) as not a store.
#  (d) the journal in the shared folder, with links planted at every name a sweep wrote there in a reference sweep
#      (its logs, device log, staging record, report; not SQLite's own journal files, which SQLite opens itself):
#      the sweep runs, and no link target changes. Its private store's copy of a 0600 file is 0400.
#  (e) report.html that cannot be written (a folder at its name): a warning, and no "report: PATH" line.
#
# What this test relies on of the implementation (datastore/store.h, datastore/store_folder.h):
#  - the default store on a Slurm node (SLURM_JOB_ID set) is $SLURM_TMPDIR, else $TMPDIR, /saturate-stage-<uid>;
#  - a store's copy lies at <store>/<key>.data/<name>; refusals name the folder ("F belongs to user 65534", "F is a
#    symbolic link", "F is not a saturate store");
#  - the sweep prints "report: PATH" after its summary when the page was written, and
#    "saturate: warning: no report.html: ..." when it was not.
set -euo pipefail
source "$(dirname "$0")/lib.bash"
cd "$WORK"
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null; then
  echo "SKIP: needs root and runuser, to act as a second user (nobody)" >&2
  exit 77
fi
chmod 755 "$WORK"
as_other() { runuser -u nobody -- "$@"; }

# The victim's dataset (one file private) and project folder; the shared folder.
mkdir -p ds/train victim/proj/results.data shared ref private a b c e
for i in 0 1 2 3; do echo "sample $i" >"ds/train/$i.bin"; done
echo "the victim's secret" >ds/private.bin
chmod 600 ds/private.bin
echo '{"lr": 0.1}' >victim/proj/config.json
echo '{"loss": 0.5}' >victim/proj/results.json
echo 'weights' >victim/proj/results.data/model.pt
chmod 700 victim/proj
chmod 1777 shared

# A run that prints a checksum of each file it was given to read.
cat >show.py <<'PY'
import hashlib, os, sys
root = sys.argv[sys.argv.index("--data") + 1]
print("data:", root)
for dirpath, _, names in sorted(os.walk(root)):
    for n in sorted(names):
        p = os.path.join(dirpath, n)
        print("file:", os.path.relpath(p, root), hashlib.sha256(open(p, "rb").read()).hexdigest(), flush=True)
PY
sweep() { "$SATURATE" sweep --cpu -q "$@" --grid i=1 -- "$PY" "$WORK/show.py" --data "$WORK/ds" --i '{i}'; }

# Every file, link and folder under the given folders: a file with its mode and checksum, a link with its target.
snapshot() {
  "$PY" - "$@" <<'PY'
import hashlib, os, stat, sys
for top in sys.argv[1:]:
    for dirpath, dirs, files in os.walk(top):
        for name in sorted(dirs + files):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                print("link", p, "->", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                print("file", p, oct(st.st_mode & 0o7777), hashlib.sha256(open(p, "rb").read()).hexdigest())
            else:
                print("dir", p)
PY
}
# Fails unless every line of the snapshot $1 is in the snapshot $2.
expect_kept() {
  local lost
  lost=$(comm -23 <(sort "$1") <(sort "$2"))
  [ -z "$lost" ] || fail "$3: changed or gone: $lost"
}
snapshot victim ds >victim.before

# A reference sweep, in folders of the victim's own: the names a sweep writes, and a genuine store to forge from.
sweep --journal "$WORK/ref/s.journal" --stage "$WORK/ds" --stage-policy always --stage-dir "$WORK/ref/store" \
  >ref.out 2>&1 || fail "the reference sweep failed: $(cat ref.out)"
copy=$(ls -d ref/store/ds-*.data/ds)
[ "$(stat -c %a "$copy/private.bin")" = 400 ] ||
  fail "the copy of a 0600 file is $(stat -c %a "$copy/private.bin"), not 400"

# (a) The other user's store at the victim's default name on a Slurm node, with an altered copy under the key.
cp -a ref/store shared/saturate-stage-0
planted="shared/saturate-stage-0/${copy#ref/store/}"
chmod u+w "$planted/train" "$planted/train/0.bin"
echo "altered by another user" >"$planted/train/0.bin"
chown -R nobody: shared/saturate-stage-0
on_slurm() { env -u SLURM_TMPDIR SLURM_JOB_ID=1 TMPDIR="$WORK/shared" "$@"; }
expect_exit 2 on_slurm "$SATURATE" sweep --cpu -q --journal "$WORK/a/s.journal" --stage "$WORK/ds" --grid i=1 -- \
  "$PY" "$WORK/show.py" --data "$WORK/ds" --i '{i}'
expect_contains "$ERR" "$WORK/shared/saturate-stage-0 belongs to user 65534, not to you"
if ls a/s.logs/*/attempt-1/stdout.log >/dev/null 2>&1; then
  expect_not_contains "$(cat a/s.logs/*/attempt-1/stdout.log)" "shared/saturate-stage-0"
fi
echo "(a) passed"

# (b) A link at the default name, to the victim's project folder, and a cap that evicts everything it counts.
rm -rf shared/saturate-stage-0
as_other ln -s "$WORK/victim/proj" shared/saturate-stage-0
expect_exit 2 on_slurm "$SATURATE" sweep --cpu -q --journal "$WORK/b/s.journal" --stage "$WORK/ds" \
  --stage-policy always --stage-cap 4 --grid i=1 -- "$PY" "$WORK/show.py" --data "$WORK/ds" --i '{i}'
expect_contains "$ERR" "$WORK/shared/saturate-stage-0 is a symbolic link"
echo "(b) passed"

# (c) --stage-dir at the project folder.
expect_exit 2 sweep --journal "$WORK/c/s.journal" --stage "$WORK/ds" --stage-policy always \
  --stage-dir "$WORK/victim/proj" --stage-cap 4
expect_contains "$ERR" "$WORK/victim/proj is not a saturate store"
snapshot victim ds >victim.after
expect_kept victim.before victim.after "(a) to (c): the victim's files"
[ "$(wc -l <victim.before)" = "$(wc -l <victim.after)" ] ||
  fail "(a) to (c): files appeared among the victim's: $(comm -13 <(sort victim.before) <(sort victim.after))"
echo "(c) passed"

# (d) Links at every name the reference sweep wrote beside its journal, planted by the other user in the shared
# folder where the victim keeps this sweep's journal. SQLite opens the journal's own files itself (it follows a
# link there: docs/reliability.md, not covered yet), and the controller's lock refuses a link before the sweep
# starts (e2e.sweep_journal_faults): those names are left out, so the sweep runs into every other one.
names=$(cd ref && find . -path ./store -prune -o \( -type f -o -type l \) -print | sed 's|^\./||' |
  grep -vE '^s\.journal(-wal|-shm|-journal|\.lock)?$' | sort)
[ -n "$names" ] || fail "(d) the reference sweep wrote nothing beside its journal"
echo "(d) planting links at: $(echo $names)"
as_other mkdir shared/run
as_other sh -c 'echo "the other user'"'"'s own notes" >shared/notes.txt'
for name in $names; do
  as_other mkdir -p "shared/run/$(dirname "$name")"
  as_other ln -s "$WORK/victim/proj/config.json" "shared/run/$name"
done
snapshot shared >shared.before
snapshot victim ds >victim.before
set +e
sweep --journal "$WORK/shared/run/s.journal" --stage "$WORK/ds" --stage-policy always \
  --stage-dir "$WORK/private/store" >d.out 2>&1
rc=$?
set -e
[ "$rc" -lt 128 ] || fail "(d) the sweep died (exit $rc): $(cat d.out)"
snapshot shared >shared.after
snapshot victim ds >victim.after
# A link at a name saturate writes may be replaced by saturate's own file (a rename over it); its target, and every
# file that was there, must be as it was.
grep -v '^link ' shared.before >shared.files.before
expect_kept shared.files.before shared.after "(d) the shared folder"
expect_kept victim.before victim.after "(d) the victim's files"
private_copy=$(ls -d private/store/ds-*.data/ds)
[ "$(stat -c %a "$private_copy/private.bin")" = 400 ] || fail "(d) the private copy of a 0600 file is not 400"
echo "(d) passed (the sweep exited $rc)"

# (e) A folder planted at report.html's name (here by the victim's own mistake: the page cannot be written).
mkdir -p e/s.report.html/x
set +e
sweep --journal "$WORK/e/s.journal" >e.out 2>e.err
rc=$?
set -e
[ "$rc" = 0 ] || fail "(e) the sweep failed (exit $rc): $(cat e.err)"
expect_contains "$(cat e.err)" "saturate: warning: no report.html"
expect_not_contains "$(cat e.out)" "report: "
echo PASS
