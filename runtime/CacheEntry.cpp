#include "runtime/CacheEntry.h"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/xxhash.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace gnnjit::runtime::cache_entry {

namespace {

constexpr char kMagic[8] = {'G', 'N', 'J', 'I', 'T', 'K', 'C', '\n'};

// Fields in host byte order: cache files never leave the machine that wrote them.
struct FileHeader {
  char magic[8];
  uint32_t formatVersion;
  uint32_t reserved;
  uint64_t payloadBytes;
  uint64_t payloadChecksum; // xxHash64
};
static_assert(sizeof(FileHeader) == 32);

void put(std::string &out, std::string_view field) {
  uint64_t size = field.size();
  out.append(reinterpret_cast<const char *>(&size), sizeof size);
  out.append(field);
}

// Reads one length-prefixed field, or fails when it runs past the end.
bool take(std::string_view &in, std::string &field) {
  uint64_t size = 0;
  if (in.size() < sizeof size)
    return false;
  std::memcpy(&size, in.data(), sizeof size);
  in.remove_prefix(sizeof size);
  if (size > in.size())
    return false;
  field.assign(in.substr(0, size));
  in.remove_prefix(size);
  return true;
}

uint64_t checksum(std::string_view payload) { return llvm::xxHash64(llvm::StringRef(payload.data(), payload.size())); }

} // namespace

std::string encode(const CompiledKernel &kernel) {
  std::string payload;
  put(payload, kernel.name);
  put(payload, kernel.arch);
  put(payload, std::string_view(reinterpret_cast<const char *>(kernel.cubin.data()), kernel.cubin.size()));
  put(payload, kernel.ptx);
  put(payload, kernel.log);
  FileHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.formatVersion = kFormatVersion;
  header.payloadBytes = payload.size();
  header.payloadChecksum = checksum(payload);
  std::string out(reinterpret_cast<const char *>(&header), sizeof header);
  return out + payload;
}

Expected<CompiledKernel, std::string> decode(std::string_view bytes) {
  FileHeader header{};
  if (bytes.size() < sizeof header)
    return fmt::format("{} bytes, shorter than the {}-byte header", bytes.size(), sizeof header);
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0)
    return std::string("not a gnnjit kernel cache file (bad magic)");
  if (header.formatVersion != kFormatVersion)
    return fmt::format("format version {}, expected {}", header.formatVersion, kFormatVersion);
  std::string_view payload = bytes.substr(sizeof header);
  if (payload.size() != header.payloadBytes)
    return fmt::format("payload of {} bytes, header says {} (truncated?)", payload.size(), header.payloadBytes);
  if (checksum(payload) != header.payloadChecksum)
    return std::string("payload checksum mismatch (damaged)");

  CompiledKernel kernel;
  std::string cubin;
  if (!take(payload, kernel.name) || !take(payload, kernel.arch) || !take(payload, cubin) ||
      !take(payload, kernel.ptx) || !take(payload, kernel.log) || !payload.empty())
    return std::string("payload fields do not add up");
  if (cubin.size() < 4 || cubin.compare(0, 4, "\x7f" "ELF") != 0)
    return std::string("payload holds no ELF image");
  kernel.cubin.assign(cubin.begin(), cubin.end());
  return kernel;
}

std::string writeAtomically(const std::filesystem::path &path, std::string_view bytes) {
  // pid + counter: unique among processes and among threads of this one.
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path temp = path;
  temp += fmt::format(".tmp-{}-{}", getpid(), counter++);

  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return fmt::format("cannot create {}: {}", temp.string(), std::strerror(errno));
  std::string error;
  for (size_t done = 0; done < bytes.size() && error.empty();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno != EINTR)
      error = fmt::format("cannot write {}: {}", temp.string(), std::strerror(errno));
    else if (n > 0)
      done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && error.empty())
    error = fmt::format("cannot close {}: {}", temp.string(), std::strerror(errno));
  if (error.empty() && std::rename(temp.c_str(), path.c_str()) != 0)
    error = fmt::format("cannot rename {} to {}: {}", temp.string(), path.string(), std::strerror(errno));
  if (!error.empty())
    ::unlink(temp.c_str());
  return error;
}

} // namespace gnnjit::runtime::cache_entry
