#include "graph/io/Dataset.h"

#include "graph/io/IdList.h"
#include "graph/io/MatrixMarket.h"
#include "support/Error.h"

#include <optional>
#include <system_error>

namespace gnnjit::graph {

namespace {

namespace fs = std::filesystem;

/// `folder/name`, or `folder/name.gz`, if either is a file.
std::optional<fs::path> findPart(const fs::path &folder, const std::string &name) {
  std::error_code ignored;
  for (const fs::path &candidate : {folder / name, folder / (name + ".gz")})
    if (fs::exists(candidate, ignored))
      return candidate;
  return std::nullopt;
}

std::string folderName(const fs::path &folder) {
  std::error_code ignored;
  fs::path full = fs::absolute(folder, ignored).lexically_normal();
  if (!full.has_filename()) // "cora/" normalises to a trailing separator
    full = full.parent_path();
  return full.filename().string();
}

} // namespace

bool isDatasetFolder(const fs::path &folder) {
  std::error_code ignored;
  return fs::is_directory(folder, ignored) && findPart(folder, "graph.mtx").has_value();
}

Dataset loadDatasetFolder(const fs::path &folder) {
  std::error_code ignored;
  if (!fs::is_directory(folder, ignored))
    throwUserError("cannot open dataset folder {}: not a directory", folder.string());
  const auto graphFile = findPart(folder, "graph.mtx");
  if (!graphFile)
    throwUserError("{} is not a dataset folder: it has no graph.mtx (or graph.mtx.gz)", folder.string());

  Dataset data;
  data.name = folderName(folder);
  data.edges = readMatrixMarketGraph(*graphFile);
  const int64_t nodes = data.edges.numNodes;

  if (const auto file = findPart(folder, "features.mtx")) {
    data.features = readMatrixMarketDense(*file);
    if (data.features->rows != nodes)
      throwUserError("{}: expected one feature row per node ({} rows, as {} has {} nodes), found {} rows",
                     file->string(), nodes, graphFile->filename().string(), nodes, data.features->rows);
  }
  if (const auto file = findPart(folder, "labels.txt")) {
    data.labels = readIdList(*file);
    if (static_cast<int64_t>(data.labels.size()) != nodes)
      throwUserError("{}: expected one label per node ({} labels, as {} has {} nodes), found {} labels",
                     file->string(), nodes, graphFile->filename().string(), nodes, data.labels.size());
  }
  const std::pair<const char *, std::vector<int64_t> *> splits[] = {
      {"train.txt", &data.train}, {"val.txt", &data.val}, {"test.txt", &data.test}};
  for (const auto &[name, ids] : splits)
    if (const auto file = findPart(folder, name))
      *ids = readIdSet(*file, nodes);
  return data;
}

} // namespace gnnjit::graph
