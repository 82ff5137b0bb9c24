#include "graph/GraphSource.h"

#include "graph/generate/GeneratorSpec.h"
#include "graph/io/GraphFile.h"
#include "support/Error.h"
#include "support/Message.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace gnnjit::graph {

namespace fs = std::filesystem;

std::vector<fs::path> datasetSearchPath() {
  std::vector<fs::path> path;
  if (const char *env = std::getenv("GNNJIT_DATA")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      if (colon != 0)
        path.emplace_back(rest.substr(0, colon));
      if (colon == std::string_view::npos)
        break;
      rest.remove_prefix(colon + 1);
    }
  }
  path.emplace_back("data");
  path.emplace_back(fs::path("..") / "shared" / "datasets");
  return path;
}

namespace {

/// What is at `path`: nothing (not_found), a folder, a file... A filesystem
/// error other than "nothing there" (a name too long, a loop of symbolic
/// links, no permission) is the user's to fix, so it says which path.
fs::file_type typeAt(const fs::path &path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    throwUserError("cannot access '{}': {}", clipForMessage(path.string()), ec.message());
  return status.type();
}

bool looksLikeGraphFile(const fs::path &file) {
  std::string name = file.filename().string();
  if (name.size() > 3 && name.ends_with(".gz"))
    name.resize(name.size() - 3);
  for (std::string_view ext : {".mtx", ".gr", ".txt", ".el", ".edges", ".tsv", ".csv"})
    if (name.ends_with(ext) && name != "README.txt")
      return true;
  return false;
}

Dataset loadFolder(const fs::path &folder) {
  if (isDatasetFolder(folder))
    return loadDatasetFolder(folder);
  std::vector<fs::path> candidates;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ignored; // an entry that cannot be read is not a candidate
    if (it->is_regular_file(ignored) && looksLikeGraphFile(it->path()))
      candidates.push_back(it->path());
  }
  if (ec)
    throwUserError("cannot list folder '{}': {}", clipForMessage(folder.string()), ec.message());
  std::sort(candidates.begin(), candidates.end());
  if (candidates.size() != 1) {
    std::string listed;
    for (const auto &c : candidates)
      listed += fmt::format(" {}", c.filename().string());
    throwUserError("folder {} holds no graph.mtx and {} graph files{}; name the file to load instead",
                   folder.string(), candidates.size(), candidates.empty() ? "" : fmt::format(" ({} )", listed));
  }
  Dataset d;
  d.name = folder.filename().string();
  d.edges = readGraphFile(candidates.front());
  return d;
}

Dataset loadPath(const fs::path &path) {
  if (typeAt(path) == fs::file_type::directory)
    return loadFolder(path);
  Dataset d;
  d.name = path.filename().string();
  d.edges = readGraphFile(path);
  return d;
}

} // namespace

Dataset loadGraphSource(std::string_view spec) {
  if (spec.empty())
    throwUserError("no graph given; name a file, a dataset folder, a dataset, or a generator spec");
  if (isGeneratorSpec(spec)) {
    Dataset d;
    d.name = std::string(spec);
    d.edges = generateFromSpec(spec);
    return d;
  }
  const fs::path asPath{std::string(spec)};
  if (typeAt(asPath) != fs::file_type::not_found)
    return loadPath(asPath);
  std::string searched;
  if (asPath.is_relative() && !asPath.has_parent_path()) {
    for (const fs::path &dir : datasetSearchPath()) {
      const fs::path candidate = dir / asPath;
      if (typeAt(candidate) == fs::file_type::directory)
        return loadFolder(candidate);
      searched += fmt::format("\n  {}", candidate.string());
    }
  }
  throwUserError("no graph '{}': it is not a file, a folder, or a generator spec{}{}\ngenerators:\n{}",
                 clipForMessage(spec),
                 searched.empty() ? "" : "; looked for a dataset folder at:", searched, generatorHelp());
}

} // namespace gnnjit::graph
