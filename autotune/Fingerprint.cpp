#include "autotune/Fingerprint.h"

#include "graph/DegreeStats.h"
#include "runtime/Hash.h"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Parallel.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>

namespace gnnjit::autotune {

namespace {

/// histogram[d] (nodes of degree d) in buckets 0, 1, [2, 3], [4, 7], ...
std::vector<int64_t> log2Buckets(const std::vector<int64_t> &histogram) {
  std::vector<int64_t> buckets;
  for (size_t d = 0; d < histogram.size(); ++d) {
    size_t b = 0;
    while (d >> b > 0)
      ++b; // d in [2^(b-1), 2^b)
    if (buckets.size() <= b)
      buckets.resize(b + 1, 0);
    buckets[b] += histogram[d];
  }
  return buckets;
}

/// Arrays longer than this are hashed in chunks of it, on all cores.
constexpr size_t kChunkBytes = size_t{4} << 20;

/// xxHash64 of the bytes, or for longer arrays xxHash64 of the chunks'
/// xxHash64s (the same whatever the thread count): `run` fingerprints the
/// graph to find its tuning records, and one thread hashing a 17M-edge
/// CSR took 11 to 19 ms.
template <typename T> uint64_t bytesHash(const std::vector<T> &v) {
  const auto *bytes = reinterpret_cast<const char *>(v.data());
  const size_t size = v.size() * sizeof(T);
  if (size <= kChunkBytes)
    return llvm::xxHash64(llvm::StringRef(bytes, size));
  std::vector<uint64_t> chunks((size + kChunkBytes - 1) / kChunkBytes);
  llvm::parallelForEachN(0, chunks.size(), [&](size_t k) {
    const size_t begin = k * kChunkBytes;
    chunks[k] = llvm::xxHash64(llvm::StringRef(bytes + begin, std::min(kChunkBytes, size - begin)));
  });
  return llvm::xxHash64(
      llvm::StringRef(reinterpret_cast<const char *>(chunks.data()), chunks.size() * sizeof(uint64_t)));
}

} // namespace

GraphFingerprint fingerprint(const graph::Graph &graph) {
  GraphFingerprint f;
  f.nodes = graph.numNodes();
  f.edges = graph.numEdges();
  f.inBuckets = log2Buckets(graph.stats().in.histogram);
  f.outBuckets = log2Buckets(graph.stats().out.histogram);
  // xxHash64 runs at memory speed (a 16M-edge CSR in milliseconds, less
  // in chunks on several cores), where SHA-256 would take a good part of a
  // second.
  const graph::Csr &csr = graph.incoming();
  const auto [offsets, indices] =
      csr.visit([](const auto &a) { return std::pair{bytesHash(a.offsets), bytesHash(a.indices)}; });
  f.csrHash = fmt::format("{:016x}{:016x}{:016x}", offsets, indices, bytesHash(csr.weights()));
  return f;
}

std::string GraphFingerprint::key() const {
  runtime::KeyHasher h;
  h.add(fmt::format("{} {}", nodes, edges)).add(fmt::format("{}", fmt::join(inBuckets, ",")));
  h.add(fmt::format("{}", fmt::join(outBuckets, ","))).add(csrHash);
  return fmt::format("n{}-e{}-{}", nodes, edges, h.hex().substr(0, 16));
}

} // namespace gnnjit::autotune
