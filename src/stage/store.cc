#include "stage/store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "util/atomic_file.h"
#include "util/cache_home.h"
#include "util/strings.h"

namespace sat::stage {

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

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

Error SystemError(const std::string& what, const std::string& path, int err) {
  return Error{fmt::format("stage store: cannot {} {}: {}", what, path, std::strerror(err))};
}

Error InterruptError() { return Error{"staging interrupted; the partial copy is kept and resumed next time", 130}; }

std::optional<uint64_t> StatvfsFree(const std::string& dir) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

// A lock or use file of the store, never followed through a link someone planted.
Result<int> OpenStoreFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return SystemError("open", path, errno);
  return fd;
}

// One whole file of a copy in progress, as the partial log records it.
struct Logged {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t xxh = 0;
};

// The partial log: one line per whole file, "size mtime_ns xxh rel". A torn last line (a kill mid-write) is
// ignored, so that file is copied again.
std::map<std::string, Logged> ReadLog(const std::string& path) {
  std::map<std::string, Logged> files;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline: torn
    std::istringstream fields(line);
    Logged l;
    std::string hex;
    if (!(fields >> l.size >> l.mtime_ns >> hex)) continue;
    fields.get();
    std::string rel;
    std::getline(fields, rel);
    l.xxh = std::strtoull(hex.c_str(), nullptr, 16);
    files[rel] = l;
  }
  return files;
}

// Where an entry of the source is, and where its copy goes below a copy folder.
std::string SourcePath(const Manifest& m, const Entry& e) { return e.rel.empty() ? m.source : m.source + "/" + e.rel; }
std::string CopyRel(const Manifest& m, const Entry& e) {
  const std::string base = fs::path(m.source).filename().string();
  return e.rel.empty() ? base : base + "/" + e.rel;
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
    int lock_fd = -1, use_fd = -1;
    ~Locks() {
      if (lock_fd >= 0) close(lock_fd);
      if (use_fd >= 0) close(use_fd);
    }
  };
  enum class Made { kOk, kRedo };

  std::string P(const std::string& key, const char* suffix) const { return o_.root + "/" + key + suffix; }
  Status PrepareRoot();
  Status LockKey(const std::string& key, Locks& locks);
  std::optional<Manifest> Complete(const std::string& key, const Manifest& m) const;
  Status MakeRoom(const std::string& key, uint64_t needed);
  Result<Made> Copy(const std::string& key, const Manifest& m);
  FileOutcome CopyFile(const Manifest& m, const Entry& e, const std::string& dst, uint64_t* xxh, Error* error);
  bool Verify(const std::string& partial, const Manifest& m, const std::map<std::string, Logged>& logged);
  Lease Hand(Locks& locks, const std::string& key, const Manifest& m, bool reused);
  void Report(Progress::Phase phase);
  bool Cancelled() const { return o_.cancelled && o_.cancelled(); }

  std::string source_;
  const StoreOptions& o_;
  Clock::time_point t0_;
  double copy_s_ = 0;
  std::atomic<uint64_t> bytes_done_{0}, copied_{0};
  std::atomic<size_t> files_done_{0};
  uint64_t bytes_total_ = 0;
  size_t files_total_ = 0;
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

Status StoreImpl::PrepareRoot() {
  std::error_code ec;
  const fs::path parent = fs::path(o_.root).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  // The store holds copies of the user's data: theirs alone to read, as the data may be private.
  if (mkdir(o_.root.c_str(), 0700) != 0 && errno != EEXIST) return SystemError("create", o_.root, errno);
  struct stat st {};
  if (stat(o_.root.c_str(), &st) != 0) return SystemError("read", o_.root, errno);
  if (!S_ISDIR(st.st_mode)) return UsageError(fmt::format("stage folder {} is not a folder", o_.root));
  if (access(o_.root.c_str(), W_OK) != 0) return UsageError(fmt::format("stage folder {} is not writable", o_.root));
  return Status::Ok();
}

