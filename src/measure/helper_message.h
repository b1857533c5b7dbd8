// One message of the helper protocol (docs/helper-protocol.md), parsed and validated.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace sat::measure {

enum class MessageType { kHello, kKnob, kProgress, kDone, kMetrics, kLoader, kFlops, kTrace, kFlags, kFiles };

// "hello", "knob", "progress", "done", "metrics", "loader", "flops", "trace", "flags", "files".
std::string_view MessageTypeName(MessageType type);

// The training DataLoader as the automatic instrumentation identified it at the first training step (a `loader`
// message). Every field is optional on the wire: one that was not sent (or was null) stays absent.
struct LoaderInfo {
  std::optional<std::string> key;   // "train.py:57#0": where it was built, and which loader built there
  std::optional<std::string> site;  // "train.py:57"; both absent when the step had no DataLoader
  std::optional<std::string> dataset;  // the dataset's class name
  std::optional<bool> iterable;        // an IterableDataset
  std::optional<int64_t> num_workers;
  std::optional<bool> pin_memory;
  std::optional<int64_t> batch_size;       // absent with a batch_sampler
  std::optional<int64_t> prefetch_factor;  // absent without workers
  std::optional<bool> persistent_workers;
  std::optional<bool> drop_last;
  std::map<std::string, nlohmann::json> injected;  // knob name -> the value saturate set on the loader
  std::optional<std::string> samples_from;  // "loader", "model_input", "flag" or "steps"
  std::optional<std::string> step_at;       // "optimizer" or "backward"
  std::optional<int64_t> others;            // other loaders seen so far (validation, test), left out
  // Samples in an epoch's last batch in the sending process when smaller than batch_size (no drop_last), from the
  // sampler's length: a DistributedSampler's share, not the whole dataset.
  std::optional<int64_t> last_batch;
  std::optional<bool> batchnorm;  // the model has BatchNorm layers; absent when no model was found
  std::optional<int64_t> epoch_samples;  // samples in one epoch in the sending process (its sampler's length)
};

// The sender's place in a distributed job (torch.distributed once initialised, else RANK/WORLD_SIZE/LOCAL_RANK,
// SLURM_PROCID/SLURM_NTASKS or OMPI_COMM_WORLD_*). Absent for a single-process run.
struct RankInfo {
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;
};

// The FLOPs of one training step (forward + backward), counted by the helper during the first step (a `flops`
// message; python/saturate/_flops.py).
struct FlopsInfo {
  double per_step = 0;    // FLOPs, a multiply-add counting 2
  double per_sample = 0;  // per_step over the samples of the counted step
  double samples = 0;     // in the counted step
  std::string method;     // "flop_counter" (torch FlopCounterMode, as run) or "module_hooks" (3 x forward)
  std::string dtype;      // the products' dtype: "fp32", "bf16", "fp16", "fp64", or torch's name for another
  bool tf32 = false;      // fp32 on a GPU with TF32 allowed for the dominant work
  std::string device;     // "cuda", "cpu", ...
  // Set instead of the fields above when the helper chose not to count, and why (a compiled model: counting
  // would keep torch.compile from compiling it).
  std::string skipped;
};

// Where the helper wrote the profiler's Chrome trace (a `trace` message; python/saturate/_trace.py).
struct TraceInfo {
  std::optional<std::string> path;  // absent when no trace was written
  int64_t steps = 0;                // profiled steps in it
  std::optional<std::string> error;  // why there is none
};

// Data files the sending process opened for reading, as its audit hook sampled them (a `files` message;
// python/saturate/_files.py): paths new since its previous `files` message, and its data-file opens so far.
struct FilesInfo {
  std::vector<std::string> paths;   // absolute
  std::vector<std::string> writes;  // absolute: files it opened for writing (checkpoints, logs), new ones only
  int64_t opens = 0;                // cumulative, in the sending process
};

// One of the script's own command-line options as its parser parsed it (a `flags` message;
// python/saturate/_flags.py).
struct FlagOption {
  std::string dest;                  // the attribute it sets ("batch_size")
  std::vector<std::string> strings;  // its spellings, as declared ("--batch-size", "--bs")
  // "value" (--x V), "store_true", "store_false" (present or absent), "boolean_optional" (--x / --no-x)
  std::string kind;
  nlohmann::json value, default_value;  // what it parsed to, and its default (null: not a short scalar)
  bool given = false;                   // one of its spellings is on the command line
};

// The option as the `flags` message spells it, and back (an error names the first bad field).
nlohmann::json FlagOptionJson(const FlagOption& o);
Result<FlagOption> FlagOptionFromJson(const nlohmann::json& j);

// Fields not sent for a type keep their defaults. Times in seconds; `t` is CLOCK_MONOTONIC
// (std::chrono::steady_clock). Counters are cumulative since the sending process started tracking.
struct HelperMessage {
  MessageType type = MessageType::kProgress;
  std::string run;  // SATURATE_RUN_ID of the sender, "" when it had none
  int64_t pid = 0;
  double t = 0;

  // hello
  std::string mode, python, device;
  std::optional<std::string> torch;  // version; nullopt without torch

  // hello and loader: the sender's rank and world size, when it is one of several ranks
  std::optional<RankInfo> rank_info;

  // hello and knob: "auto": true, sent by the automatic instrumentation rather than `import saturate`
  bool automatic = false;

  // knob
  std::string knob_name;
  nlohmann::json knob_value, knob_default;  // what the script got, and its own default
  std::string knob_source;                  // "saturate" (from SATURATE_KNOBS) or "default"
  std::optional<std::string> knob_error;    // why saturate's value for it could not be used
  std::optional<std::string> knob_flag;     // the script's own option that sets it (saturate.knob(..., flag=))

  // progress and done
  int64_t steps = 0;
  double samples = 0;
  double wait_s = 0;                     // waiting for the loader
  double step_s = 0;                     // between handing a batch over and the request for the next one
  std::map<std::string, double> phases;  // seconds inside `with saturate.phase(name)`
  std::optional<int64_t> mem_allocated_bytes, mem_reserved_bytes, mem_peak_bytes;  // CUDA only
  std::map<std::string, double> metrics;  // numeric values the script reported; nulls left out
  // Automatic instrumentation only: seconds spent in other loaders (validation) between training steps; the
  // time between two reports minus its growth is training time.
  std::optional<double> excluded_s;
  // Automatic instrumentation only: seconds from each step's start to its last backward() call, data wait
  // included: where a distributed step meets the other ranks (docs/helper-protocol.md).
  std::optional<double> before_backward_s;
  std::optional<int64_t> rank;  // the sender's rank, when it is one of several

  // done
  std::string done_reason;  // "exhausted", "loader-drained", "exit", "no-loader"

  // loader
  LoaderInfo loader;

  // flops
  FlopsInfo flops;

  // trace
  TraceInfo trace;

  // files
  FilesInfo files;

  // flags: the parser ("argparse") and its options (a long list comes in several messages)
  std::string flags_parser;
  std::vector<FlagOption> flag_options;

  nlohmann::json raw;  // the whole message as received
};

// Parses one datagram. The error names the first problem: not JSON, another protocol version, an unknown type, a
// missing or mistyped field, a negative counter. A null optional field counts as absent (the helper sends NaN as
// null); unknown extra fields are accepted and kept in `raw`.
Result<HelperMessage> ParseHelperMessage(std::string_view datagram);

}  // namespace sat::measure
