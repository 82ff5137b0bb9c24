#include "runtime/KernelCache.h"

#include "runtime/CacheEntry.h"
#include "runtime/CudaCheck.h"
#include "runtime/Device.h"
#include "runtime/Hash.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <pwd.h>
#include <set>
#include <unistd.h>

namespace gnnjit::runtime {

namespace fs = std::filesystem;

fs::path defaultCacheDir() {
  if (const char *dir = std::getenv("GNNJIT_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "gnnjit";
  const char *home = std::getenv("HOME");
  if (!home || !*home) {
    const passwd *user = getpwuid(getuid());
    home = user ? user->pw_dir : nullptr;
  }
  return home && *home ? fs::path(home) / ".cache" / "gnnjit" : fs::temp_directory_path() / "gnnjit-cache";
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One warning per subject per process: a damaged entry read by many caches,
// or an unwritable folder, is reported once, not once per kernel.
void warnOnce(const std::string &subject, const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  if (warned.insert(subject).second)
    fmt::print(stderr, "gnnjit: warning: {}\n", message);
}

std::optional<std::string> readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace

KernelCache::KernelCache(KernelCacheConfig config)
    : generatorVersion_(std::move(config.generatorVersion)), nvrtcVersion_(nvrtcVersionString()),
      entryDir_((config.dir.empty() ? defaultCacheDir() : config.dir) /
                fmt::format("v{}", cache_entry::kFormatVersion)) {}

std::string KernelCache::key(const Source &source, const CompileOptions &options) const {
  KeyHasher hasher;
  hasher.add("gnnjit kernel cache")
      .add(std::to_string(cache_entry::kFormatVersion))
      .add(generatorVersion_)
      .add(nvrtcVersion_)
      .add(options.arch);
  std::vector<std::string> flags = options.keyFlags();
  hasher.add(std::to_string(flags.size()));
  for (const std::string &flag : flags)
    hasher.add(flag);
  hasher.add(source.name).add(source.text);
  // Headers are a set: the order they were listed in does not matter.
  std::vector<const Header *> headers;
  for (const Header &header : source.headers)
    headers.push_back(&header);
  std::sort(headers.begin(), headers.end(), [](const Header *a, const Header *b) { return a->name < b->name; });
  hasher.add(std::to_string(headers.size()));
  for (const Header *header : headers)
    hasher.add(header->name).add(header->text);
  return hasher.hex();
}

bool KernelCache::holds(const std::string &key) const {
  {
    std::lock_guard lock(mutex_);
    if (compiled_.count(key))
      return true;
  }
  std::error_code ignored;
  return fs::exists(entryPath(key), ignored);
}

fs::path KernelCache::entryPath(std::string_view key) const { return entryDir_ / (std::string(key) + ".kernel"); }

std::shared_ptr<const CompiledKernel> KernelCache::readEntry(const std::string &key) {
  Clock::time_point start = Clock::now();
  fs::path path = entryPath(key);
  std::optional<std::string> bytes = readFile(path);
  if (!bytes)
    return nullptr;
  Expected<CompiledKernel, std::string> decoded = cache_entry::decode(*bytes);
  if (!decoded) {
    warnOnce(path.string(), fmt::format("kernel cache entry {} is corrupt ({}); deleting and rebuilding it",
                                        path.string(), decoded.error()));
    std::error_code ignored; // another process may have removed or replaced it already
    fs::remove(path, ignored);
    std::lock_guard lock(mutex_);
    ++stats_.corruptEntries;
    return nullptr;
  }
  auto kernel = std::make_shared<const CompiledKernel>(std::move(decoded).value());
  std::lock_guard lock(mutex_);
  ++stats_.diskHits;
  stats_.diskReadSeconds += secondsSince(start);
  return kernel;
}

void KernelCache::writeEntry(const std::string &key, const CompiledKernel &kernel) {
  std::error_code ec;
  fs::create_directories(entryDir_, ec);
  std::string error = ec ? fmt::format("cannot create {}: {}", entryDir_.string(), ec.message())
                         : cache_entry::writeAtomically(entryPath(key), cache_entry::encode(kernel));
  if (error.empty())
    return;
  warnOnce(entryDir_.string(), fmt::format("kernel cache not written ({}); kernels will be recompiled in the next "
                                           "process; set GNNJIT_CACHE_DIR to a writable folder",
                                           error));
  std::lock_guard lock(mutex_);
  ++stats_.diskWriteFailures;
}

KernelCache::CompileResult KernelCache::readOrCompile(const std::string &key, const Source &source,
                                                      const CompileOptions &options) {
  if (std::shared_ptr<const CompiledKernel> kernel = readEntry(key))
    return kernel;
  Clock::time_point start = Clock::now();
  Expected<CompiledKernel, CompileError> compiled = tryCompileToCubin(source, options);
  if (!compiled)
    return compiled.error();
  auto kernel = std::make_shared<const CompiledKernel>(std::move(compiled).value());
  {
    std::lock_guard lock(mutex_);
    ++stats_.compiles;
    stats_.compileSeconds += secondsSince(start);
  }
  writeEntry(key, *kernel);
  return kernel;
}

Expected<std::shared_ptr<const CompiledKernel>, CompileError> KernelCache::tryCompile(const Source &source,
                                                                                    const CompileOptions &options) {
  const std::string k = key(source, options);
  std::promise<CompileResult> promise;
  {
    std::unique_lock lock(mutex_);
    if (auto found = compiled_.find(k); found != compiled_.end()) {
      ++stats_.memoryHits;
      return found->second;
    }
    if (auto busy = inFlight_.find(k); busy != inFlight_.end()) {
      // Another thread reads or compiles this one (outside the lock): wait for it.
      const std::shared_future<CompileResult> pending = busy->second;
      lock.unlock();
      CompileResult result = pending.get(); // rethrows what that thread threw
      if (result) {
        std::lock_guard again(mutex_);
        ++stats_.memoryHits;
      }
      return result;
    }
    inFlight_.emplace(k, promise.get_future().share());
  }
  CompileResult result = [&]() -> CompileResult {
    try {
      return readOrCompile(k, source, options);
    } catch (...) {
      {
        std::lock_guard lock(mutex_);
        inFlight_.erase(k);
      }
      promise.set_exception(std::current_exception());
      throw;
    }
  }();
  {
    std::lock_guard lock(mutex_);
    if (result)
      compiled_.emplace(k, result.value());
    inFlight_.erase(k);
  }
  promise.set_value(result);
  return result;
}

std::shared_ptr<const CompiledKernel> KernelCache::compile(const Source &source, const CompileOptions &options) {
  return tryCompile(source, options).value();
}

std::shared_ptr<const LoadedModule> KernelCache::load(const Source &source, const CompileOptions &options) {
  if (!hasCudaDevice())
    throw CudaError(cudaErrorNoDevice, fmt::format("cudaGetDeviceCount (to load {})", source.name));
  std::pair<std::string, int> moduleKey{key(source, options), currentDevice()};
  {
    std::lock_guard lock(mutex_);
    if (auto found = modules_.find(moduleKey); found != modules_.end()) {
      ++stats_.memoryHits;
      return found->second;
    }
  }
  std::shared_ptr<const LoadedModule> module = LoadedModule::load(*compile(source, options));
  std::lock_guard lock(mutex_);
  return modules_.emplace(moduleKey, module).first->second;
}

Kernel KernelCache::kernel(const Source &source, const CompileOptions &options, std::string_view entry) {
  return load(source, options)->kernel(entry);
}

CacheStats KernelCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

} // namespace gnnjit::runtime
