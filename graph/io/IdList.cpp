#include "graph/io/IdList.h"

#include "graph/io/LineReader.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <unordered_set>

namespace gnnjit::graph {

std::vector<int64_t> readIdList(const std::filesystem::path &file) {
  return readIdList(file, std::numeric_limits<int64_t>::max());
}

namespace {

template <typename OnId> std::vector<int64_t> readIds(const std::filesystem::path &file, int64_t limit, OnId onId) {
  const bool bounded = limit != std::numeric_limits<int64_t>::max();
  const std::string what = bounded ? fmt::format("a node id below {}", limit) : std::string("an id");
  const int64_t max = bounded ? limit - 1 : limit;
  LineReader reader(file);
  std::vector<int64_t> ids;
  std::array<std::string_view, 1> fields;
  std::string_view line;
  while (reader.next(line)) {
    const int first = firstNonBlank(line);
    if (first < 0 || first == '#')
      continue;
    if (splitFields(line, fields, false) != 1)
      reader.fail("one non-negative integer per line", line);
    ids.push_back(reader.parseInt(fields[0], what, 0, max));
    onId(reader, ids.back());
  }
  return ids;
}

/// The ids a split has listed so far. A bitmap costs limit / 8 bytes whatever
/// the file holds, so beyond a 16 MiB bitmap a hash set, whose size follows
/// the file, takes over: a graph.mtx that declares 2^40 nodes must not make a
/// three-line train.txt allocate 128 GiB.
class SeenIds {
public:
  static constexpr int64_t kMaxBitmapIds = int64_t{1} << 27;

  explicit SeenIds(int64_t limit) {
    if (limit <= kMaxBitmapIds)
      bitmap_.assign(static_cast<size_t>(limit), false);
    else
      useSet_ = true;
  }

  /// Marks `id` (below the limit) as listed; false when it was listed before.
  bool insert(int64_t id) {
    if (useSet_)
      return set_.insert(id).second;
    if (bitmap_[static_cast<size_t>(id)])
      return false;
    bitmap_[static_cast<size_t>(id)] = true;
    return true;
  }

private:
  bool useSet_ = false;
  std::vector<bool> bitmap_;
  std::unordered_set<int64_t> set_;
};

} // namespace

std::vector<int64_t> readIdList(const std::filesystem::path &file, int64_t limit) {
  return readIds(file, limit, [](const LineReader &, int64_t) {});
}

std::vector<int64_t> readIdSet(const std::filesystem::path &file, int64_t limit) {
  SeenIds seen(limit);
  return readIds(file, limit, [&](const LineReader &reader, int64_t id) {
    if (!seen.insert(id))
      reader.fail(fmt::format("each node id once (a split lists a node at most once), but node {} was listed before",
                              id),
                  std::to_string(id));
  });
}

} // namespace gnnjit::graph
