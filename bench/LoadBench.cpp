// Loader throughput: writes a generated graph of about --mb megabytes in each
// supported format, loads each three times, and prints the median speed. A
// program that prints a table, not a test.
#include "graph/io/GraphFile.h"
#include "support/Error.h"
#include "support/Random.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

using namespace gnnjit;
using namespace gnnjit::graph;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kNodes = 4'000'000; // ids of up to 7 digits, as in mid-size SNAP graphs
constexpr int kRuns = 3;

struct Options {
  uint64_t mb = 100;
  fs::path dir = fs::temp_directory_path();
};

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--mb" && i + 1 < argc) {
      options.mb = std::strtoull(argv[++i], nullptr, 10);
      if (options.mb == 0)
        throwUserError("--mb needs a positive number of megabytes");
    } else if (arg == "--dir" && i + 1 < argc) {
      options.dir = argv[++i];
    } else {
      throwUserError("usage: bench_load [--mb N (default 100)] [--dir PATH (default: the temp folder)]");
    }
  }
  return options;
}

/// A folder of its own inside `parent`, removed with everything in it.
class ScratchDir {
public:
  explicit ScratchDir(const fs::path &parent) {
    std::string pattern = (parent / "gnnjit-bench-load-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throwUserError("cannot create a folder in {}", parent.string());
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

/// The text of one file: an optional header that needs the final edge count,
/// and edge lines appended until the body reaches the target size.
struct Text {
  std::string body;
  int64_t edges = 0;
};

enum class Line { Snap, MtxPattern, MtxReal, Dimacs };

Text generateBody(Line kind, uint64_t bytes, uint64_t seed) {
  Text text;
  text.body.reserve(bytes + 64);
  Rng rng(seed);
  auto out = std::back_inserter(text.body);
  while (text.body.size() < bytes) {
    const uint64_t from = rng.below(kNodes), to = rng.below(kNodes);
    switch (kind) {
    case Line::Snap:
      fmt::format_to(out, "{}\t{}\n", from, to);
      break;
    case Line::MtxPattern:
      fmt::format_to(out, "{} {}\n", from + 1, to + 1);
      break;
    case Line::MtxReal:
      fmt::format_to(out, "{} {} {:.6g}\n", from + 1, to + 1, rng.uniform());
      break;
    case Line::Dimacs:
      fmt::format_to(out, "a {} {} {}\n", from + 1, to + 1, 1 + rng.below(1000));
      break;
    }
    ++text.edges;
  }
  return text;
}

void writeFile(const fs::path &file, std::string_view header, std::string_view body) {
  std::FILE *f = std::fopen(file.c_str(), "wb");
  if (!f)
    throwUserError("cannot write {}", file.string());
  const bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
                  std::fwrite(body.data(), 1, body.size(), f) == body.size();
  if (std::fclose(f) != 0 || !ok)
    throwUserError("cannot write {}", file.string());
}

void writeGzFile(const fs::path &file, std::string_view header, std::string_view body) {
  gzFile gz = gzopen(file.c_str(), "wb6");
  if (!gz)
    throwUserError("cannot write {}", file.string());
  bool ok = gzwrite(gz, header.data(), static_cast<unsigned>(header.size())) == static_cast<int>(header.size());
  for (size_t at = 0; ok && at < body.size(); at += size_t{1} << 24) {
    const auto piece = static_cast<unsigned>(std::min(body.size() - at, size_t{1} << 24));
    ok = gzwrite(gz, body.data() + at, piece) == static_cast<int>(piece);
  }
  if (gzclose(gz) != Z_OK || !ok)
    throwUserError("cannot write {}", file.string());
}

struct Case {
  std::string label;
  fs::path file;
  GraphFormat format;
  int64_t edges;
  uint64_t textBytes; ///< uncompressed size
};

std::vector<Case> writeCases(const fs::path &dir, uint64_t bytes) {
  std::vector<Case> cases;
  const std::string snapHeader = "# Directed graph (each unordered pair of nodes is saved once)\n"
                                 "# FromNodeId\tToNodeId\n";
  {
    const Text snap = generateBody(Line::Snap, bytes, 1);
    const uint64_t size = snapHeader.size() + snap.body.size();
    writeFile(dir / "snap.txt", snapHeader, snap.body);
    cases.push_back({"SNAP edge list", dir / "snap.txt", GraphFormat::EdgeListText, snap.edges, size});
    writeGzFile(dir / "snap.txt.gz", snapHeader, snap.body);
    cases.push_back({"SNAP edge list .gz", dir / "snap.txt.gz", GraphFormat::EdgeListText, snap.edges, size});
  }
  for (const auto &[kind, field, label, name] :
       {std::tuple{Line::MtxPattern, "pattern", "Matrix Market pattern", "pattern.mtx"},
        std::tuple{Line::MtxReal, "real", "Matrix Market real", "real.mtx"}}) {
    const Text mtx = generateBody(kind, bytes, 2);
    const std::string header = fmt::format("%%MatrixMarket matrix coordinate {} general\n{} {} {}\n", field, kNodes,
                                           kNodes, mtx.edges);
    writeFile(dir / name, header, mtx.body);
    cases.push_back({label, dir / name, GraphFormat::MatrixMarket, mtx.edges, header.size() + mtx.body.size()});
  }
  {
    const Text gr = generateBody(Line::Dimacs, bytes, 3);
    const std::string header = fmt::format("c generated\np sp {} {}\n", kNodes, gr.edges);
    writeFile(dir / "graph.gr", header, gr.body);
    cases.push_back({"DIMACS .gr", dir / "graph.gr", GraphFormat::Dimacs, gr.edges, header.size() + gr.body.size()});
  }
  return cases;
}

double secondsToLoad(const Case &c) {
  const auto start = std::chrono::steady_clock::now();
  const EdgeList edges = readGraphFile(c.file, c.format);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (edges.numEdges() != c.edges)
    throwInternalError("{} loaded {} edges, {} were written", c.file.string(), edges.numEdges(), c.edges);
  return seconds;
}

int run(const Options &options) {
  ScratchDir dir(options.dir);
  fmt::print("writing files of about {} MB in {} ...\n", options.mb, dir.path().string());
  std::fflush(stdout);
  const std::vector<Case> cases = writeCases(dir.path(), options.mb * 1'000'000);

  constexpr double kMB = 1e6;
  fmt::print("{:<22} {:>9} {:>9} {:>11} {:>9} {:>9} {:>10}\n", "format", "file MB", "text MB", "edges", "seconds",
             "MB/s", "text MB/s");
  for (const Case &c : cases) {
    std::vector<double> times;
    for (int r = 0; r < kRuns; ++r)
      times.push_back(secondsToLoad(c));
    std::sort(times.begin(), times.end());
    const double median = times[kRuns / 2];
    const double fileMB = static_cast<double>(fs::file_size(c.file)) / kMB;
    const double textMB = static_cast<double>(c.textBytes) / kMB;
    fmt::print("{:<22} {:>9.1f} {:>9.1f} {:>11} {:>9.3f} {:>9.1f} {:>10.1f}\n", c.label, fileMB, textMB, c.edges, median,
               fileMB / median, textMB / median);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(parseOptions(argc, argv));
  } catch (const std::exception &error) {
    fmt::print(stderr, "bench_load: {}\n", error.what());
    return 1;
  }
}
