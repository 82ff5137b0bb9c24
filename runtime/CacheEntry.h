// One compiled kernel as a file of the disk cache: a fixed header (magic,
// format version, payload length, payload checksum) and the payload, so a
// truncated or damaged file is told apart from a valid one.
#pragma once

#include "runtime/Compile.h"
#include "runtime/Expected.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace gnnjit::runtime::cache_entry {

/// Bumped whenever the layout changes; old entries then simply miss.
inline constexpr uint32_t kFormatVersion = 1;

/// The file's bytes for `kernel`.
std::string encode(const CompiledKernel &kernel);

/// The kernel in `bytes`, or why they are not a valid entry.
Expected<CompiledKernel, std::string> decode(std::string_view bytes);

/// Writes `bytes` to a fresh temp file beside `path` and renames it over
/// `path`, so readers see the old file or the whole new one, never a part.
/// No fsync: a file cut short by a crash fails its checksum and is rebuilt.
/// Returns an empty string, or why it failed (the temp file is removed).
std::string writeAtomically(const std::filesystem::path &path, std::string_view bytes);

} // namespace gnnjit::runtime::cache_entry
