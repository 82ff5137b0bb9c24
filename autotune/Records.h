// Tuning records as data: one JSON line per tuned stage, appended to a file
// under the kernel cache folder, keyed by what decides the best config (the
// layer's structure, the pass and stage, the graph's content, the width and
// heads, the GPU and the generator). Safe with concurrent writers: each line
// is one write(2) under an exclusive lock. A corrupt or foreign line is
// skipped, and counted, when the file is read.
#pragma once

#include "lower/TuneConfig.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gnnjit::autotune {

struct TuneKey {
  std::string layer; ///< the layer's structural hash (dsl::Layer::hashHex)
  std::string pass;  ///< "fwd" or "bwd"
  int64_t stage = 0; ///< the aggregation stage's index in the pass
  std::string graph; ///< GraphFingerprint::key
  int64_t width = 0; ///< floats per aggregated row
  int64_t heads = 1;
  std::string dtype = "f32";
  std::string gpu;      ///< the device's name
  std::string arch;     ///< "sm_NN"
  int driver = 0;       ///< the CUDA driver's version
  std::string generator; ///< codegen::kGeneratorVersion
  bool operator==(const TuneKey &) const = default;
};

struct TuneRecord {
  TuneKey key;
  lower::StageConfig config; ///< the winner
  double ms = 0;             ///< its median time
  double ruleMs = 0;         ///< the rule's config's median time
  int64_t candidates = 0;    ///< timed
};

/// A key on the current device: `layer` (a hash), `graph` (a fingerprint
/// key), the layer's width and heads, and this GPU's name, arch and driver
/// and this generator; pass and stage left for the caller.
TuneKey keyOnThisDevice(std::string layer, std::string graph, int64_t width, int64_t heads);

/// The record as one line of JSON (no newline), and back (std::invalid_argument
/// saying what is wrong for a line that is not a record of this format).
std::string recordLine(const TuneRecord &record);
TuneRecord recordFromLine(const std::string &line);

/// What a records file held.
struct LoadedRecords {
  std::vector<TuneRecord> records;
  int64_t skipped = 0;      ///< lines that were not records (corrupt, or another format's)
  std::string firstProblem; ///< why the first of them was skipped
  /// The last record of `key` (a later tuning supersedes an earlier one).
  std::optional<TuneRecord> find(const TuneKey &key) const;
};

class RecordStore {
public:
  explicit RecordStore(std::filesystem::path file) : file_(std::move(file)) {}
  /// The records file under a kernel cache folder.
  static RecordStore inCacheFolder(const std::filesystem::path &folder);
  const std::filesystem::path &file() const { return file_; }

  /// Appends `record` as one line (creating the file and its folder); a
  /// UserError naming the file when it cannot be written.
  void append(const TuneRecord &record) const;
  /// Every record of the file (none when it does not exist).
  LoadedRecords load() const;

private:
  std::filesystem::path file_;
};

} // namespace gnnjit::autotune
