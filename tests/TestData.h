// Where tests find ../shared/datasets, and a temporary folder per test;
// what a test does when something it needs is not here: a visible skip, or
// a failure in runs that must not skip it (CI for the datasets, the GPU run
// for a CUDA device).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace gnnjit::test {

/// Whether environment variable `name` is "true" or "1".
inline bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && (std::string_view(value) == "true" || std::string_view(value) == "1");
}

/// CI's runs (CI=true or CI=1) have the shared datasets: a test that does
/// not find them fails there.
inline bool inCi() { return envFlag("CI"); }

/// The GPU run (scripts/gpu_checks.sh sets GNNJIT_REQUIRE_GPU=1) has a CUDA
/// device: a test's GPU branch that finds none fails there.
inline bool gpuRequired() { return envFlag("GNNJIT_REQUIRE_GPU"); }

/// `what` is missing here: a failure when `mustHave`, else a visible skip.
inline void skipOrFail(bool mustHave, const std::string &what) {
  if (mustHave)
    FAIL_CHECK(what);
  else
    MESSAGE("SKIPPED: " << what);
}

/// A test's GPU branch found no CUDA device: skipped, except in the GPU run.
inline void noGpuHere(const std::string &what) {
  skipOrFail(gpuRequired(), "no CUDA device; " + what + " (GNNJIT_REQUIRE_GPU=1: the GPU run must have one)");
}

/// Where the shared datasets are looked for: ../shared/datasets beside the
/// checkout, or $GNNJIT_SHARED_DATASETS.
inline std::filesystem::path sharedDatasetsPath() {
  if (const char *env = std::getenv("GNNJIT_SHARED_DATASETS"))
    return env;
  return GNNJIT_DEFAULT_SHARED_DATASETS;
}

/// The shared datasets' folder, or nothing when it is absent.
inline std::optional<std::filesystem::path> sharedDatasets() {
  std::filesystem::path dir = sharedDatasetsPath();
  if (std::filesystem::is_directory(dir))
    return dir;
  return std::nullopt;
}

/// sharedDatasets(), or nothing after a visible skip message (a failure
/// under CI).
inline std::optional<std::filesystem::path> sharedDatasetsOrSkip() {
  auto dir = sharedDatasets();
  if (!dir)
    skipOrFail(inCi(), "../shared/datasets not found (no folder " + sharedDatasetsPath().string() +
                           "); set GNNJIT_SHARED_DATASETS" +
                           std::string(inCi() ? " (CI=true: CI runs every test that reads it)" : ""));
  return dir;
}

/// The path of a shared dataset file, or a visible skip message (a failure
/// under CI) and nothing.
inline std::optional<std::filesystem::path> sharedFile(const std::string &relative) {
  auto dir = sharedDatasetsOrSkip();
  if (!dir)
    return std::nullopt;
  return *dir / relative;
}

/// Sets (or, with nothing, unsets) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    apply(value);
  }
  ~ScopedEnv() { apply(old_); }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  void apply(const std::optional<std::string> &value) {
    if (value)
      setenv(name_, value->c_str(), 1);
    else
      unsetenv(name_);
  }
  const char *name_;
  std::optional<std::string> old_;
};

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
