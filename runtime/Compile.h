// The second JIT stage: a Source compiled by NVRTC into a CUBIN. Needs no GPU.
#pragma once

#include "runtime/Device.h"
#include "runtime/Expected.h"
#include "runtime/Source.h"
#include "support/Error.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gnnjit::runtime {

struct CompileOptions {
  std::string arch{kCompileOnlyArch}; ///< "sm_NN" or "sm_NNa"; see targetArch()
  std::vector<std::string> flags;     ///< extra NVRTC flags, one token each ("-DTILE=32")
  std::string standard = "c++17";
  bool lineInfo = false; ///< -lineinfo, for profilers and compute-sanitizer

  /// The NVRTC flags in the order passed (the CUDA include path is added at
  /// compile time and is not part of any cache key).
  std::vector<std::string> nvrtcFlags() const;
  /// nvrtcFlags() sorted: what cache keys fold in, so flag order never matters.
  std::vector<std::string> keyFlags() const;
};

struct CompiledKernel {
  std::string name; ///< the Source's name
  std::string arch;
  std::vector<uint8_t> cubin; ///< an ELF image for `arch`
  std::string ptx;            ///< NVRTC yields it beside the CUBIN; kept for export
  std::string log;            ///< NVRTC's warnings, usually empty
};

/// NVRTC rejected a source. The message holds the log beside the numbered
/// source and names the dumped .cu, so the failure can be reproduced.
class CompileError : public UserError {
public:
  CompileError(const std::string &message, std::string log, std::filesystem::path dumpPath)
      : UserError(message), log_(std::move(log)), dumpPath_(std::move(dumpPath)) {}
  const std::string &log() const { return log_; }
  /// The dumped source; empty when it could not be written (the message says why).
  const std::filesystem::path &dumpPath() const { return dumpPath_; }

private:
  std::string log_;
  std::filesystem::path dumpPath_;
};

/// "major.minor" of the NVRTC linked in.
std::string nvrtcVersionString();

/// Folders NVRTC searches for the toolkit's headers (cuda_fp16.h, cuda_bf16.h):
/// $GNNJIT_CUDA_INCLUDE (':'-separated) when set, else the build's toolkit.
std::vector<std::string> cudaIncludeDirs();

/// Compiles with NVRTC. A rejected source comes back as a CompileError value
/// (always dumped); a malformed arch throws UserError. With $GNNJIT_DUMP_DIR
/// set every source is dumped there.
Expected<CompiledKernel, CompileError> tryCompileToCubin(const Source &source, const CompileOptions &options);

/// tryCompileToCubin(), throwing the CompileError.
CompiledKernel compileToCubin(const Source &source, const CompileOptions &options);

} // namespace gnnjit::runtime
