// Text files of one integer per line: labels, and train/val/test splits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace gnnjit::graph {

/// Reads one non-negative integer per line (blank lines and '#' comments
/// skipped, CRLF accepted). Throws UserError with file, line and what was
/// expected.
std::vector<int64_t> readIdList(const std::filesystem::path &file);

/// The same, and every id must be below `limit` (e.g. the node count of the
/// graph a split belongs to); an id out of range fails with its line.
std::vector<int64_t> readIdList(const std::filesystem::path &file, int64_t limit);

/// A split (train/val/test): ids below `limit`, each listed once. An id out
/// of range or listed a second time fails with its line, so a split can
/// never name more nodes than the graph has.
std::vector<int64_t> readIdSet(const std::filesystem::path &file, int64_t limit);

} // namespace gnnjit::graph
