#include "support/HostMemory.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace gnnjit {

namespace {

/// A limit at or above this is cgroup v1's way of saying "no limit".
constexpr uint64_t kNoLimit = uint64_t{1} << 60;

std::optional<uint64_t> readNumber(const std::string &file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word) || word == "max")
    return std::nullopt;
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size())
    return std::nullopt;
  return value;
}

/// `key` in a "key value" file (memory.stat), or 0.
uint64_t statField(const std::string &file, std::string_view key) {
  std::ifstream in(file);
  std::string name;
  uint64_t value = 0;
  while (in >> name >> value)
    if (name == key)
      return value;
  return 0;
}

std::optional<uint64_t> memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  uint64_t kib = 0;
  while (in >> name >> kib) {
    std::getline(in, unit);
    if (name == "MemAvailable:")
      return kib * 1024;
  }
  return std::nullopt;
}

/// What the process's cgroup still allows: its limit less what it uses,
/// not counting page cache the kernel can drop.
struct CgroupRoom {
  uint64_t bytes;
  std::string file;
};

std::optional<CgroupRoom> cgroupRoom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    const bool v2 = controllers.empty();
    if (!v2 && controllers.find("memory") == std::string::npos)
      continue;
    const std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    // Inside a container the cgroup's own folder is often mounted as the root.
    for (const std::string &dir : {root + path, root}) {
      const std::string limitFile = dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes");
      const std::optional<uint64_t> limit = readNumber(limitFile);
      const std::optional<uint64_t> usage = readNumber(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
      if (!limit || !usage)
        continue;
      if (*limit >= kNoLimit)
        break;
      const uint64_t cache = statField(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file");
      const uint64_t used = *usage > cache ? *usage - cache : 0;
      return CgroupRoom{*limit > used ? *limit - used : 0, limitFile};
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<uint64_t> parseByteSize(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data())
    return std::nullopt;
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  if (unit.ends_with("iB"))
    unit.remove_suffix(2);
  else if (unit.ends_with("B"))
    unit.remove_suffix(1);
  int shift = 0;
  if (unit == "K" || unit == "k")
    shift = 10;
  else if (unit == "M")
    shift = 20;
  else if (unit == "G")
    shift = 30;
  else if (unit == "T")
    shift = 40;
  else if (!unit.empty())
    return std::nullopt;
  if (shift > 0 && value > (std::numeric_limits<uint64_t>::max() >> shift))
    return std::nullopt;
  return value << shift;
}

HostMemory availableHostMemory() {
  HostMemory m;
  m.availableBytes = std::numeric_limits<uint64_t>::max();
  m.source = "no limit known";
  if (const std::optional<uint64_t> avail = memAvailable()) {
    m.availableBytes = *avail;
    m.source = "MemAvailable in /proc/meminfo";
  }
  if (const std::optional<CgroupRoom> room = cgroupRoom(); room && room->bytes < m.availableBytes) {
    m.availableBytes = room->bytes;
    m.source = fmt::format("the cgroup limit in {}, less what the process group uses", room->file);
  }
  if (const char *env = std::getenv("GNNJIT_HOST_MEMORY")) {
    const std::optional<uint64_t> cap = parseByteSize(env);
    if (!cap)
      throwUserError("GNNJIT_HOST_MEMORY='{}' is not a size; give bytes, or a number with K, M, G or T (powers of "
                     "1024), e.g. 8G",
                     env);
    if (*cap < m.availableBytes) {
      m.availableBytes = *cap;
      m.source = fmt::format("GNNJIT_HOST_MEMORY={}", env);
    }
  }
  return m;
}

} // namespace gnnjit
