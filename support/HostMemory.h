// How much host memory a run may still take: what the kernel says is
// available (MemAvailable), capped by the memory limit of the process's
// cgroup (a container's limit), or what GNNJIT_HOST_MEMORY says. Preflights
// compare their estimates with this before allocating anything large.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gnnjit {

struct HostMemory {
  uint64_t availableBytes = 0;
  std::string source; ///< where the figure comes from, for messages
};

/// The host memory available now. GNNJIT_HOST_MEMORY (bytes, or with a K, M,
/// G or T suffix, powers of 1024) caps it, to keep a run within a budget
/// (and lets tests see refusals on any machine).
HostMemory availableHostMemory();

/// "8G", "512MiB", "1073741824"; nothing when `text` is not such a size.
std::optional<uint64_t> parseByteSize(std::string_view text);

} // namespace gnnjit
