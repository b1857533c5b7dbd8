#include "datastore/store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "datastore/record.h"
#include "datastore/store_folder.h"
#include "datastore/store_room.h"
#include "datastore/tree_at.h"
#include "util/atomic_file.h"
#include "util/cache_home.h"
#include "util/strings.h"
#include "util/unique_fd.h"
#include "util/utf8.h"

namespace sat::datastore {

const char* PhaseName(Progress::Phase p) {
  switch (p) {
    case Progress::Phase::kScanning: return "scanning";
    case Progress::Phase::kWaiting: return "waiting";
    case Progress::Phase::kCopying: return "copying";
    case Progress::Phase::kVerifying: return "verifying";
    case Progress::Phase::kDone: return "done";
  }
  return "scanning";
}

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kChunk = 1 << 20;
// The free space is looked at every this many chunks a thread copies (and before each file).
constexpr uint64_t kReserveEveryChunks = 16;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

Error SystemError(const std::string& what, const std::string& path, int err) {
  return Error{fmt::format("stage store: cannot {} {}: {}", what, VisibleText(path), std::strerror(err))};
}

Error InterruptError() { return Error{"staging interrupted; the partial copy is kept and resumed next time", 130}; }

// A copy's permissions: the source's, less every write bit and the set-id bits (copies are read-only, and no run
// changes what the next one reads), with what the owner needs to read it.
uint32_t CopyMode(uint32_t mode, bool folder) { return (mode & 0555) | (folder ? 0500 : 0400); }

std::string BaseName(const Manifest& m) { return fs::path(m.source).filename().string(); }
// Where an entry's copy is, below <key>.data or <key>.partial.
std::string CopyRel(const Manifest& m, const Entry& e) { return e.rel.empty() ? BaseName(m) : BaseName(m) + "/" + e.rel; }
std::string SourcePath(const Manifest& m, const Entry& e) { return e.rel.empty() ? m.source : m.source + "/" + e.rel; }

bool ExistsAt(int dir_fd, const std::string& name) {
  struct stat st {};
  return fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// How the listing of a copy differs from the manifest of its source, for a sentence; "" when it does not.
std::string CopyDiffers(const Manifest& source, const Manifest& copy) {
  if (source.single_file != copy.single_file) return "a file and a folder";
  if (copy.mode != CopyMode(source.mode, !source.single_file)) {
    return fmt::format("its mode is {:04o}, not {:04o}", copy.mode, CopyMode(source.mode, !source.single_file));
  }
  const char* kTypes[] = {"file", "folder", "link"};
  for (size_t i = 0; i < std::max(source.entries.size(), copy.entries.size()); ++i) {
    if (i >= copy.entries.size() || (i < source.entries.size() && source.entries[i].rel < copy.entries[i].rel)) {
      return fmt::format("{} is missing from it", VisibleText(source.entries[i].rel));
    }
    const Entry& b = copy.entries[i];
    if (i >= source.entries.size() || source.entries[i].rel != b.rel) {
      return fmt::format("{} was added to it", VisibleText(b.rel));
    }
    const Entry& a = source.entries[i];
    const std::string name = a.rel.empty() ? "the file" : VisibleText(a.rel);
    if (a.type != b.type) {
      return fmt::format("{} is a {} in it, a {} in the data", name, kTypes[static_cast<int>(b.type)],
                         kTypes[static_cast<int>(a.type)]);
    }
    if (a.size != b.size) return fmt::format("{} holds {} bytes, not {}", name, b.size, a.size);
    if (a.mtime_ns != b.mtime_ns) return fmt::format("{} was modified after it was copied", name);
    if (a.target != b.target) return fmt::format("{} points to {}, not {}", name, VisibleText(b.target), VisibleText(a.target));
    if (a.type != Entry::Type::kLink && b.mode != CopyMode(a.mode, a.type == Entry::Type::kDir)) {
      return fmt::format("{} has mode {:04o}, not {:04o}", name, b.mode, CopyMode(a.mode, a.type == Entry::Type::kDir));
    }
  }
  return "";
}

enum class FileOutcome { kCopied, kChanged, kFailed, kCancelled };

}  // namespace

// Acquire's steps for one source; a class so that the copying threads share its counters.
class StoreImpl {
 public:
  StoreImpl(std::string source, const StoreOptions& o) : source_(std::move(source)), o_(o), t0_(Clock::now()) {}

