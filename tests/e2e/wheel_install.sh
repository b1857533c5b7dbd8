#!/usr/bin/env bash
# The wheel, installed the way an ML engineer installs a tool (issue 39). scripts/pack-wheel packs the binary under
# test with the helper; an unprivileged user (nobody, when the test runs as root) with a clean environment, a HOME of
# its own and PATH = the venv's bin and the system's makes a venv of Debian's Python that sees the system's
# packages (where python3-torch is, as a user's venv holds their torch), installs the wheel offline
# (python -m pip install --no-index: Debian's pip, the version ensurepip would copy into the venv, seen through the
# system's packages; the venvs are made --without-pip, since ensurepip took 4-6 s a venv and tests nothing of ours)
# and runs `saturate --version`, `saturate monitor -c 1` and a short probe of the example
# trainer through the venv's `python`, unmodified (--no-helper: no import saturate, so the automatic
# instrumentation alone measures it), which must reach a verdict. Also checked:
#   - the installed binary needs glibc's libraries alone (readelf NEEDED, ldd);
#   - that user left nothing outside the venv, its cache (~/.cache: pip's, the trainer's dataset) and --out;
#   - the same wheel in a venv of a second Python (the newest of pyenv's under /root/.pyenv, made and installed by
#     root with that Python's own pip (--python the venv's), since nobody may not run an interpreter under /root; a
#     fresh Debian 12, as in CI, has none: said, and left out), its runs getting its own helper in /usr/bin/python3,
#     the interpreter that has torch (the first venv's probe is the one probe: the same helper files, the same
#     interpreter);
#   - a venv moved after the install, and reached through a symlink, still runs with its own helper; one whose
#     helper is gone says what to do
#     (with the checkout's python/ hidden in a mount namespace, as on a machine that never had the checkout);
#   - pip refuses, with its own message and nothing installed, copies of the wheel tagged for the first glibc newer
#     than this machine's and for another architecture.
set -euo pipefail
source "$(dirname "$0")/lib.bash"

if ! "$PY" -m pip --version >/dev/null 2>&1; then
  echo "SKIP: $PY has no pip to install the wheel with (Debian package python3-pip; scripts/install-deps --tests)"
  exit 77
fi
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the wheel's test expects an x86-64 machine"; exit 77; }

seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
jq_py() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# The wheel, from the binary under test.
t0=$(date +%s.%N)
WHEEL=$("$PY" "$SATURATE_SOURCE_DIR/scripts/pack-wheel" "$SATURATE" "$WORK/dist")
t1=$(date +%s.%N)
echo "packed $(basename "$WHEEL"): $(stat -c %s "$WHEEL") bytes in $(seconds "$t0" "$t1") s"
tag=$(basename "$WHEEL" .whl | cut -d- -f3-)
[[ "$tag" =~ ^py3-none-manylinux_2_[0-9]+_x86_64$ ]] || fail "unexpected wheel tag $tag"
floor=$(readelf -W --dyn-syms "$SATURATE" | grep -o '@GLIBC_2\.[0-9]*' | cut -d. -f2 | sort -n | tail -1)
[ "$tag" = "py3-none-manylinux_2_${floor}_x86_64" ] || fail "tag $tag does not state the binary's floor 2.$floor"

# The user's world: a folder it owns, with its HOME; the trainer beside it, read-only (so that Python's bytecode of
# the trainer's own module is not counted as saturate's writing).
U="$WORK/u"
mkdir -p "$U/home" "$WORK/scripts"
cp "$SATURATE_SOURCE_DIR/examples/train_images.py" "$SATURATE_SOURCE_DIR/examples/support.py" "$WORK/scripts/"
chmod 755 "$WORK" "$WORK/dist" "$WORK/scripts"
if [ "$(id -u)" -eq 0 ]; then
  chown -R nobody: "$U"
  as_user=(runuser -u nobody --)
  who=nobody
else
  as_user=()
  who=$(id -un)
fi
# Runs "$@" as the user in venv $1 (its bin first on PATH), from its HOME, with nothing of this environment.
user_in() {
  local venv=$1; shift
  (cd "$U/home" && "${as_user[@]}" env -i HOME="$U/home" USER="$who" LANG=C.UTF-8 \
    PATH="$venv/bin:/usr/local/bin:/usr/bin:/bin" "$@")
}
marker="$WORK/marker"
touch "$marker"
sleep 1

