// The `saturate.slurm` section of a sweep spec: where and how runs are submitted when the sweep runs on Slurm
// (`saturate: {backend: slurm}` or `saturate sweep --slurm`).
//
//   saturate:
//     backend: slurm
//     slurm:
//       partition: gpu          # sbatch --partition (default: the cluster's default partition)
//       account: proj42         # --account
//       qos: normal             # --qos
//       time: 2h                # --time, per run (default: the partition's)
//       options: ["--constraint=a100"]   # more sbatch options, verbatim
//       share: auto             # how a sized run asks for part of a GPU: auto | shard | mps | gpu
//       gpus: 1                 # GPUs of a run not yet sized (0: runs use no GPU; default 1 where the
//                               # partition has GPUs, else 0)
//       cpus: 8                 # --cpus-per-task of a run not yet sized (default: Slurm's)
//       mem: 32G                # --mem of a run not yet sized (default: Slurm's)
//       margin: 0.25            # sized requests are the measured use times (1 + margin)
//       probes: 1               # runs of a shape submitted before the shape is sized
//       poll: 2s                # how often squeue and the outcome files are read
//
// Plain data and a parser. Errors are usage errors carrying "FILE:LINE:COLUMN: saturate.slurm: ...".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace YAML {
class Node;
}

namespace sat::sweep {

// How a sized run asks for part of a GPU. kAuto: shard where the partition's nodes define the `shard` GRES,
// else mps where they define `mps`, else a whole GPU.
enum class GpuShare { kAuto, kShard, kMps, kGpu };

struct SlurmSpec {
  std::string partition, account, qos;
  double time_s = 0;                 // --time per run; 0: the partition's default
  std::vector<std::string> options;  // more sbatch options, verbatim
  GpuShare share = GpuShare::kAuto;
  std::optional<int> gpus;            // GPUs of an unsized run; unset: 1 where the partition has GPUs, else 0
  std::optional<int> cpus;            // --cpus-per-task of an unsized run; unset: Slurm's default
  std::optional<uint64_t> mem_bytes;  // --mem of an unsized run; unset: Slurm's default
  double margin = 0.25;               // sized requests: measured x (1 + margin)
  int probes = 1;                     // attempts of an unsized shape in Slurm at once
  double poll_s = 2;
};

// Parses the mapping under `saturate.slurm`; `source` is the spec file's name for error messages.
Result<SlurmSpec> ParseSlurmSpec(const YAML::Node& node, std::string_view source);

// "32G", "1500M", "2T", "512K", or a number of MiB as sbatch takes it ("4096"). nullopt when malformed.
std::optional<uint64_t> ParseSlurmMemory(std::string_view text);

}  // namespace sat::sweep
