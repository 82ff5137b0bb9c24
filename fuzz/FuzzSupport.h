// What every fuzz target shares: the fuzz input written to files a reader can
// open, the rule that a UserError is the only acceptable failure, and a way to
// report a broken invariant so that libFuzzer keeps the input.
#pragma once

#include "support/Error.h"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace gnnjit::fuzz {

/// Prints "fuzz finding: MESSAGE" and aborts: libFuzzer saves the input.
[[noreturn]] void reportFinding(std::string_view message);

template <typename... Args> [[noreturn]] void finding(fmt::format_string<Args...> format, Args &&...args) {
  reportFinding(fmt::format(format, std::forward<Args>(args)...));
}

/// The fuzz input as text (bytes as given; may hold NULs).
inline std::string_view asText(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// A folder of this process, made on first use under $TMPDIR and removed at
/// exit. Files in it are rewritten by every run of the target.
const std::filesystem::path &scratchFolder();

/// Writes `bytes` to scratchFolder()/name and returns the path.
std::filesystem::path writeScratch(const std::string &name, std::string_view bytes);

/// Removes scratchFolder()/name if it is there.
void removeScratch(const std::string &name);

/// Where the fuzz input of a multi-file target splits into files.
inline constexpr std::string_view kPartSeparator = "\n@@@@\n";

/// `text` cut at every kPartSeparator, at most `most` parts (the last keeps
/// any further separators).
std::vector<std::string_view> splitParts(std::string_view text, size_t most);

/// Writes scratchFolder()/name from `part`, or removes it when `part` is
/// empty, so a part left empty stands for a missing file.
void writeOrRemoveScratch(const std::string &name, std::string_view part);

/// What `read()` returns, or nothing when it throws UserError: the answer
/// expected for bad input. Any other exception is a finding.
template <typename Read> auto readOrRefuse(std::string_view what, Read &&read) -> std::optional<decltype(read())> {
  try {
    return read();
  } catch (const UserError &) {
    return std::nullopt;
  } catch (const std::exception &error) {
    finding("{} threw {} (only UserError is expected for bad input): {}", what, typeid(error).name(),
            error.what());
  } catch (...) {
    finding("{} threw something that is not a std::exception", what);
  }
}

/// Reports a finding when `holds` is false.
inline void require(bool holds, std::string_view invariant) {
  if (!holds)
    finding("broken invariant: {}", invariant);
}

} // namespace gnnjit::fuzz