# 1. Debian's Python: a venv that sees the system's packages, made and filled by the user.
V="$U/venv"
user_in "$V" "$PY" -m venv --without-pip --system-site-packages "$V"
# pip refuses copies tagged for the first glibc newer than this machine's and for another architecture, installing
# nothing.
machine_glibc=$(getconf GNU_LIBC_VERSION | sed -n 's/^glibc 2\.\([0-9]*\)$/\1/p')
[ -n "$machine_glibc" ] || fail "cannot read this machine's glibc version (getconf GNU_LIBC_VERSION)"
mkdir -m 755 "$WORK/retagged"
for bad in "manylinux_2_$((machine_glibc + 1))_x86_64" manylinux_2_17_aarch64; do
  copy="$WORK/retagged/$(basename "$WHEEL" | sed "s/-py3-none-.*/-py3-none-$bad.whl/")"
  install -m 644 "$WHEEL" "$copy"
  expect_exit 1 user_in "$V" python -m pip install --no-index --disable-pip-version-check "$copy"
  echo "$bad: $ERR"
  expect_contains "$ERR" "$(basename "$copy") is not a supported wheel on this platform"
  [ ! -e "$V/bin/saturate" ] || fail "pip installed the $bad copy"
done
t0=$(date +%s.%N)
user_in "$V" python -m pip install --no-index --disable-pip-version-check "$WHEEL"
t1=$(date +%s.%N)
echo "pip install: $(seconds "$t0" "$t1") s"

# The binary on the venv's PATH, its version, and glibc's libraries alone.
[ "$(user_in "$V" sh -c 'command -v saturate')" = "$V/bin/saturate" ] || fail "saturate is not on the venv's PATH"
version=$(user_in "$V" saturate --version)
[[ "$version" =~ ^saturate\ [0-9.]+$ ]] || fail "saturate --version printed '$version'"
needed=$(readelf -d "$V/bin/saturate" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
echo "NEEDED: $needed"
for lib in $needed; do
  [[ "$lib" =~ ^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2)$ ]] ||
    fail "the installed binary needs $lib besides glibc"
done
ldd "$V/bin/saturate" | tee "$WORK/ldd.txt"
grep -v -E '^\s*(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|lib(c|m|pthread|dl|rt)\.so\.[0-9]+ => /)' "$WORK/ldd.txt" &&
  fail "ldd lists a library besides glibc's"
# `import saturate` in the venv, from the venv.
where=$(user_in "$V" python -c 'import saturate; print(saturate.__file__)')
[[ "$where" == "$V/lib/python3"*/site-packages/saturate/__init__.py ]] || fail "import saturate found $where"

# monitor: one sample, no GPU needed.
user_in "$V" saturate monitor -c 1 >"$WORK/monitor.txt" 2>"$WORK/monitor.err" ||
  { cat "$WORK/monitor.err"; fail "saturate monitor -c 1 failed"; }
cat "$WORK/monitor.txt"
[ -s "$WORK/monitor.txt" ] || fail "saturate monitor -c 1 printed nothing"

# A short probe of the example trainer, unmodified, trained by the venv's python; its dataset goes to the user's cache.
TRAINER=("$WORK/scripts/train_images.py" --model tiny --images 300 --epochs 100000 --log-every 0 --no-helper)
probe_as_user() {
  local venv=$1 out=$2; shift 2
  user_in "$venv" saturate probe --budget 30s --json --out "$out" -- "$@" "${TRAINER[@]}" >"$WORK/probe.json" \
    2>"$WORK/probe.err" || { cat "$WORK/probe.err" >&2; fail "saturate probe of $* failed"; }
  tail -n 3 "$WORK/probe.err"
  echo "verdict: $(jq_py "$out/probe.json" 'j["verdict"]["bottleneck"]')"
  jq_py "$out/probe.json" '(j["verdict"]["bottleneck"] or sys.exit("no verdict")) and all(j["stages"][s]["ran"]
    and j["stages"][s]["samples_per_s"] > 0 for s in ("full", "loader", "compute")) or sys.exit("a stage")' >/dev/null ||
    fail "the probe in $venv should reach a verdict with all three stages measured by the automatic instrumentation"
}
probe_as_user "$V" "$U/out" python

# Nothing left outside the venv, the user's cache and --out: in the user's folder ...
strays=$(cd "$U" && find . -mindepth 1 -newer "$marker" \
  -not -path ./venv -not -path './venv/*' -not -path ./out -not -path './out/*' \
  -not -path ./home -not -path ./home/.cache -not -path './home/.cache/*' | sort)
[ -z "$strays" ] || fail "the user wrote outside the venv, its cache and --out: $strays"
# ... and in the places every user may write.
strays=$(find /tmp /var/tmp /dev/shm /run/lock -xdev -user "$who" -newer "$marker" -not -path "$WORK/*" \
  2>/dev/null | sort || true)
[ -z "$strays" ] || fail "the user left files behind: $strays"

# 2. A second Python, where there is one: the newest of pyenv's that is not Debian's version.
py_version() { "$1" -c 'import platform; print(platform.python_version())' 2>/dev/null; }
second=""
for p in $(ls -d /root/.pyenv/versions/3.*/bin/python3 2>/dev/null | sort -V -r); do
  v=$(py_version "$p") || continue
  [ "$(printf '%s\n' 3.8 "$v" | sort -V | head -1)" = 3.8 ] && [ "$v" != "$(py_version "$PY")" ] || continue
  second=$p
  break
