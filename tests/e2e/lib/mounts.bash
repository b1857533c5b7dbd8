# Mounts for end-to-end tests and benchmarks: a dataset behind a slow FUSE file system, or behind sshfs over a
# private sshd on loopback. Sourced after lib.bash (needs WORK, PY and fail). Every mount is undone when the test
# exits, pass or fail: its cleanup runs before the EXIT trap that was set when this file was sourced (lib.bash's
# rm -rf "$WORK", which must not walk into a live mount). SIGTERM, SIGINT and SIGHUP, if nothing traps them yet,
# become an exit, so the cleanup runs then too (bash skips the EXIT trap on an untrapped signal).
#
#   slowfs_mount SRC MNT DELAY_MS [OPEN_DELAY_MS [--direct-io]]
#                                                   SRC read-only at MNT, every read() (and open()) sleeping
#                                                   (lib/slowfs.py); /proc/mounts type fuse.slowfs. Through the
#                                                   page cache (readers wait in state D), or with --direct-io
#                                                   without (readers wait in state S). Words in $SLOWFS_PREFIX (a
#                                                   taskset) go before its command.
#   sshfs_mount SRC MNT                             SRC at MNT through sshfs as root@127.0.0.1, served by its own
#                                                   sshd; /proc/mounts type fuse.sshfs
# Where the mount cannot be made (no /dev/fuse, no permission, sshd does not start), the test is skipped: it prints
# why and exits 77. Mount points are paths without spaces (as $WORK is).

MOUNTS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_MOUNTS_CLEANUP=()

mounts_skip() {
  echo "SKIP: $*" >&2
  exit 77
}

