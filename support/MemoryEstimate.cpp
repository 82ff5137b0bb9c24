#include "support/MemoryEstimate.h"

#include "support/CheckedMath.h"
#include "support/Error.h"
#include "support/HostMemory.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace gnnjit {

void MemoryEstimate::add(std::string what, uint64_t bytes) {
  if (bytes == 0)
    return;
  items_.push_back({std::move(what), bytes});
  total_ = sumOrNothing(total_, bytes).value_or(std::numeric_limits<uint64_t>::max());
}

void MemoryEstimate::add(const MemoryEstimate &other) {
  for (const MemoryItem &item : other.items())
    add(item.what, item.bytes);
}

std::string MemoryEstimate::largest(size_t most) const {
  std::vector<const MemoryItem *> sorted;
  for (const MemoryItem &item : items_)
    sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const MemoryItem *a, const MemoryItem *b) { return a->bytes > b->bytes; });
  std::string text;
  for (size_t k = 0; k < sorted.size() && k < most; ++k)
    text += fmt::format("{}{} {}", k ? ", " : "", sorted[k]->what, formatBytes(sorted[k]->bytes));
  if (sorted.size() > most)
    text += fmt::format(" and {} smaller item{}", sorted.size() - most, sorted.size() - most == 1 ? "" : "s");
  return text;
}

std::string formatBytes(uint64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;
  const double b = static_cast<double>(bytes);
  if (b >= kTiB)
    return fmt::format("{:.2f} TiB", b / kTiB);
  if (b >= kGiB)
    return fmt::format("{:.2f} GiB", b / kGiB);
  if (b >= kMiB)
    return fmt::format("{:.1f} MiB", b / kMiB);
  if (b >= kKiB)
    return fmt::format("{:.1f} KiB", b / kKiB);
  return fmt::format("{} bytes", bytes);
}

void requireFits(const MemoryEstimate &estimate, uint64_t availableBytes, std::string_view memory,
                 std::string_view availableSource, std::string_view purpose, std::string_view advice) {
  if (estimate.total() <= availableBytes)
    return;
  throwUserError("{} needs about {} of {} and {} is available ({}): {}.{}{}", purpose, formatBytes(estimate.total()),
                 memory, formatBytes(availableBytes), availableSource, estimate.largest(), advice.empty() ? "" : " ",
                 advice);
}

void requireHostMemory(const MemoryEstimate &estimate, std::string_view purpose, std::string_view advice) {
  const HostMemory host = availableHostMemory();
  requireFits(estimate, host.availableBytes, "host memory", host.source, purpose, advice);
}

} // namespace gnnjit