  // The copy, made when missing unless `make` is false (then nullopt).
  Result<std::optional<Lease>> Acquire(bool make);

 private:
  struct Locks {
    UniqueFd lock, use;
  };
  enum class Made { kOk, kRedo };
  // What the store holds for a key: nothing usable (no record, or a record of other data), a copy that matches
  // its record and the data, or one that differs from them (written into, truncated, altered).
  enum class Held { kNone, kGood, kBad };
  // Reading a copy's files back against checksums.
  struct Readback {
    enum class Verdict { kSame, kDiffers, kCancelled } verdict = Verdict::kSame;
    std::string what;  // for kDiffers
  };

  std::string Name(const std::string& key, const char* suffix) const { return key + suffix; }
  std::string P(const std::string& key, const char* suffix) const { return o_.root + "/" + key + suffix; }
  Status OutsideTheSource(const Manifest& m) const;
  Status LockKey(const std::string& key, Locks& locks);
  Held Check(const std::string& key, const Manifest& m, std::string* why);
  Status Discard(const std::string& key, Locks& locks);
  Result<Made> Copy(const std::string& key, const Manifest& m, std::vector<std::optional<uint64_t>>* xxh3);
  FileOutcome CopyFile(const Manifest& m, const Entry& e, int src_top, int dst_root, uint64_t* xxh, Error* error);
  Readback ReadBack(int copy_fd, const Manifest& m, const std::vector<std::optional<uint64_t>>& xxh3);
  Status SealCopy(int partial_fd, const Manifest& m);
  std::optional<uint64_t> FreeBytes() const { return StoreFreeBytes(o_); }
  std::optional<Error> BelowReserve() const;
  Lease Hand(Locks& locks, const std::string& key, const Manifest& m, bool reused);
  void Report(Progress::Phase phase);
  bool Cancelled() const { return o_.cancelled && o_.cancelled(); }

