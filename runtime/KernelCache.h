// The two-level kernel cache. In memory: loaded modules and CUBINs of this
// process. On disk: CUBINs under a content address (SHA-256 over source,
// headers, sorted flags, arch, NVRTC version, generator version and cache
// format version), shared by every process of the user.
#pragma once

#include "runtime/Compile.h"
#include "runtime/Expected.h"
#include "runtime/Module.h"

#include <cstdint>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace gnnjit::runtime {

/// Where the disk cache lives: $GNNJIT_CACHE_DIR, else $XDG_CACHE_HOME/gnnjit,
/// else ~/.cache/gnnjit.
std::filesystem::path defaultCacheDir();

/// How each request was answered; exactly one counter of the first three
/// grows per request that succeeds.
struct CacheStats {
  uint64_t memoryHits = 0;
  uint64_t diskHits = 0;
  uint64_t compiles = 0;
  uint64_t corruptEntries = 0;    ///< damaged files found, deleted and rebuilt
  uint64_t diskWriteFailures = 0; ///< entries that could not be stored (compiling still worked)
  double compileSeconds = 0;      ///< NVRTC time, summed
  double diskReadSeconds = 0;     ///< reading and verifying entries that hit, summed
};

struct KernelCacheConfig {
  std::filesystem::path dir;    ///< empty: defaultCacheDir()
  std::string generatorVersion; ///< the code generator's version, folded into every key
};

/// Thread-safe. Two processes may share a folder: entries are written to a
/// temp file and renamed into place.
class KernelCache {
public:
  explicit KernelCache(KernelCacheConfig config = {});

  /// The CUBIN for `source` under `options`: from memory, disk, or NVRTC.
  /// Needs no GPU. A rejected source comes back as the CompileError.
  Expected<std::shared_ptr<const CompiledKernel>, CompileError> tryCompile(const Source &source,
                                                                         const CompileOptions &options);
  /// tryCompile(), throwing the CompileError.
  std::shared_ptr<const CompiledKernel> compile(const Source &source, const CompileOptions &options);

  /// The module loaded for the current device. Throws CudaError without one.
  std::shared_ptr<const LoadedModule> load(const Source &source, const CompileOptions &options);
  /// load(), then the kernel named `entry`.
  Kernel kernel(const Source &source, const CompileOptions &options, std::string_view entry);

  /// The content address (64 hex digits) of `source` under `options`.
  std::string key(const Source &source, const CompileOptions &options) const;
  /// Whether the CUBIN of `key` is at hand without compiling: in memory, or
  /// an entry on disk (not read, so not yet verified).
  bool holds(const std::string &key) const;
  /// The file that holds (or would hold) the entry of `key`.
  std::filesystem::path entryPath(std::string_view key) const;
  /// This cache's folder of entries (under the configured dir, per format version).
  const std::filesystem::path &entryDir() const { return entryDir_; }

  CacheStats stats() const;

private:
  using CompileResult = Expected<std::shared_ptr<const CompiledKernel>, CompileError>;
  /// The entry of `key` from disk, else compiled (and written to disk).
  CompileResult readOrCompile(const std::string &key, const Source &source, const CompileOptions &options);
  std::shared_ptr<const CompiledKernel> readEntry(const std::string &key);
  void writeEntry(const std::string &key, const CompiledKernel &kernel);

  std::string generatorVersion_;
  std::string nvrtcVersion_;
  std::filesystem::path entryDir_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const CompiledKernel>> compiled_;
  /// Keys being read or compiled now: a second thread asking for one waits
  /// for the first instead of compiling it again (the autotuner compiles
  /// candidates that share modules on all cores at once).
  std::unordered_map<std::string, std::shared_future<CompileResult>> inFlight_;
  std::map<std::pair<std::string, int>, std::shared_ptr<const LoadedModule>> modules_; ///< (key, device)
  CacheStats stats_;
};

} // namespace gnnjit::runtime
