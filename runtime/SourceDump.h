// Sources written to disk for a person to read or recompile with nvcc, and
// sources printed with line numbers beside a compiler log.
#pragma once

#include "runtime/Source.h"

#include <filesystem>
#include <set>
#include <string>
#include <string_view>

namespace gnnjit::runtime {

/// $GNNJIT_DUMP_DIR, or nothing when it is unset or empty.
std::filesystem::path requestedDumpDir();

/// requestedDumpDir(), else <system temp dir>/gnnjit-dump.
std::filesystem::path dumpDir();

/// Writes `source` to <dir>/<name>-<tag>.cu and its headers under
/// <dir>/<name>-<tag>.headers/, and returns the .cu path. Throws UserError
/// when the folder cannot be written.
std::filesystem::path dumpSource(const Source &source, std::string_view tag,
                                 const std::filesystem::path &dir);

/// Line numbers that NVRTC's log blames in `sourceName` ("name(12): error").
std::set<int> blamedLines(std::string_view log, std::string_view sourceName);

/// `text` with right-aligned line numbers; lines in `marked` start with '>'.
/// Past `maxLines` lines only the neighbourhood of marked lines is shown.
std::string numberLines(std::string_view text, const std::set<int> &marked, size_t maxLines = 200);

} // namespace gnnjit::runtime
