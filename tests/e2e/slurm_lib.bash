# A throw-away one-node Slurm for an end-to-end test, from Debian's packages (slurmctld, slurmd, slurm-client,
# munge): munged, slurmctld and slurmd as root on loopback, with their own ports, key, configuration, state and
# logs under $WORK/slurm, stopped when the test exits. Sourced after lib.bash.
#
#   start_slurm CPUS [GRES]   GRES e.g. "gpu:2,shard:16": fake GPU devices (files under $WORK/slurm/dev,
#                             gres.conf with AutoDetect=off), or empty for a node without GPUs
# Afterwards SLURM_CONF points the client commands (and saturate) at this cluster, and SLURM_NODE is the node.
#   slurm_sweep NAME SPEC [ARGS...]   runs a sweep on it (below)
# Where Slurm cannot start at all (not installed, not root, a daemon that does not come up), the test is skipped:
# it prints why and exits 77.

slurm_skip() {
  echo "SKIP: $*" >&2
  exit 77
}

# Stops what start_slurm started, each by the process id it recorded.
stop_slurm() {
  local s="$WORK/slurm" pid
  [ -d "$s" ] || return 0
  if [ -f "$s/slurmctld.pid" ]; then
    scancel --full --quiet --user=root 2>/dev/null || true
  fi
  for f in slurmd slurmctld munged; do
    pid=$(cat "$s/$f.pid" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for f in slurmd slurmctld munged; do
    pid=$(cat "$s/$f.pid" 2>/dev/null || true)
    for _ in $(seq 50); do
      [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  done
}

# Two free TCP ports on loopback.
free_ports() {
  "$PY" - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# Prints the last lines of the daemons' logs (for a failure or a skip).
slurm_logs() {
  local f
  for f in "$WORK"/slurm/log/*.log "$WORK"/slurm/munge/munged.log; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }
  done >&2
}

start_slurm() {
  local cpus=$1 gres=${2:-} s="$WORK/slurm" p
  export PATH="$PATH:/usr/sbin:/sbin"
  for p in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v "$p" >/dev/null ||
      slurm_skip "$p is not installed (scripts/install-deps installs slurmctld, slurmd, slurm-client and munge)"
  done
  [ "$(id -u)" = 0 ] || slurm_skip "slurmd must run as root to start jobs, and this test is not root"
  trap 'stop_slurm; rm -rf "$WORK"' EXIT
  mkdir -p "$s/state" "$s/spool" "$s/log" "$s/munge" "$s/dev"
  chmod 755 "$s" "$s/munge"

  # munge: its own key and socket, so no system munged is needed or touched.
  head -c 1024 /dev/urandom >"$s/munge/munge.key"
  chmod 400 "$s/munge/munge.key"
  munged --force --key-file="$s/munge/munge.key" --socket="$s/munge/munge.socket" \
    --pid-file="$s/munged.pid" --log-file="$s/munge/munged.log" --seed-file="$s/munge/munge.seed" \
    >"$s/munge/start.log" 2>&1 || { cat "$s/munge/start.log" >&2; slurm_skip "munged does not start here"; }

  read -r ctld_port slurmd_port < <(free_ports)
  SLURM_NODE=satnode
  local mem_mib=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
  local gres_line="" gres_types=""
  if [ -n "$gres" ]; then
    local gpus shards
    gpus=$(echo "$gres" | tr ',' '\n' | awk -F: '$1 == "gpu" {print $2}')
    shards=$(echo "$gres" | tr ',' '\n' | awk -F: '$1 == "shard" {print $2}')
    : >"$s/gres.conf"
    echo "AutoDetect=off" >>"$s/gres.conf"
    for ((i = 0; i < gpus; i++)); do
      # A character device as gres.conf wants, with /dev/null's numbers: nothing reads it without cgroups.
      mknod "$s/dev/fakegpu$i" c 1 3 || slurm_skip "cannot create the fake GPU device files (mknod)"
      echo "NodeName=$SLURM_NODE Name=gpu File=$s/dev/fakegpu$i" >>"$s/gres.conf"
    done
    [ -n "$shards" ] && echo "NodeName=$SLURM_NODE Name=shard Count=$shards" >>"$s/gres.conf"
    gres_types="GresTypes=$(echo "$gres" | tr ',' '\n' | cut -d: -f1 | paste -sd,)"
    gres_line="Gres=$gres"
  fi
  cat >"$s/slurm.conf" <<CONF
ClusterName=saturate-e2e
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$s/munge/munge.socket
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
DefMemPerCPU=256
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
KillWait=5
MpiDefault=none
$gres_types
NodeName=$SLURM_NODE NodeAddr=127.0.0.1 NodeHostname=$(hostname) CPUs=$cpus RealMemory=$mem_mib $gres_line State=UNKNOWN
PartitionName=debug Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$s/slurm.conf"
  slurmctld -f "$SLURM_CONF" >"$s/log/slurmctld.out" 2>&1 || { slurm_logs; slurm_skip "slurmctld does not start here"; }
  slurmd -f "$SLURM_CONF" -N "$SLURM_NODE" >"$s/log/slurmd.out" 2>&1 || { slurm_logs; slurm_skip "slurmd does not start here"; }
  local deadline=$((SECONDS + 30))
  until [ "$(sinfo -h -N -o '%t' 2>/dev/null)" = idle ]; do
    ((SECONDS < deadline)) || { slurm_logs; slurm_skip "the Slurm node never became idle: $(sinfo -h -N -o '%t %E' 2>&1)"; }
    sleep 0.2
  done
  export SLURM_NODE
}

# Runs `saturate sweep SPEC ARGS...` with the quick measurement the tests use, its stdout in $WORK/NAME.out and
# stderr in $WORK/NAME.err, both printed; a failure prints the daemons' logs too and fails the test.
slurm_sweep() {
  local name=$1
  shift
  "$SATURATE" sweep "$@" --warmup 0.3s --window 0.3s >"$WORK/$name.out" 2>"$WORK/$name.err" || {
    cat "$WORK/$name.err" "$WORK/$name.out"
    slurm_logs
    fail "saturate sweep $* failed"
  }
  cat "$WORK/$name.err" "$WORK/$name.out"
}