  std::string source_;
  const StoreOptions& o_;
  UniqueFd root_;  // the store folder, checked (datastore/store_folder.h); every store file is reached through it
  Clock::time_point t0_;
  double copy_s_ = 0;
  std::atomic<uint64_t> bytes_done_{0}, copied_{0};
  std::atomic<size_t> files_done_{0};
  uint64_t bytes_total_ = 0;
  size_t files_total_ = 0;
  std::vector<std::string> warnings_;
  std::mutex report_mu_, log_mu_;
};

void StoreImpl::Report(Progress::Phase phase) {
  if (!o_.on_progress) return;
  std::lock_guard<std::mutex> lock(report_mu_);
  Progress p;
  p.phase = phase;
  p.bytes_done = bytes_done_;
  p.bytes_total = bytes_total_;
  p.files_done = files_done_;
  p.files_total = files_total_;
  p.elapsed_s = SecondsSince(t0_);
  o_.on_progress(p);
}

// A store inside the data would copy itself into itself (and the data would seem to change while it is copied).
Status StoreImpl::OutsideTheSource(const Manifest& m) const {
  if (m.single_file) return Status::Ok();
  std::error_code ec;
  const std::string root = fs::weakly_canonical(fs::absolute(o_.root, ec), ec).string();
  if (ec || (root != m.source && !root.starts_with(m.source + "/"))) return Status::Ok();
  return UsageError(fmt::format("stage folder {} lies inside the staged path {}: the copy would hold itself. Give a "
                                "folder outside it with --stage-dir (saturate.stage_dir)",
                                o_.root, source_));
}

std::optional<Error> StoreImpl::BelowReserve() const {
  const auto free = FreeBytes();
  if (!free || *free >= o_.reserve_bytes) return std::nullopt;
  return Error{fmt::format("stage store: only {} is free on the filesystem of {}, less than the {} kept free "
                           "(something else is filling it): the copy of {} stopped; the partial copy is kept and "
                           "resumed next time",
                           FormatBytes(*free), o_.root, FormatBytes(o_.reserve_bytes), source_)};
}

// The key's lock (waiting for another copier, cancellably) and a use lease on it.
Status StoreImpl::LockKey(const std::string& key, Locks& locks) {
  auto lock_fd = OpenStoreFile(root_.get(), Name(key, ".lock"), o_.root);
  if (!lock_fd) return lock_fd.error();
  locks.lock = std::move(*lock_fd);
  bool reported = false;
  while (flock(locks.lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return SystemError("lock", P(key, ".lock"), errno);
    if (!reported) Report(Progress::Phase::kWaiting);
    reported = true;
    if (Cancelled()) return InterruptError();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto use_fd = OpenStoreFile(root_.get(), Name(key, ".use"), o_.root);
  if (!use_fd) return use_fd.error();
  locks.use = std::move(*use_fd);
  // Only an evicting copier takes it exclusively, and only without waiting, under the key's lock we hold.
  if (flock(locks.use.get(), LOCK_SH) != 0) return SystemError("lock", P(key, ".use"), errno);
  return Status::Ok();
}

// Whether the store's copy of `m` may be handed out: its record names exactly this data, and the copy on disk is
// what the record says (every entry's type, size, mtime, mode and link target, nothing added; with
// verify_checksums every file's bytes too). A run may have written into a copy, or someone changed it: that copy
// is kBad, never handed out.
StoreImpl::Held StoreImpl::Check(const std::string& key, const Manifest& m, std::string* why) {
  auto text = ReadStoreFile(root_.get(), Name(key, ".json"));
  if (!text) return Held::kNone;
  auto record = ParseRecord(*text);
  if (!record) {
    warnings_.push_back(fmt::format("stage store: {} is not a record saturate can read ({}); its copy is made again",
                                    P(key, ".json"), record.error().message));
    return Held::kNone;
  }
  if (!(record->manifest == m)) return Held::kNone;
  UniqueFd data = OpenFolderBeneath(root_.get(), Name(key, ".data"));
  if (!data.valid()) return Held::kNone;
  auto copy = ScanSource(P(key, ".data") + "/" + BaseName(m));
  if (!copy) {
    *why = copy.error().message;
    return Held::kBad;
  }
  if (*why = CopyDiffers(m, *copy); !why->empty()) return Held::kBad;
  if (!o_.verify_checksums) return Held::kGood;
  if (record->xxh3.size() != m.entries.size()) {
    *why = "its record has no checksums (an older saturate made it)";
    return Held::kBad;
  }
  Report(Progress::Phase::kVerifying);
  const Readback back = ReadBack(data.get(), m, record->xxh3);
  if (back.verdict == Readback::Verdict::kSame) return Held::kGood;
  *why = back.verdict == Readback::Verdict::kCancelled ? "its check was interrupted" : back.what;
  return Held::kBad;
}

// Removes the key's copy and record (under its lock), so that it can be made again. A copy someone reads is kept.
Status StoreImpl::Discard(const std::string& key, Locks& locks) {
  if (!ExistsAt(root_.get(), Name(key, ".data")) && !ExistsAt(root_.get(), Name(key, ".json"))) return Status::Ok();
  if (flock(locks.use.get(), LOCK_EX | LOCK_NB) != 0) {
    (void)flock(locks.use.get(), LOCK_SH);
    return Error{fmt::format("stage store: the copy at {} is not the data of {} as it is now, and another run reads "
                             "it, so it cannot be made again yet; wait for that run to end, or remove the copy",
                             P(key, ".data"), source_)};
  }
  int err = RemoveTreeAt(root_.get(), Name(key, ".json"));
  if (err == 0) err = RemoveTreeAt(root_.get(), Name(key, ".data"));
  (void)flock(locks.use.get(), LOCK_SH);
  if (err != 0) return SystemError("remove", P(key, ".data"), err);
  return Status::Ok();
}

FileOutcome StoreImpl::CopyFile(const Manifest& m, const Entry& e, int src_top, int dst_root, uint64_t* xxh,
                                Error* error) {
  // Through the folders as listed, none followed if it became a link; the file opened without blocking, so a
  // FIFO or device swapped in is seen (not a regular file) instead of hanging the copy or filling the disk.
  const std::string src_path = SourcePath(m, e), dst_path = o_.root + "/" + CopyRel(m, e);
  const std::string src_rel = m.single_file ? BaseName(m) : e.rel, dst_rel = CopyRel(m, e);
  const auto [src_dir, src_leaf] = SplitLast(src_rel);
  UniqueFd src_parent = OpenFolderBeneath(src_top, src_dir);
  if (!src_parent.valid()) return FileOutcome::kChanged;
  UniqueFd in(openat(src_parent.get(), std::string(src_leaf).c_str(),
                     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!in.valid()) {
    if (errno == ENOENT || errno == ELOOP || errno == ENXIO || errno == ENOTDIR) return FileOutcome::kChanged;
    *error = SystemError("read", src_path, errno);
    return FileOutcome::kFailed;
  }
  struct stat st {};
  if (fstat(in.get(), &st) != 0) {
    *error = SystemError("read", src_path, errno);
    return FileOutcome::kFailed;
  }
  if (!S_ISREG(st.st_mode)) return FileOutcome::kChanged;
  // Reads of a regular file may block again.
  if (const int flags = fcntl(in.get(), F_GETFL); flags >= 0) (void)fcntl(in.get(), F_SETFL, flags & ~O_NONBLOCK);

  const auto [dst_dir, dst_leaf] = SplitLast(dst_rel);
  UniqueFd dst_parent = OpenFolderBeneath(dst_root, dst_dir);
  const std::string leaf(dst_leaf);
  if (dst_parent.valid()) (void)RemoveTreeAt(dst_parent.get(), leaf);  // a file of a killed copy, maybe read-only
  UniqueFd out(dst_parent.valid() ? openat(dst_parent.get(), leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
                                  : -1);
  if (!out.valid()) {
    *error = SystemError("write", dst_path, errno);
    return FileOutcome::kFailed;
  }
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) {
    *error = SystemError("copy", src_path, ENOMEM);
    return FileOutcome::kFailed;
  }
  XXH3_64bits_reset(state);
  std::vector<char> buf(kChunk);
  uint64_t total = 0;
  FileOutcome outcome = FileOutcome::kCopied;
  for (uint64_t chunk = 0;; ++chunk) {
    if (Cancelled()) {
      outcome = FileOutcome::kCancelled;
      break;
    }
    if (chunk % kReserveEveryChunks == 0) {
      if (auto low = BelowReserve()) {
        *error = *low;
        outcome = FileOutcome::kFailed;
        break;
      }
    }
    // One byte past the listed size tells a file that grew: nothing past the manifest's size is ever copied.
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, e.size - std::min(total, e.size) + 1));
    const ssize_t n = read(in.get(), buf.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = SystemError("read", src_path, errno);
      outcome = FileOutcome::kFailed;
      break;
    }
    if (n == 0) break;
    if (total + static_cast<uint64_t>(n) > e.size) {
      outcome = FileOutcome::kChanged;
      break;
    }
    XXH3_64bits_update(state, buf.data(), static_cast<size_t>(n));
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = write(out.get(), buf.data() + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        *error = SystemError("write", dst_path, errno);
        outcome = FileOutcome::kFailed;
        break;
      }
      off += w;
    }
    if (outcome != FileOutcome::kCopied) break;
    total += static_cast<uint64_t>(n);
    bytes_done_ += static_cast<uint64_t>(n);
    copied_ += static_cast<uint64_t>(n);
  }
  *xxh = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  // The file changed while it was read (or since the listing): the copy would mix two versions.
  if (outcome == FileOutcome::kCopied &&
      (fstat(in.get(), &st) != 0 || total != e.size || static_cast<uint64_t>(st.st_size) != e.size ||
       static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec != e.mtime_ns)) {
    outcome = FileOutcome::kChanged;
  }
  if (outcome == FileOutcome::kCopied) {
    // This file on disk (not the whole machine's: no sync()); then the source's time and read-only permissions.
    const timespec times[2] = {st.st_atim, st.st_mtim};
    if (fdatasync(out.get()) != 0 || futimens(out.get(), times) != 0 || fchmod(out.get(), CopyMode(e.mode, false)) != 0) {
      *error = SystemError("write", dst_path, errno);
      outcome = FileOutcome::kFailed;
    }
  }
  if (close(out.Release()) != 0 && outcome == FileOutcome::kCopied) {
    *error = SystemError("write", dst_path, errno);
    outcome = FileOutcome::kFailed;
  }
  return outcome;
}

// Copies what the partial folder lacks, lists the source again, and reads every file back against its checksum.
// `xxh3` gets each entry's checksum for the record.
Result<StoreImpl::Made> StoreImpl::Copy(const std::string& key, const Manifest& m,
                                        std::vector<std::optional<uint64_t>>* xxh3) {
  const std::string partial = Name(key, ".partial"), log_name = Name(key, ".partial.log");
  // The log first: a partial folder is the store's own only with a log whose header names its key.
  PartialLog log = ParsePartialLog(ReadStoreFile(root_.get(), log_name).value_or(""));
  UniqueFd log_fd;
  if (log.key == key) {
    log_fd = UniqueFd(openat(root_.get(), log_name.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
  } else {
    log.files.clear();  // no log of this key: nothing in a partial folder is trusted
    (void)RemoveTreeAt(root_.get(), log_name);
    log_fd = UniqueFd(openat(root_.get(), log_name.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    const std::string header = PartialLogHeader(key);
    if (log_fd.valid() && write(log_fd.get(), header.data(), header.size()) != static_cast<ssize_t>(header.size())) {
      return SystemError("write", P(key, ".partial.log"), errno);
    }
  }
  if (!log_fd.valid()) return SystemError("open", P(key, ".partial.log"), errno);
  UniqueFd partial_fd = OpenFolderBeneath(root_.get(), partial, true);
  if (!partial_fd.valid()) return SystemError("create", P(key, ".partial"), errno);
  MakeFoldersWritable(partial_fd.get());  // a killed copy may have made some read-only already

  // Folders and links first; then the files a killed copy did not finish.
  std::vector<size_t> todo;
  if (!m.single_file && !OpenFolderBeneath(partial_fd.get(), BaseName(m), true).valid()) {
    return SystemError("create", P(key, ".partial/") + BaseName(m), errno);
  }
  for (size_t i = 0; i < m.entries.size(); ++i) {
    const Entry& e = m.entries[i];
    const std::string rel = CopyRel(m, e);
    if (e.type == Entry::Type::kDir) {
      if (!OpenFolderBeneath(partial_fd.get(), rel, true).valid()) return SystemError("create", P(key, ".partial/") + rel, errno);
      continue;
    }
    const auto [dir, leaf_view] = SplitLast(rel);
    const std::string leaf(leaf_view);
    UniqueFd parent = OpenFolderBeneath(partial_fd.get(), dir);
    if (!parent.valid()) return SystemError("create", P(key, ".partial/") + rel, errno);
    if (e.type == Entry::Type::kLink) {
      (void)RemoveTreeAt(parent.get(), leaf);
      if (symlinkat(e.target.c_str(), parent.get(), leaf.c_str()) != 0) {
        return SystemError("create the link", P(key, ".partial/") + rel, errno);
      }
      continue;
    }
    auto it = log.files.find(e.rel);
    struct stat st {};
    if (it != log.files.end() && it->second.size == e.size && it->second.mtime_ns == e.mtime_ns &&
        fstatat(parent.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        static_cast<uint64_t>(st.st_size) == e.size) {
      bytes_done_ += e.size;
      ++files_done_;
      continue;
    }
    if (it != log.files.end()) log.files.erase(it);
    todo.push_back(i);
  }

  // The source through descriptors from "/" down, so a folder of it swapped for a link is never followed.
  UniqueFd src_top = OpenFolderPath(m.single_file ? fs::path(m.source).parent_path().string() : m.source);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false}, changed{!src_top.valid()}, cancelled{false};
  std::optional<Error> failure;
  std::mutex failure_mu;
  auto fail = [&](Error error) {
    std::lock_guard<std::mutex> lock(failure_mu);
    if (!failure) failure = std::move(error);
    stop = true;
  };
  // No exception leaves a copying thread: one would end saturate (std::terminate) in the middle of a sweep.
  auto worker = [&]() {
    try {
      for (size_t i = next++; i < todo.size() && !stop; i = next++) {
        const Entry& e = m.entries[todo[i]];
        uint64_t xxh = 0;
        Error error;
        const FileOutcome outcome = CopyFile(m, e, src_top.get(), partial_fd.get(), &xxh, &error);
        if (outcome != FileOutcome::kCopied) {
          if (outcome == FileOutcome::kChanged) changed = true;
          if (outcome == FileOutcome::kCancelled) cancelled = true;
          if (outcome == FileOutcome::kFailed) fail(error);
          stop = true;
          return;
        }
        {
          std::lock_guard<std::mutex> lock(log_mu_);
          const LoggedFile whole{e.size, e.mtime_ns, xxh};
          log.files[e.rel] = whole;
          const std::string line = PartialLogLine(e.rel, whole);
          (void)!write(log_fd.get(), line.data(), line.size());
        }
        const size_t done = ++files_done_;
        Report(Progress::Phase::kCopying);
        if (o_.after_file) o_.after_file(done);
      }
    } catch (const std::exception& ex) {
      fail(Error{fmt::format("stage store: internal error while copying {}: {}", source_, ex.what())});
    }
  };
  if (!changed) {
    const int threads = std::clamp(o_.threads, 1, 64);
    std::vector<std::thread> pool;
    for (int t = 0; t < std::min<int>(threads, static_cast<int>(todo.size())); ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }
  if (cancelled) return InterruptError();
  if (failure) return *failure;

  // Data that changed while it was copied: this copy is discarded and made again from a new listing.
  if (!changed) {
    auto again = ScanSource(m.source);
    changed = !again || !(*again == m);
  }
  xxh3->assign(m.entries.size(), std::nullopt);
  for (size_t i = 0; i < m.entries.size(); ++i) {
    auto it = log.files.find(m.entries[i].rel);
    if (m.entries[i].type == Entry::Type::kFile && it != log.files.end()) (*xxh3)[i] = it->second.xxh3;
  }
  Readback back;
  if (!changed) {
    Report(Progress::Phase::kVerifying);
    back = ReadBack(partial_fd.get(), m, *xxh3);
    if (back.verdict == Readback::Verdict::kCancelled) return InterruptError();
  }
  if (changed || back.verdict != Readback::Verdict::kSame) {
    (void)RemoveTreeAt(root_.get(), partial);
    (void)RemoveTreeAt(root_.get(), log_name);
    return Made::kRedo;
  }
  if (auto s = SealCopy(partial_fd.get(), m); !s) return s.error();
  return Made::kOk;
}

// Every file of the copy under `copy_fd` (<key>.partial or <key>.data) read back against its checksum.
StoreImpl::Readback StoreImpl::ReadBack(int copy_fd, const Manifest& m, const std::vector<std::optional<uint64_t>>& xxh3) {
  std::vector<char> buf(kChunk);
  for (size_t i = 0; i < m.entries.size(); ++i) {
    const Entry& e = m.entries[i];
    if (e.type != Entry::Type::kFile) continue;
    const std::string rel = CopyRel(m, e);
    const auto [dir, leaf] = SplitLast(rel);
    UniqueFd parent = OpenFolderBeneath(copy_fd, dir);
    UniqueFd fd(parent.valid() ? openat(parent.get(), std::string(leaf).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1);
    struct stat st {};
    if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || i >= xxh3.size() || !xxh3[i]) {
      return {Readback::Verdict::kDiffers, fmt::format("{} cannot be read back", VisibleText(rel))};
    }
    XXH3_state_t* state = XXH3_createState();
    if (state == nullptr) return {Readback::Verdict::kDiffers, "no memory to read it back"};
    XXH3_64bits_reset(state);
    uint64_t total = 0;
    ssize_t n = 0;
    bool cancelled = false;
    while ((n = read(fd.get(), buf.data(), buf.size())) > 0 || (n < 0 && errno == EINTR)) {
      if (Cancelled()) {
        cancelled = true;
        break;
      }
      if (n < 0) continue;
      XXH3_64bits_update(state, buf.data(), static_cast<size_t>(n));
      total += static_cast<uint64_t>(n);
    }
    const uint64_t xxh = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    if (cancelled) return {Readback::Verdict::kCancelled, ""};
    if (n < 0 || total != e.size || xxh != *xxh3[i]) {
      return {Readback::Verdict::kDiffers, fmt::format("{}: its bytes differ from those copied", VisibleText(rel))};
    }
  }
  return {};
}

// The copy made read-only (folders keep the source's permissions less write; files got theirs as copied) and
// its folders synced, deepest first, so that the rename into place publishes a copy that is on disk.
Status StoreImpl::SealCopy(int partial_fd, const Manifest& m) {
  auto seal = [&](const std::string& rel, uint32_t mode) -> Status {
    UniqueFd dir = OpenFolderBeneath(partial_fd, rel);
    if (!dir.valid() || fsync(dir.get()) != 0 || fchmod(dir.get(), mode) != 0) {
      return SystemError("finish", o_.root + "/" + rel, errno);
    }
    return Status::Ok();
  };
  for (auto it = m.entries.rbegin(); it != m.entries.rend(); ++it) {
    if (it->type != Entry::Type::kDir) continue;
    if (auto s = seal(CopyRel(m, *it), CopyMode(it->mode, true)); !s) return s;
  }
  if (!m.single_file) {
    if (auto s = seal(BaseName(m), CopyMode(m.mode, true)); !s) return s;
  }
  if (fsync(partial_fd) != 0) return SystemError("finish", o_.root, errno);
  return Status::Ok();
}

Lease StoreImpl::Hand(Locks& locks, const std::string& key, const Manifest& m, bool reused) {
  // The use file's time is the copy's last use, which eviction orders by.
  futimens(locks.use.get(), nullptr);
  Lease lease;
  lease.use_fd_ = locks.use.Release();
  lease.path_ = P(key, ".data") + "/" + BaseName(m);
  lease.source_ = m.source;
  lease.bytes_ = m.total_bytes;
  lease.files_ = m.file_count;
  lease.reused_ = reused;
  lease.copy_s_ = reused ? 0 : copy_s_;
  lease.copied_ = copied_;
  lease.warnings_ = std::move(warnings_);
  bytes_done_ = m.total_bytes;
  files_done_ = m.file_count;
  Report(Progress::Phase::kDone);
  return lease;
}

Result<std::optional<Lease>> StoreImpl::Acquire(bool make) {
  Report(Progress::Phase::kScanning);
  auto m = ScanSource(source_);
  if (!m) return m.error();
  if (auto s = OutsideTheSource(*m); !s) return s.error();
  // Only looking: a store that is not there holds no copy, and looking creates nothing.
  auto root = OpenStoreFolder(o_.root, make);
  if (!root) return root.error();
  if (!*root) return std::optional<Lease>();
  root_ = std::move(**root);
  const int tries = std::max(1, o_.max_tries);
  for (int attempt = 1; attempt <= tries; ++attempt) {
    if (attempt > 1) {
      Report(Progress::Phase::kScanning);
      m = ScanSource(source_);
      if (!m) return m.error();
    }
    const std::string key = m->Key();
    bytes_total_ = m->total_bytes;
    files_total_ = m->file_count;
    bytes_done_ = 0;
    files_done_ = 0;
    if (!make && !ExistsAt(root_.get(), Name(key, ".json"))) return std::optional<Lease>();
    Locks locks;
    if (auto s = LockKey(key, locks); !s) return s.error();
    std::string why;
    const Held held = Check(key, *m, &why);
    if (held == Held::kGood) return std::optional(Hand(locks, key, *m, true));
    if (!make) return std::optional<Lease>();
    if (held == Held::kBad) {
      warnings_.push_back(fmt::format("the copy of {} in the store ({}) differs from the data it was made of ({}); "
                                      "it was made again",
                                      source_, P(key, ".data"), why));
    }
    // A copy without a usable record (a kill between the rename and the record, a record of other data) or one
    // that differs goes; a partial copy stays, to be resumed.
    if (auto s = Discard(key, locks); !s) return s.error();
    if (auto s = MakeRoom(root_.get(), o_, source_, key, *m, &warnings_); !s) return s.error();

    const auto copy_t0 = Clock::now();
    Report(Progress::Phase::kCopying);
    Record record;
    auto made = Copy(key, *m, &record.xxh3);
    copy_s_ += SecondsSince(copy_t0);
    if (!made) return made.error();
    if (*made == Made::kRedo) continue;

    // Whole, verified and on disk: into place (read-only), then the record that says so.
    if (renameat(root_.get(), Name(key, ".partial").c_str(), root_.get(), Name(key, ".data").c_str()) != 0) {
      return SystemError("rename", P(key, ".partial"), errno);
    }
    if (UniqueFd data = OpenFolderBeneath(root_.get(), Name(key, ".data")); data.valid()) (void)fchmod(data.get(), 0500);
    record.manifest = *m;
    record.copy_s = copy_s_;
    record.made_unix = std::time(nullptr);
    if (auto s = WriteFileAtomically(P(key, ".json"), RecordText(record), 0600); !s) return s.error();
    (void)RemoveTreeAt(root_.get(), Name(key, ".partial.log"));
    (void)fsync(root_.get());
    return std::optional(Hand(locks, key, *m, false));
  }
  return Error{fmt::format("stage path {} kept changing while it was copied ({} tries); stage it once it is "
                           "stable",
                           source_, tries)};
}

Lease::Lease(Lease&& other) noexcept { *this = std::move(other); }

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    if (use_fd_ >= 0) close(use_fd_);
    use_fd_ = std::exchange(other.use_fd_, -1);
    path_ = std::move(other.path_);
    source_ = std::move(other.source_);
    bytes_ = other.bytes_;
    copied_ = other.copied_;
    files_ = other.files_;
    reused_ = other.reused_;
    copy_s_ = other.copy_s_;
    warnings_ = std::move(other.warnings_);
  }
  return *this;
}

Lease::~Lease() {
  if (use_fd_ >= 0) close(use_fd_);
}

namespace {

// The store's edge: an exception inside it (memory, a library's) becomes an error naming the source.
Result<std::optional<Lease>> Guarded(const std::string& source, const StoreOptions& options, bool make) {
  try {
    StoreImpl impl(source, options);
    return impl.Acquire(make);
  } catch (const std::exception& e) {
    return Error{fmt::format("stage store: internal error while staging {}: {}", source, e.what())};
  }
}

}  // namespace

Result<Lease> Acquire(const std::string& source, const StoreOptions& options) {
  auto lease = Guarded(source, options, true);
  if (!lease) return lease.error();
  return std::move(**lease);
}

Result<std::optional<Lease>> FindCopy(const std::string& source, const StoreOptions& options) {
  return Guarded(source, options, false);
}

std::string DefaultStoreRoot() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (!env("SLURM_JOB_ID").empty()) {
    for (const char* name : {"SLURM_TMPDIR", "TMPDIR"}) {
      if (!env(name).empty()) return fmt::format("{}/saturate-stage-{}", env(name), getuid());
    }
  }
  if (auto dir = SaturateCacheDir(CacheHomesOfThisProcess())) return *dir + "/stage";
  return "";
}

}  // namespace sat::datastore