// The key's lock (waiting for another copier, cancellably) and a use lease on it.
Status StoreImpl::LockKey(const std::string& key, Locks& locks) {
  auto lock_fd = OpenStoreFile(P(key, ".lock"));
  if (!lock_fd) return lock_fd.error();
  locks.lock_fd = *lock_fd;
  bool reported = false;
  while (flock(locks.lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return SystemError("lock", P(key, ".lock"), errno);
    if (!reported) Report(Progress::Phase::kWaiting);
    reported = true;
    if (Cancelled()) return InterruptError();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto use_fd = OpenStoreFile(P(key, ".use"));
  if (!use_fd) return use_fd.error();
  locks.use_fd = *use_fd;
  // Only an evicting copier takes it exclusively, and only without waiting, under the key's lock we hold.
  if (flock(locks.use_fd, LOCK_SH) != 0) return SystemError("lock", P(key, ".use"), errno);
  return Status::Ok();
}

// The finished copy's manifest when it holds exactly `m`.
std::optional<Manifest> StoreImpl::Complete(const std::string& key, const Manifest& m) const {
  std::ifstream in(P(key, ".json"));
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("manifest")) return std::nullopt;
  auto stored = ManifestFromJson(j["manifest"]);
  if (!stored || !(*stored == m)) return std::nullopt;
  struct stat st {};
  if (stat(P(key, ".data").c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
  return *stored;
}

// Room for `needed` more bytes: the least recently used copies nobody holds are evicted until the cap and the
// filesystem's free space (less the reserve) allow it.
Status StoreImpl::MakeRoom(const std::string& key, uint64_t needed) {
  struct Copy {
    std::string key;
    uint64_t bytes = 0;
    int64_t last_use = 0;
    bool partial = false;
  };
  std::vector<Copy> copies;
  uint64_t used = 0;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(o_.root, ec)) {
    const std::string name = item.path().filename().string();
    Copy c;
    if (name.size() > 5 && name.ends_with(".json")) {
      c.key = name.substr(0, name.size() - 5);
      std::ifstream in(item.path());
      const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
      if (!j.is_discarded() && j.contains("manifest")) c.bytes = j["manifest"].value("total_bytes", uint64_t{0});
    } else if (name.size() > 8 && name.ends_with(".partial") && item.is_directory()) {
      c.key = name.substr(0, name.size() - 8);
      c.partial = true;
      for (const auto& f : fs::recursive_directory_iterator(item.path(), ec)) {
        if (f.is_regular_file(ec)) c.bytes += f.file_size(ec);
      }
    } else {
      continue;
    }
    if (c.key == key) continue;
    struct stat st {};
    if (stat(P(c.key, ".use").c_str(), &st) == 0) c.last_use = st.st_mtim.tv_sec;
    used += c.bytes;
    copies.push_back(std::move(c));
  }
  std::sort(copies.begin(), copies.end(), [](const Copy& a, const Copy& b) { return a.last_use < b.last_use; });

  auto fits = [&]() {
    if (o_.cap_bytes > 0 && used + needed > o_.cap_bytes) return false;
    const auto free = o_.free_bytes ? o_.free_bytes(o_.root) : StatvfsFree(o_.root);
    return !free || *free >= needed + o_.reserve_bytes;
  };
  int in_use = 0;
  for (const Copy& c : copies) {
    if (fits()) return Status::Ok();
    // Another process holds it (using the copy, or making it): not ours to take.
    Locks victim;
    auto lock_fd = OpenStoreFile(P(c.key, ".lock"));
    if (!lock_fd) continue;
    victim.lock_fd = *lock_fd;
    auto use_fd = OpenStoreFile(P(c.key, ".use"));
    if (!use_fd) continue;
    victim.use_fd = *use_fd;
    if (flock(victim.lock_fd, LOCK_EX | LOCK_NB) != 0 || flock(victim.use_fd, LOCK_EX | LOCK_NB) != 0) {
      ++in_use;
      continue;
    }
    fs::remove(P(c.key, ".json"), ec);
    fs::remove_all(P(c.key, ".data"), ec);
    fs::remove_all(P(c.key, ".partial"), ec);
    fs::remove(P(c.key, ".partial.log"), ec);
    used -= std::min(used, c.bytes);
  }
  if (fits()) return Status::Ok();
  const auto free = o_.free_bytes ? o_.free_bytes(o_.root) : StatvfsFree(o_.root);
  std::string room = fmt::format("{} free on its filesystem, {} kept free", free ? FormatBytes(*free) : "unknown",
                                 FormatBytes(o_.reserve_bytes));
  if (o_.cap_bytes > 0) {
    room += fmt::format(", the store capped at {} with {} held", FormatBytes(o_.cap_bytes), FormatBytes(used));
  }
  if (in_use > 0) room += fmt::format(", {} cop{} in use", in_use, in_use == 1 ? "y" : "ies");
  return Error{fmt::format("no room to stage {}: the copy needs {} more in {} ({}); nothing was copied. Free space "
                           "there, choose a larger local drive (--stage-dir, saturate.stage_dir), or raise the cap",
                           source_, FormatBytes(needed), o_.root, room)};
}

FileOutcome StoreImpl::CopyFile(const Manifest& m, const Entry& e, const std::string& dst, uint64_t* xxh,
                                Error* error) {
  const std::string src = SourcePath(m, e);
  const int in = open(src.c_str(), O_RDONLY | O_CLOEXEC | (m.single_file ? 0 : O_NOFOLLOW));
  if (in < 0) return errno == ENOENT ? FileOutcome::kChanged : (*error = SystemError("read", src, errno), FileOutcome::kFailed);
  const int out = open(dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (out < 0) {
    *error = SystemError("write", dst, errno);
    close(in);
    return FileOutcome::kFailed;
  }
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::vector<char> buf(kChunk);
  uint64_t total = 0;
  FileOutcome outcome = FileOutcome::kCopied;
  while (true) {
    if (Cancelled()) {
      outcome = FileOutcome::kCancelled;
      break;
    }
    const ssize_t n = read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = SystemError("read", src, errno);
      outcome = FileOutcome::kFailed;
      break;
    }
    if (n == 0) break;
    XXH3_64bits_update(state, buf.data(), static_cast<size_t>(n));
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = write(out, buf.data() + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        *error = SystemError("write", dst, errno);
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
  // The file changed while it was read (or since the listing): the copy would mix two versions.
  struct stat st {};
  if (outcome == FileOutcome::kCopied &&
      (fstat(in, &st) != 0 || total != e.size || static_cast<uint64_t>(st.st_size) != e.size ||
       static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec != e.mtime_ns)) {
    outcome = FileOutcome::kChanged;
  }
  if (outcome == FileOutcome::kCopied) {
    const timespec times[2] = {st.st_atim, st.st_mtim};
    futimens(out, times);
  }
  *xxh = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  close(in);
  if (close(out) != 0 && outcome == FileOutcome::kCopied) {
    *error = SystemError("write", dst, errno);
    outcome = FileOutcome::kFailed;
  }
  return outcome;
}

// Copies what the partial folder lacks, lists the source again, and reads every file back against its checksum.
Result<StoreImpl::Made> StoreImpl::Copy(const std::string& key, const Manifest& m) {
  const std::string partial = P(key, ".partial"), log_path = P(key, ".partial.log");
  std::error_code ec;
  fs::create_directories(partial, ec);
  if (ec) return Error{fmt::format("stage store: cannot create {}: {}", partial, ec.message())};
  std::map<std::string, Logged> logged = ReadLog(log_path);

  // Folders and links first; then the files a killed copy did not finish.
  std::vector<const Entry*> todo;
  const std::string base = fs::path(m.source).filename().string();
  if (!m.single_file) fs::create_directories(partial + "/" + base, ec);
  for (const Entry& e : m.entries) {
    const std::string dst = partial + "/" + CopyRel(m, e);
    if (e.type == Entry::Type::kDir) {
      fs::create_directories(dst, ec);
      if (ec) return Error{fmt::format("stage store: cannot create {}: {}", dst, ec.message())};
    } else if (e.type == Entry::Type::kLink) {
      fs::remove(dst, ec);
      if (symlink(e.target.c_str(), dst.c_str()) != 0) return SystemError("create the link", dst, errno);
    } else {
      auto it = logged.find(e.rel);
      struct stat st {};
      if (it != logged.end() && it->second.size == e.size && it->second.mtime_ns == e.mtime_ns &&
          lstat(dst.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) == e.size) {
        bytes_done_ += e.size;
        ++files_done_;
        continue;
      }
      logged.erase(e.rel);
      todo.push_back(&e);
    }
  }

  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (log_fd < 0) return SystemError("open", log_path, errno);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false}, changed{false}, cancelled{false};
  std::optional<Error> failure;
  std::mutex failure_mu;
  auto worker = [&]() {
    for (size_t i = next++; i < todo.size() && !stop; i = next++) {
      const Entry& e = *todo[i];
      uint64_t xxh = 0;
      Error error;
      const FileOutcome outcome = CopyFile(m, e, partial + "/" + CopyRel(m, e), &xxh, &error);
      if (outcome != FileOutcome::kCopied) {
        if (outcome == FileOutcome::kChanged) changed = true;
        if (outcome == FileOutcome::kCancelled) cancelled = true;
        if (outcome == FileOutcome::kFailed) {
          std::lock_guard<std::mutex> lock(failure_mu);
          if (!failure) failure = error;
        }
        stop = true;
        return;
      }
      {
        std::lock_guard<std::mutex> lock(log_mu_);
        logged[e.rel] = Logged{e.size, e.mtime_ns, xxh};
        const std::string line = fmt::format("{} {} {:016x} {}\n", e.size, e.mtime_ns, xxh, e.rel);
        (void)!write(log_fd, line.data(), line.size());
      }
      const size_t done = ++files_done_;
      Report(Progress::Phase::kCopying);
      if (o_.after_file) o_.after_file(done);
    }
  };
  const int threads = std::clamp(o_.threads, 1, 64);
  std::vector<std::thread> pool;
  for (int t = 0; t < std::min<int>(threads, static_cast<int>(todo.size())); ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  close(log_fd);
  if (cancelled) return InterruptError();
  if (failure) return *failure;

  // Data that changed while it was copied: this copy is discarded and made again from a new listing.
  if (!changed) {
    auto again = ScanSource(m.source);
    changed = !again || !(*again == m);
  }
  if (changed || !Verify(partial, m, logged)) {
    fs::remove_all(partial, ec);
    fs::remove(log_path, ec);
    return Made::kRedo;
  }
  return Made::kOk;
}

bool StoreImpl::Verify(const std::string& partial, const Manifest& m, const std::map<std::string, Logged>& logged) {
  Report(Progress::Phase::kVerifying);
  std::vector<char> buf(kChunk);
  for (const Entry& e : m.entries) {
    if (e.type != Entry::Type::kFile) continue;
    auto it = logged.find(e.rel);
    if (it == logged.end()) return false;
    const std::string path = partial + "/" + CopyRel(m, e);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    uint64_t total = 0;
    ssize_t n = 0;
    while ((n = read(fd, buf.data(), buf.size())) > 0) {
      XXH3_64bits_update(state, buf.data(), static_cast<size_t>(n));
      total += static_cast<uint64_t>(n);
    }
    const uint64_t xxh = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    close(fd);
    if (n < 0 || total != e.size || xxh != it->second.xxh) return false;
  }
  return true;
}

Lease StoreImpl::Hand(Locks& locks, const std::string& key, const Manifest& m, bool reused) {
  // The use file's time is the copy's last use, which eviction orders by.
  futimens(locks.use_fd, nullptr);
  Lease lease;
  lease.use_fd_ = locks.use_fd;
  locks.use_fd = -1;
  lease.path_ = P(key, ".data") + "/" + fs::path(m.source).filename().string();
  lease.source_ = m.source;
  lease.bytes_ = m.total_bytes;
  lease.files_ = m.file_count;
  lease.reused_ = reused;
  lease.copy_s_ = reused ? 0 : copy_s_;
  lease.copied_ = copied_;
  bytes_done_ = m.total_bytes;
  files_done_ = m.file_count;
  Report(Progress::Phase::kDone);
  return lease;
}

Result<std::optional<Lease>> StoreImpl::Acquire(bool make) {
  std::error_code ec;
  // Only looking: a store that is not there holds no copy, and looking creates nothing.
  if (!make && !fs::exists(o_.root, ec)) {
    auto m = ScanSource(source_);
    if (!m) return m.error();
    return std::optional<Lease>();
  }
  if (auto s = PrepareRoot(); !s) return s.error();
  const int tries = std::max(1, o_.max_tries);
  for (int attempt = 1; attempt <= tries; ++attempt) {
    Report(Progress::Phase::kScanning);
    auto m = ScanSource(source_);
    if (!m) return m.error();
    const std::string key = m->Key();
    bytes_total_ = m->total_bytes;
    files_total_ = m->file_count;
    bytes_done_ = 0;
    files_done_ = 0;
    if (!make && !fs::exists(P(key, ".json"), ec)) return std::optional<Lease>();
    Locks locks;
    if (auto s = LockKey(key, locks); !s) return s.error();
    if (Complete(key, *m)) return std::optional(Hand(locks, key, *m, true));
    if (!make) return std::optional<Lease>();

    // A copy renamed into place whose manifest was never written (killed between the two): resumed like a
    // partial copy, its files checked again.
    if (fs::exists(P(key, ".data"), ec)) {
      if (!fs::exists(P(key, ".partial"), ec)) {
        fs::rename(P(key, ".data"), P(key, ".partial"), ec);
      } else {
        fs::remove_all(P(key, ".data"), ec);
      }
    }
    uint64_t have = 0;
    for (const auto& [rel, l] : ReadLog(P(key, ".partial.log"))) have += l.size;
    if (auto s = MakeRoom(key, m->total_bytes - std::min(have, m->total_bytes)); !s) return s.error();

    const auto copy_t0 = Clock::now();
    Report(Progress::Phase::kCopying);
    auto made = Copy(key, *m);
    copy_s_ += SecondsSince(copy_t0);
    if (!made) return made.error();
    if (*made == Made::kRedo) continue;

    // Whole and verified: into place, then the manifest that says so.
    if (rename(P(key, ".partial").c_str(), P(key, ".data").c_str()) != 0) {
      return SystemError("rename", P(key, ".partial"), errno);
    }
    const nlohmann::json record = {{"manifest", ManifestToJson(*m)}, {"copy_s", copy_s_},
                                   {"made_unix", std::time(nullptr)}};
    sync();
    if (auto s = WriteFileAtomically(P(key, ".json"), record.dump(1) + "\n", 0600); !s) return s.error();
    fs::remove(P(key, ".partial.log"), ec);
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
  }
  return *this;
}

Lease::~Lease() {
  if (use_fd_ >= 0) close(use_fd_);
}

Result<Lease> Acquire(const std::string& source, const StoreOptions& options) {
  StoreImpl impl(source, options);
  auto lease = impl.Acquire(true);
  if (!lease) return lease.error();
  return std::move(**lease);
}

Result<std::optional<Lease>> FindCopy(const std::string& source, const StoreOptions& options) {
  StoreImpl impl(source, options);
  return impl.Acquire(false);
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

}  // namespace sat::stage
