// Where tests find ../shared/datasets, and a temporary folder per test.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace gnnjit::test {

/// ../shared/datasets beside the checkout ($GNNJIT_SHARED_DATASETS wins), or
/// nothing when it is absent.
inline std::optional<std::filesystem::path> sharedDatasets() {
  std::filesystem::path dir = GNNJIT_DEFAULT_SHARED_DATASETS;
  if (const char *env = std::getenv("GNNJIT_SHARED_DATASETS"))
    dir = env;
  if (std::filesystem::is_directory(dir))
    return dir;
  return std::nullopt;
}

/// The path of a shared dataset file, or a visible skip message and nothing.
inline std::optional<std::filesystem::path> sharedFile(const std::string &relative) {
  auto dir = sharedDatasets();
  if (!dir) {
    MESSAGE("SKIPPED: ../shared/datasets not found; set GNNJIT_SHARED_DATASETS");
    return std::nullopt;
  }
  return *dir / relative;
}

/// A fresh folder under the system temp dir, removed when it goes away.
class TempDir {
public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gnnjit-test-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path &path() const { return path_; }

  /// Writes `content` (bytes, as given) to a file in this folder.
  std::filesystem::path write(const std::string &name, const std::string &content) const {
    const auto file = path_ / name;
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

private:
  std::filesystem::path path_;
};

} // namespace gnnjit::test
