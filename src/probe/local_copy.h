// probe's local-copy what-if: what the loader alone would reach reading a local copy of the run's data, and what
// the copy costs, measured on a sample of the run's own files (datastore/cold_read.h: each read cold from where it
// lives and from a local copy) and the loader stage's CPU per sample (datastore::EstimateLocalCopy).
//
// "a local copy of 12.4 GiB takes ~2 min on this link; the loader alone would reach ~1,840 samples/s (~610 while
// the copy is read cold), 9.2x today's": the copy's time is the whole data folder at the sample's cold read pace;
// the headline rate is the warm one when the data fits in half the memory available (after its first epoch a local
// copy is read from the page cache), else the cold one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "datastore/cold_read.h"
#include "datastore/storage_wait.h"
#include "util/result.h"

namespace sat::probe {

using datastore::LoaderActivity;

// The estimates are the storage rule's (datastore/storage_wait.h: EstimateLocalCopy).
using datastore::EstimateLocalCopy;
using datastore::LocalCopyEstimate;
using datastore::ReadCpuPerSample;

struct LocalCopyWhatIf {
  datastore::ColdReadComparison reads;  // the sample, cold from the source and from a local copy
  std::string root;                 // the data's folder: the path argument holding the files, else their common folder
  std::optional<uint64_t> total_bytes;  // of everything under root (datastore/manifest.h ScanSource); nullopt: not listed
  std::optional<size_t> total_files;
  std::string total_why_not;            // why root could not be listed
  std::optional<double> copy_s;         // the whole root at the sample's source pace (datastore::CopySecondsAtPace)
  double loader_now = 0;                // the loader stage's samples/s on the source
  LocalCopyEstimate estimate;
  bool fits_in_memory = false;          // total_bytes under half the host's available memory
  double Headline() const { return fits_in_memory ? estimate.warm_samples_per_s : estimate.cold_samples_per_s; }
};

struct LocalCopyInputs {
  std::vector<std::string> files;           // the run's data files (a sample)
  std::vector<std::string> path_arguments;  // existing paths on the command line, absolute
  LoaderActivity loader;                    // the loader stage on the source
  double files_per_sample = 1;              // data-file opens per sample (the helper's count), 1 when unknown
  unsigned cores = 0;
  std::optional<uint64_t> mem_available_bytes;
};

// The what-if from `reads` (datastore::CompareColdReads of the run's files, which probe makes once for the storage rule
// and this), listing the data's folder for the copy's size. Error: the loader stage measured no rate or CPU.
Result<LocalCopyWhatIf> LocalCopyFrom(const LocalCopyInputs& in, const datastore::ColdReadComparison& reads);

// The data's folder for `files`: the first of `path_arguments` that is a folder holding every one of them, else
// their deepest common folder; "" for no files.
std::string DataRoot(const std::vector<std::string>& files, const std::vector<std::string>& path_arguments);

// "a local copy of 1.2 MiB (300 files) takes ~6 s on this link; the loader alone would reach ~810 samples/s (~300
// read cold), 20x today's 40 samples/s (cold reads of 32 files: 21 ms each from the source, 0.2 ms from a local
// copy in /root/.cache/saturate)".
std::string LocalCopyText(const LocalCopyWhatIf& w);
nlohmann::ordered_json LocalCopyJson(const LocalCopyWhatIf& w);

// "6 s", "2 min", "1.5 h".
std::string FormatRoughDuration(double seconds);

}  // namespace sat::probe
