#include "FuzzSupport.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

namespace gnnjit::fuzz {

namespace fs = std::filesystem;

namespace {

/// Removes the folder when the process exits normally (-max_total_time).
struct ScratchFolder {
  fs::path path;
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "gnnjit-fuzz-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      reportFinding(fmt::format("cannot make a scratch folder from {}: {}", pattern, std::strerror(errno)));
    path = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

} // namespace

void reportFinding(std::string_view message) {
  std::fprintf(stderr, "fuzz finding: %.*s\n", static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
  std::abort();
}

const fs::path &scratchFolder() {
  static const ScratchFolder folder;
  return folder.path;
}

fs::path writeScratch(const std::string &name, std::string_view bytes) {
  fs::path file = scratchFolder() / name;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) // the harness's problem, not the reader's: stop rather than fuzz nothing
    reportFinding(fmt::format("cannot write the scratch file {}", file.string()));
  return file;
}

void removeScratch(const std::string &name) {
  std::error_code ignored;
  fs::remove(scratchFolder() / name, ignored);
}

std::vector<std::string_view> splitParts(std::string_view text, size_t most) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < most && text.size() >= kPartSeparator.size()) {
    // memmem, not string_view::find: libFuzzer watches memmem's arguments and
    // so learns the separator by itself.
    const void *hit = memmem(text.data(), text.size(), kPartSeparator.data(), kPartSeparator.size());
    if (!hit)
      break;
    const auto at = static_cast<size_t>(static_cast<const char *>(hit) - text.data());
    parts.push_back(text.substr(0, at));
    text.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(text);
  return parts;
}

void writeOrRemoveScratch(const std::string &name, std::string_view part) {
  if (part.empty())
    removeScratch(name);
  else
    writeScratch(name, part);
}

} // namespace gnnjit::fuzz