# Runs the registered cleanups, newest first.
_mounts_cleanup() {
  local i
  for ((i = ${#_MOUNTS_CLEANUP[@]} - 1; i >= 0; i--)); do
    eval "${_MOUNTS_CLEANUP[i]}" >/dev/null 2>&1 || true
  done
  _MOUNTS_CLEANUP=()
}

# Chains onto the EXIT trap already set: `trap -p EXIT` prints  trap -- 'CMD' EXIT  (nothing when none is set).
_mounts_prev_trap() { _MOUNTS_PREV_EXIT=${3-}; }
eval "_mounts_prev_trap $(trap -p EXIT)"
# shellcheck disable=SC2064  # the earlier command is put in now, on purpose
trap "_mounts_cleanup; $_MOUNTS_PREV_EXIT" EXIT
[ -n "$(trap -p TERM)" ] || trap 'exit 143' TERM
[ -n "$(trap -p INT)" ] || trap 'exit 130' INT
[ -n "$(trap -p HUP)" ] || trap 'exit 129' HUP

# Unmounts a FUSE mount point (fuse 2's and fuse 3's helpers, then a lazy umount as root's last resort).
mounts_unmount() {
  grep -q " $1 fuse" /proc/mounts || return 0
  fusermount -u "$1" 2>/dev/null || fusermount3 -u "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true
}

# Stops the process $1 (a child of this shell): SIGTERM, up to 5 s, then SIGKILL.
mounts_stop() {
  local pid=$1
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# Stops sshd $1 once its sessions have ended (they end when sshfs goes): a session left without its listener would
# be a zombie where PID 1 does not reap.
_sshd_stop() {
  for _ in $(seq 20); do
    pgrep -P "$1" >/dev/null || break
    sleep 0.1
  done
  mounts_stop "$1"
}

# Waits up to $4 seconds until MNT ($1) is mounted with type $2 while the process $3 lives. Returns 1 when the
# process ended first, 2 when the time ran out.
_mounts_wait() {
  local mnt=$1 type=$2 pid=$3 deadline=$((SECONDS + $4))
  while ((SECONDS < deadline)); do
    awk -v m="$mnt" -v t="$type" '$2 == m && $3 == t { found = 1 } END { exit !found }' /proc/mounts && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 2
}

slowfs_mount() {
  local src=$1 mnt=$2 delay=$3 open_delay=${4:-0} log pid rc=0
  local -a more=("${@:5}")
  [ -e /dev/fuse ] || mounts_skip "no /dev/fuse here (FUSE is not available in this container or kernel)"
  "$PY" -c 'import fusepy' 2>/dev/null || mounts_skip "python3-fusepy is not installed (scripts/install-deps)"
  mkdir -p "$mnt"
  log="$WORK/slowfs.$(basename "$mnt").log"
  # shellcheck disable=SC2086  # split on purpose
  ${SLOWFS_PREFIX:-} "$PY" "$MOUNTS_LIB_DIR/slowfs.py" "$src" "$mnt" --delay-ms "$delay" --open-delay-ms "$open_delay" \
    "${more[@]}" >"$log" 2>&1 &
  pid=$!
  _MOUNTS_CLEANUP+=("mounts_unmount '$mnt'; mounts_stop $pid")
  _mounts_wait "$mnt" fuse.slowfs "$pid" 15 || rc=$?
  case $rc in
    0) ;;
    1)
      wait "$pid" && rc=0 || rc=$?
      # slowfs.py exits 3 when libfuse could not mount (no /dev/fuse access, not permitted here).
      [ "$rc" = 3 ] && mounts_skip "FUSE cannot mount here: $(tr '\n' ' ' <"$log")"
      fail "slowfs.py exited ($rc) before mounting $mnt: $(cat "$log")"
      ;;
    *) fail "slowfs did not mount $mnt within 15 s: $(cat "$log")" ;;
  esac
}

# A private sshd as root on 127.0.0.1, host and client keys made with ssh-keygen under $WORK/sshd, then sshfs in
# the foreground (in the background of this shell) so its process id is known.
sshfs_mount() {
  local src=$1 mnt=$2 d="$WORK/sshd" port pid sshfs_pid rc=0 try
  for p in /usr/sbin/sshd ssh ssh-keygen sshfs; do
    command -v "$p" >/dev/null || mounts_skip "$p is not installed (scripts/install-deps: openssh-server, sshfs)"
  done
  [ -e /dev/fuse ] || mounts_skip "no /dev/fuse here (FUSE is not available in this container or kernel)"
  [ "$(id -u)" = 0 ] || mounts_skip "sshfs_mount logs in as root through its own sshd, and this test is not root"
  # sshd needs its privilege separation folder (systemd makes it; in a container nobody has).
  [ -d /run/sshd ] || mkdir -m 755 /run/sshd || mounts_skip "cannot make /run/sshd, which sshd needs"
  if [ ! -d "$d" ]; then
    mkdir -p "$d"
    chmod 700 "$d"
    ssh-keygen -q -t ed25519 -N '' -C saturate-e2e-host -f "$d/host_key" || mounts_skip "ssh-keygen failed"
    ssh-keygen -q -t ed25519 -N '' -C saturate-e2e-client -f "$d/client_key" || mounts_skip "ssh-keygen failed"
    cp "$d/client_key.pub" "$d/authorized_keys"
  fi
  mkdir -p "$mnt"
  # A free port can be taken between the look-up and sshd's bind: three tries.
  for try in 1 2 3; do
    port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat >"$d/sshd_config.$port" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $d/host_key
PidFile $d/sshd.$port.pid
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
LogLevel ERROR
EOF
    /usr/sbin/sshd -D -e -f "$d/sshd_config.$port" >"$d/sshd.$port.log" 2>&1 &
    pid=$!
    _MOUNTS_CLEANUP+=("_sshd_stop $pid")
    # Up when it accepts a connection on its port.
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && break
    # Another process took the port: try another; anything else will not change.
    if [ "$try" = 3 ] || ! grep -qiE "bind|in use" "$d/sshd.$port.log"; then
      mounts_skip "sshd does not start here: $(tr '\n' ' ' <"$d/sshd.$port.log")"
    fi
  done
  sshfs -f -o "IdentityFile=$d/client_key,port=$port,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null" \
    -o BatchMode=yes,LogLevel=ERROR "root@127.0.0.1:$src" "$mnt" >"$d/sshfs.$port.log" 2>&1 &
  sshfs_pid=$!
  _MOUNTS_CLEANUP+=("mounts_unmount '$mnt'; mounts_stop $sshfs_pid")
  _mounts_wait "$mnt" fuse.sshfs "$sshfs_pid" 20 || rc=$?
  case $rc in
    0) ;;
    1)
      local log
      log="sshfs: $(cat "$d/sshfs.$port.log"); sshd: $(cat "$d/sshd.$port.log")"
      grep -qiE "fuse|permission|not permitted" "$d/sshfs.$port.log" && mounts_skip "sshfs cannot mount here: $log"
      fail "sshfs exited before mounting $mnt: $log"
      ;;
    *) fail "sshfs did not mount $mnt within 20 s: $(cat "$d/sshfs.$port.log")" ;;
  esac
}
