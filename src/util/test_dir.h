// For tests: a fresh directory under GoogleTest's temporary folder, removed with everything in it when the test
// ends (header only; not part of the library).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace sat {

class TempDir {
 public:
  TempDir() : TempDir(testing::TempDir()) {}
  // Under `parent` (an existing folder) instead.
  explicit TempDir(const std::string& parent) {
    std::string tmpl = parent + "/saturate_XXXXXX";
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

}  // namespace sat
