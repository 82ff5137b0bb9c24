// Small kernels and scoped process state (environment, stderr) for the
// runtime tests.
#pragma once

#include "runtime/Source.h"

#include "TestData.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <unistd.h>

namespace gnnjit::test {

/// out[i] = base + 3 * i: a pattern a launch test can check.
inline runtime::Source fillSource(const std::string &tag = "") {
  return {"fill.cu",
          "// " + tag + "\n"
          "extern \"C\" __global__ void fill(int *out, int n, int base) {\n"
          "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "  if (i < n)\n"
          "    out[i] = base + 3 * i;\n"
          "}\n",
          {}};
}

/// One per test program: a scratch folder that stands in for the system temp
/// dir, so failed-compile dumps and temp folders all vanish with the program.
class ScratchTempRoot {
public:
  ScratchTempRoot() : tmpdir_("TMPDIR", root_.path().string()) {}

private:
  TempDir root_;
  ScopedEnv tmpdir_;
};

/// Collects what is written to file descriptor 2 until text() is called.
class StderrCapture {
public:
  StderrCapture() : file_(std::tmpfile()) {
    std::fflush(stderr);
    saved_ = dup(2);
    dup2(fileno(file_), 2);
  }
  ~StderrCapture() {
    restore();
    std::fclose(file_);
  }
  StderrCapture(const StderrCapture &) = delete;
  StderrCapture &operator=(const StderrCapture &) = delete;

  std::string text() {
    restore();
    std::rewind(file_);
    std::string out;
    for (int c; (c = std::fgetc(file_)) != EOF;)
      out += static_cast<char>(c);
    return out;
  }

private:
  void restore() {
    if (saved_ < 0)
      return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  std::FILE *file_;
  int saved_ = -1;
};

inline std::string readText(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace gnnjit::test
