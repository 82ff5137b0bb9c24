#include "graph/io/GraphFile.h"

#include "graph/io/Dimacs.h"
#include "graph/io/EdgeListText.h"
#include "graph/io/MatrixMarket.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace gnnjit::graph {

namespace {

std::string lowerExtension(const std::filesystem::path &file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

} // namespace

GraphFormat guessGraphFormat(const std::filesystem::path &file) {
  std::filesystem::path name = file.filename();
  if (lowerExtension(name) == ".gz")
    name = name.stem();
  const std::string ext = lowerExtension(name);
  if (ext == ".mtx")
    return GraphFormat::MatrixMarket;
  if (ext == ".gr")
    return GraphFormat::Dimacs;
  return GraphFormat::EdgeListText;
}

EdgeList readGraphFile(const std::filesystem::path &file) { return readGraphFile(file, guessGraphFormat(file)); }

EdgeList readGraphFile(const std::filesystem::path &file, GraphFormat format) {
  switch (format) {
  case GraphFormat::MatrixMarket:
    return readMatrixMarketGraph(file);
  case GraphFormat::Dimacs:
    return readDimacsGraph(file);
  case GraphFormat::EdgeListText:
    break;
  }
  return readEdgeListText(file);
}

} // namespace gnnjit::graph
