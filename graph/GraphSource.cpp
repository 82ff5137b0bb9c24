#include "graph/GraphSource.h"

#include "graph/generate/GeneratorSpec.h"
#include "graph/io/GraphFile.h"
#include "support/Error.h"

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
  for (const auto &entry : fs::directory_iterator(folder))
    if (entry.is_regular_file() && looksLikeGraphFile(entry.path()))
      candidates.push_back(entry.path());
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
  if (fs::is_directory(path))
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
  if (fs::exists(asPath))
    return loadPath(asPath);
  std::string searched;
  if (asPath.is_relative() && !asPath.has_parent_path()) {
    for (const fs::path &dir : datasetSearchPath()) {
      const fs::path candidate = dir / asPath;
      if (fs::is_directory(candidate))
        return loadFolder(candidate);
      searched += fmt::format("\n  {}", candidate.string());
    }
  }
  throwUserError("no graph '{}': it is not a file, a folder, or a generator spec{}{}\ngenerators:\n{}", spec,
                 searched.empty() ? "" : "; looked for a dataset folder at:", searched, generatorHelp());
}

} // namespace gnnjit::graph
