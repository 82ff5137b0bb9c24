#include "runtime/Compile.h"

#include "runtime/Hash.h"
#include "runtime/SourceDump.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>

namespace gnnjit::runtime {

std::vector<std::string> CompileOptions::nvrtcFlags() const {
  // -pch: NVRTC parses gnnjit's device headers once per process and reuses
  // them (the autotuner compiles dozens of modules that include the same
  // ones): 7-9 % less NVRTC time for GATv2 and SAGE-max modules, the same PTX.
  std::vector<std::string> out = {"-arch=" + arch, "--std=" + standard, "-default-device", "-pch",
                                  "-pch-messages=false"};
  if (lineInfo)
    out.push_back("-lineinfo");
  out.insert(out.end(), flags.begin(), flags.end());
  return out;
}

std::vector<std::string> CompileOptions::keyFlags() const {
  std::vector<std::string> out = nvrtcFlags();
  std::sort(out.begin(), out.end());
  return out;
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    throwInternalError("nvrtcVersion failed");
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> cudaIncludeDirs() {
  const char *env = std::getenv("GNNJIT_CUDA_INCLUDE");
  std::string_view list = env && *env ? env : GNNJIT_CUDA_INCLUDE_DIRS;
  std::vector<std::string> dirs;
  while (!list.empty()) {
    size_t end = list.find(':');
    if (end != 0)
      dirs.emplace_back(list.substr(0, end));
    list = end == std::string_view::npos ? std::string_view{} : list.substr(end + 1);
  }
  return dirs;
}

namespace {

// Destroys the NVRTC program on every path out.
struct ProgramGuard {
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program)
      nvrtcDestroyProgram(&program);
  }
};

void nvrtcCheck(nvrtcResult status, const char *call) {
  if (status != NVRTC_SUCCESS)
    throwInternalError("{} failed: {}", call, nvrtcGetErrorString(status));
}

std::string programLog(nvrtcProgram program) {
  size_t size = 0;
  nvrtcCheck(nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize");
  std::string log(size, '\0');
  nvrtcCheck(nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog");
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

CompileError compileFailure(const Source &source, const CompileOptions &options, nvrtcResult status,
                            const std::string &log, std::filesystem::path dumped) {
  std::string dumpNote;
  if (dumped.empty()) {
    try {
      dumped = dumpSource(source, sha256Hex(source.text).substr(0, 12), dumpDir());
    } catch (const UserError &e) {
      dumpNote = fmt::format(" (not dumped: {})", e.what());
    }
  }
  std::string where = dumped.empty() ? dumpNote : fmt::format("full text in {}", dumped.string());
  std::string message = fmt::format(
      "NVRTC {} could not compile {} for {} ({}); flags: {}\nlog:\n{}\nsource, {}:\n{}", nvrtcVersionString(),
      source.name, options.arch, nvrtcGetErrorString(status), fmt::join(options.nvrtcFlags(), " "),
      log.empty() ? "(empty)" : log, where, numberLines(source.text, blamedLines(log, source.name)));
  return CompileError(message, log, dumped);
}

} // namespace

Expected<CompiledKernel, CompileError> tryCompileToCubin(const Source &source, const CompileOptions &options) {
  validateArch(options.arch);
  std::vector<std::string> flags = options.nvrtcFlags();
  for (const std::string &dir : cudaIncludeDirs())
    flags.push_back("-I" + dir);
  std::vector<const char *> flagPointers;
  for (const std::string &flag : flags)
    flagPointers.push_back(flag.c_str());
  std::vector<const char *> headerTexts, headerNames;
  for (const Header &header : source.headers) {
    headerTexts.push_back(header.text.c_str());
    headerNames.push_back(header.name.c_str());
  }

  ProgramGuard guard;
  nvrtcCheck(nvrtcCreateProgram(&guard.program, source.text.c_str(), source.name.c_str(),
                                static_cast<int>(headerTexts.size()), headerTexts.data(), headerNames.data()),
             "nvrtcCreateProgram");
  nvrtcResult status =
      nvrtcCompileProgram(guard.program, static_cast<int>(flagPointers.size()), flagPointers.data());
  std::string log = programLog(guard.program);

  std::filesystem::path dumped;
  if (std::filesystem::path dir = requestedDumpDir(); !dir.empty())
    dumped = dumpSource(source, sha256Hex(source.text).substr(0, 12), dir);
  if (status != NVRTC_SUCCESS)
    return compileFailure(source, options, status, log, dumped);

  CompiledKernel out{source.name, options.arch, {}, {}, std::move(log)};
  size_t size = 0;
  nvrtcCheck(nvrtcGetCUBINSize(guard.program, &size), "nvrtcGetCUBINSize");
  if (size == 0)
    throwInternalError("NVRTC produced no CUBIN for {} with -arch={}", source.name, options.arch);
  out.cubin.resize(size);
  nvrtcCheck(nvrtcGetCUBIN(guard.program, reinterpret_cast<char *>(out.cubin.data())), "nvrtcGetCUBIN");
  nvrtcCheck(nvrtcGetPTXSize(guard.program, &size), "nvrtcGetPTXSize");
  out.ptx.resize(size);
  nvrtcCheck(nvrtcGetPTX(guard.program, out.ptx.data()), "nvrtcGetPTX");
  while (!out.ptx.empty() && out.ptx.back() == '\0')
    out.ptx.pop_back();
  return out;
}

CompiledKernel compileToCubin(const Source &source, const CompileOptions &options) {
  return tryCompileToCubin(source, options).value();
}

} // namespace gnnjit::runtime
