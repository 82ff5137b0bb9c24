// What a run will allocate, item by item, before it allocates any of it: a
// preflight adds up the items and refuses at once, naming the largest, when
// they do not fit in what the machine has (instead of failing after minutes
// of allocating, or being killed by the kernel's OOM killer).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gnnjit {

struct MemoryItem {
  std::string what; ///< e.g. "input 'x' (f32)"
  uint64_t bytes = 0;
};

class MemoryEstimate {
public:
  /// Adds an item; items of zero bytes are dropped. The total saturates
  /// rather than wrapping (a sum past 2^64 does not fit anywhere either).
  void add(std::string what, uint64_t bytes);
  void add(const MemoryEstimate &other);
  uint64_t total() const { return total_; }
  const std::vector<MemoryItem> &items() const { return items_; }
  /// The `most` largest items, "name 1.2 GiB, ...", and how many more.
  std::string largest(size_t most = 4) const;

private:
  std::vector<MemoryItem> items_;
  uint64_t total_ = 0;
};

/// "1.50 GiB", "12.0 MiB", "512 bytes".
std::string formatBytes(uint64_t bytes);

/// Throws a UserError unless `estimate` fits in `availableBytes` of
/// `memory` ("host memory", "device memory"): "PURPOSE needs about X of
/// MEMORY and Y is available (SOURCE): the largest items. ADVICE".
void requireFits(const MemoryEstimate &estimate, uint64_t availableBytes, std::string_view memory,
                 std::string_view availableSource, std::string_view purpose, std::string_view advice);

/// requireFits against availableHostMemory(), for one allocation site.
void requireHostMemory(const MemoryEstimate &estimate, std::string_view purpose, std::string_view advice);

} // namespace gnnjit