done
if [ -n "$second" ] && [ "$(id -u)" -eq 0 ]; then
  V2="$U/venv2"
  echo "second Python: $second ($("$second" --version))"
  mkdir -p "$WORK/root-home"
  as_root=(env -i HOME="$WORK/root-home" LANG=C.UTF-8 PATH="$V2/bin:/usr/local/bin:/usr/bin:/bin")
  "${as_root[@]}" "$second" -m venv --without-pip "$V2"
  "${as_root[@]}" "$second" -m pip --python "$V2/bin/python" install --no-index --disable-pip-version-check "$WHEEL"
  where=$("${as_root[@]}" python -c 'import saturate; print(saturate.__file__)')
  [[ "$where" == "$V2/lib/python3"*/site-packages/saturate/__init__.py ]] || fail "import saturate in $V2 found $where"
  [ "$(user_in "$V2" saturate --version)" = "$version" ] || fail "the second venv's saturate --version differs"
  # Its runs get its own helper (the one beside its binary, on the PYTHONPATH it gives a run) in /usr/bin/python3,
  # which has no saturate of its own: the probe above already reached a verdict through the same helper files (one
  # wheel) in the same interpreter, so a run that imports the helper is enough here, and spares a second probe.
  user_in "$V2" saturate monitor -c 1 -- "$PY" -c "import saturate; print('helper:', saturate.__file__)" \
    >"$WORK/v2.txt" 2>&1 || { cat "$WORK/v2.txt"; fail "saturate of the second venv could not run $PY"; }
  grep "^helper:" "$WORK/v2.txt" || fail "the second venv's run did not print its helper"
  grep -qx "helper: $V2/share/saturate/python/saturate/__init__.py" "$WORK/v2.txt" ||
    fail "the second venv's run did not use the helper beside its binary"
else
  echo "second Python: none tried (no /root/.pyenv/versions/3.*/bin/python3 besides Debian's, as on a fresh Debian 12," \
    "or not root, so no user for whom root's pyenv is out of reach)"
fi

# 3. The venv moved, then reached through a symlink: the binary still finds the helper beside its real self (Debian's
# python3 imports saturate from nowhere else but the PYTHONPATH saturate gives it).
user_in "$V" mv "$V" "$U/moved"
M="$U/moved"
user_in "$M" ln -s "$M" "$U/linked"
for venv in "$M" "$U/linked"; do
  user_in "$venv" saturate monitor -c 1 -- "$PY" -c "import saturate; print('helper:', saturate.__file__)" \
    >"$WORK/moved.txt" 2>&1 || { cat "$WORK/moved.txt"; fail "saturate of the venv at $venv failed"; }
  grep "^helper:" "$WORK/moved.txt" || fail "the run of the venv at $venv did not print its helper"
  grep -qx "helper: $M/share/saturate/python/saturate/__init__.py" "$WORK/moved.txt" ||
    fail "the run of the venv at $venv did not use the helper beside its binary"
done

# 4. The helper gone, on a machine without the checkout: a message that says what to do, and exit status 1.
user_in "$M" rm -rf "$M/share/saturate"
mkdir -p "$WORK/empty"
# The checkouts' python/ folders to hide: this source tree's, and the one the binary under test was built from (its
# compiled-in fallback), where that is another checkout (build/saturate beside its python/).
hide=("$SATURATE_SOURCE_DIR/python")
built_from=$(realpath -m "$(dirname "$(realpath "$SATURATE")")/../python")
if [ -f "$built_from/sitecustomize.py" ] && [ "$built_from" != "$(realpath "$SATURATE_SOURCE_DIR/python")" ]; then
  hide+=("$built_from")
fi
if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
  set +e
  unshare -m --propagation private sh -c 'empty=$1; n=$2; shift 2
    while [ "$n" -gt 0 ]; do mount --bind "$empty" "$1" || exit 125; shift; n=$((n - 1)); done
    exec "$@"' _ "$WORK/empty" "${#hide[@]}" "${hide[@]}" \
    runuser -u nobody -- env -i HOME="$U/home" LANG=C.UTF-8 PATH="$M/bin:/usr/bin:/bin" \
    saturate monitor -c 1 -- "$PY" -c pass >"$WORK/broken.txt" 2>&1
  rc=$?
  set -e
  cat "$WORK/broken.txt"
  [ "$rc" -eq 1 ] || fail "a run without its helper should exit 1, not $rc"
  expect_contains "$(cat "$WORK/broken.txt")" "saturate: error: saturate's Python helper (sitecustomize.py and the \
saturate/ package) is in none of $M/bin/python, $M/python, $M/share/saturate/python"
  expect_contains "$(cat "$WORK/broken.txt")" "Reinstall saturate (pip install --force-reinstall saturate-*.whl"
else
  echo "helper gone: not tried (hiding the checkout's python/ needs root and a mount namespace)"
fi
echo ok
