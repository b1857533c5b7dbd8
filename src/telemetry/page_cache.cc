#include "telemetry/page_cache.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>

#include "util/unique_fd.h"

namespace sat::telemetry {
namespace {

// cachestat(2)'s number is the same in the generic and the x86-64 tables; older headers do not name it.
#ifndef __NR_cachestat
constexpr long kCachestatNr = 451;
#else
constexpr long kCachestatNr = __NR_cachestat;
#endif

struct CachestatRange {
  uint64_t off, len;  // len 0: to the end of the file
};
struct Cachestat {
  uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

// False once the kernel said it has no cachestat: later files go straight to mincore.
std::atomic<bool> g_cachestat_missing{false};

Error PathError(const std::string& path, std::string_view what, int err) {
  return Error{fmt::format("{}: {}: {}", path, what, std::strerror(err))};
}

std::optional<uint64_t> CachedPagesByCachestat(int fd) {
  if (g_cachestat_missing.load(std::memory_order_relaxed)) return std::nullopt;
  CachestatRange range{0, 0};
  Cachestat stat{};
  if (::syscall(kCachestatNr, fd, &range, &stat, 0) == 0) return stat.nr_cache;
  // ENOSYS: an older kernel; EPERM/EOPNOTSUPP: a filter or file system that refuses it. mincore may still work.
  if (errno == ENOSYS) g_cachestat_missing.store(true, std::memory_order_relaxed);
  return std::nullopt;
}

Result<uint64_t> CachedPagesByMincore(int fd, uint64_t size, const std::string& path) {
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return PathError(path, "cannot map it to read its page-cache residency", errno);
  const long page = ::sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> vec((size + page - 1) / page);
  int rc = ::mincore(map, size, vec.data());
  int err = errno;
  ::munmap(map, size);
  if (rc != 0) return PathError(path, "mincore failed", err);
  return static_cast<uint64_t>(std::count_if(vec.begin(), vec.end(), [](unsigned char v) { return v & 1; }));
}

}  // namespace

Result<Residency> FileResidency(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return PathError(path, "cannot open it", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return PathError(path, "cannot stat it", errno);
  if (!S_ISREG(st.st_mode)) return Error{fmt::format("{}: not a regular file", path)};
  Residency r;
  r.bytes = static_cast<uint64_t>(st.st_size);
  if (r.bytes == 0) return r;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::optional<uint64_t> pages = CachedPagesByCachestat(fd.get());
  if (!pages) {
    Result<uint64_t> by_mincore = CachedPagesByMincore(fd.get(), r.bytes, path);
    if (!by_mincore) return by_mincore.error();
    pages = *by_mincore;
  }
  // The last page is partly past the end: count at most the file's size.
  r.cached_bytes = std::min(*pages * page, r.bytes);
  return r;
}

std::optional<double> ResidencySample::Share() const {
  if (files == 0 || bytes == 0) return std::nullopt;
  return static_cast<double>(cached_bytes) / static_cast<double>(bytes);
}

std::vector<std::string> EvenSample(const std::vector<std::string>& paths, size_t max_files) {
  if (paths.size() <= max_files) return paths;
  std::vector<std::string> out;
  if (max_files == 0) return out;
  out.reserve(max_files);
  for (size_t i = 0; i < max_files; ++i) out.push_back(paths[i * paths.size() / max_files]);
  return out;
}

ResidencySample SampleResidency(const std::vector<std::string>& paths, size_t max_files) {
  ResidencySample s;
  for (const std::string& path : EvenSample(paths, max_files)) {
    Result<Residency> r = FileResidency(path);
    if (!r) {
      ++s.unreadable;
      continue;
    }
    ++s.files;
    s.bytes += r->bytes;
    s.cached_bytes += r->cached_bytes;
  }
  return s;
}

Status DropFromPageCache(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return PathError(path, "cannot open it", errno);
  // Dirty pages stay in the cache: write them out first (a no-op for files nobody wrote).
  (void)::fdatasync(fd.get());
  int rc = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  if (rc != 0) return PathError(path, "cannot drop it from the page cache", rc);
  return Status::Ok();
}

}  // namespace sat::telemetry
