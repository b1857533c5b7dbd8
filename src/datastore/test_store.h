// The store's test fixture (header only; not part of the library): a fresh folder per test with a store under it,
// datasets made in it, and the store's helpers. Shared by store_test.cc and store_trust_test.cc.
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "datastore/store.h"

namespace sat::datastore::testing {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  StoreTest() {
    std::string tmpl = ::testing::TempDir() + "/stage_XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    options_.root = dir_ + "/store";
  }
  ~StoreTest() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A dataset of `n` files of `size` bytes each under <dir>/<name>, in two folders; distinct contents.
  std::string MakeData(const std::string& name, int n, size_t size, char salt = 'a') {
    const std::string root = dir_ + "/" + name;
    fs::create_directories(root + "/train");
    fs::create_directories(root + "/val");
    for (int i = 0; i < n; ++i) {
      std::string text(size, static_cast<char>(salt + i % 20));
      text.replace(0, std::min(size, std::to_string(i).size()), std::to_string(i));
      Write(root + (i % 2 ? "/train/" : "/val/") + std::to_string(i) + ".bin", text);
    }
    return root;
  }
  static void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  // The disk space under `path`: st_blocks of every file and folder, links not followed.
  static uint64_t DiskBytes(const std::string& path) {
    uint64_t bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(path)) {
      struct stat st {};
      if (lstat(e.path().c_str(), &st) == 0) bytes += static_cast<uint64_t>(st.st_blocks) * 512;
    }
    return bytes;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Every file of `a` is in `b` with the same bytes, and nothing else is.
  static void ExpectSameTree(const std::string& a, const std::string& b) {
    size_t count = 0;
    for (const auto& e : fs::recursive_directory_iterator(a)) {
      const std::string rel = fs::relative(e.path(), a).string();
      ASSERT_TRUE(fs::exists(fs::symlink_status(b + "/" + rel))) << rel;
      if (e.is_regular_file() && !e.is_symlink()) {
        EXPECT_EQ(Read(e.path()), Read(b + "/" + rel)) << rel;
      }
      ++count;
    }
    size_t other = 0;
    for (auto it = fs::recursive_directory_iterator(b); it != fs::recursive_directory_iterator(); ++it) ++other;
    EXPECT_EQ(count, other);
  }

  // A child process copying `src` into the store one file at a time, `pause_us` after each: another saturate.
  pid_t StartSlowCopier(const std::string& src, useconds_t pause_us) {
    const pid_t child = fork();
    if (child == 0) {
      StoreOptions slow = options_;
      slow.threads = 1;
      slow.after_file = [pause_us](size_t) { usleep(pause_us); };
      auto lease = Acquire(src, slow);
      _exit(lease && !lease->reused() ? 0 : 1);
    }
    return child;
  }

  // Copies `src` one file at a time and interrupts itself after `files`: a copy cut off half way.
  void InterruptAfter(const std::string& src, size_t files) {
    size_t done = 0;
    StoreOptions first = options_;
    first.threads = 1;
    first.after_file = [&](size_t n) { done = n; };
    first.cancelled = [&] { return done >= files; };
    auto cut = Acquire(src, first);
    ASSERT_FALSE(cut);
    EXPECT_EQ(cut.error().exit_code, 130);
  }

  std::string dir_;
  StoreOptions options_;
};

}  // namespace sat::datastore::testing
