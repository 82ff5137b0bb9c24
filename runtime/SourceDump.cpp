#include "runtime/SourceDump.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace gnnjit::runtime {

namespace fs = std::filesystem;

fs::path requestedDumpDir() {
  const char *env = std::getenv("GNNJIT_DUMP_DIR");
  return env && *env ? fs::path(env) : fs::path();
}

fs::path dumpDir() {
  fs::path dir = requestedDumpDir();
  return dir.empty() ? fs::temp_directory_path() / "gnnjit-dump" : dir;
}

namespace {

// Keeps file names portable whatever the source was called.
std::string sanitize(std::string_view name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ? c : '_';
  return out.empty() ? std::string("source") : out;
}

void writeFile(const fs::path &path, std::string_view text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out.flush())
    throwUserError("cannot write {}; set GNNJIT_DUMP_DIR to a writable folder", path.string());
}

// A header's own relative path when it stays inside the folder, else a flat name.
fs::path headerPath(std::string_view name) {
  fs::path path(name);
  bool inside = path.is_relative() && !path.empty();
  for (const auto &part : path)
    inside = inside && part != "..";
  return inside ? path : fs::path(sanitize(name));
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  }
  return lines;
}

} // namespace

fs::path dumpSource(const Source &source, std::string_view tag, const fs::path &dir) {
  std::string stem = sanitize(source.name);
  if (stem.ends_with(".cu"))
    stem.resize(stem.size() - 3);
  stem += fmt::format("-{}", tag);
  fs::path file = dir / (stem + ".cu");
  writeFile(file, source.text);
  for (const Header &header : source.headers)
    writeFile(dir / (stem + ".headers") / headerPath(header.name), header.text);
  return file;
}

std::set<int> blamedLines(std::string_view log, std::string_view sourceName) {
  std::set<int> lines;
  std::string prefix = std::string(sourceName) + "(";
  for (size_t at = log.find(prefix); at != std::string_view::npos; at = log.find(prefix, at + 1)) {
    // Only a match at the start of a log line is a location.
    if (at != 0 && log[at - 1] != '\n')
      continue;
    int line = 0;
    size_t i = at + prefix.size();
    while (i < log.size() && std::isdigit(static_cast<unsigned char>(log[i])))
      line = line * 10 + (log[i++] - '0');
    if (i < log.size() && log[i] == ')' && line > 0)
      lines.insert(line);
  }
  return lines;
}

std::string numberLines(std::string_view text, const std::set<int> &marked, size_t maxLines) {
  std::vector<std::string_view> lines = splitLines(text);
  const int count = static_cast<int>(lines.size());
  const size_t width = std::to_string(count).size();
  constexpr int kContext = 5;
  auto shown = [&](int line) {
    if (lines.size() <= maxLines)
      return true;
    if (marked.empty())
      return line <= static_cast<int>(maxLines);
    auto near = marked.lower_bound(line - kContext);
    return near != marked.end() && *near <= line + kContext;
  };
  std::string out;
  bool skipping = false;
  for (int line = 1; line <= count; ++line) {
    if (!shown(line)) {
      if (!skipping)
        out += fmt::format("{:>{}}   ...\n", "", width + 2);
      skipping = true;
      continue;
    }
    skipping = false;
    out += fmt::format("{}{:>{}} | {}\n", marked.count(line) ? "> " : "  ", line, width, lines[line - 1]);
  }
  return out;
}

} // namespace gnnjit::runtime
