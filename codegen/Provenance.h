// The comment block every generated kernel starts with: what it was generated
// from (layer, family, tuning parameters, degree bucket), by which generator
// and device helpers, and the SHA-256 of the text below the block, so an
// exported or dumped .cu can be traced and checked for edits.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gnnjit::codegen {

struct ProvenanceInfo {
  std::string layer;                         ///< the DSL layer's name
  std::string family;                        ///< "spmm", "reduction" or "attention"
  std::string kernel;                        ///< the entry point's name
  std::map<std::string, std::string> tuning; ///< printed sorted by key: key=value
  std::string degreeBucket;                  ///< which nodes this kernel serves, e.g. "light (deg <= 32)"
};

/// Lowercase hex SHA-256 of `text`.
std::string sha256Hex(std::string_view text);

/// SHA-256 over the names and texts of codegen::deviceHeaders().
const std::string &deviceHeadersHash();

/// The header followed by `body`. Fields are printed on one line each; control
/// characters and backslashes in them are escaped so a field can never end
/// the comment or splice the next line into it.
std::string withProvenance(const ProvenanceInfo &info, std::string body);

/// A source cut at the end of its provenance header.
struct ProvenanceParts {
  std::string_view header;
  std::string_view body;
  std::string_view recordedHash; ///< the hash the header states for the body
};

/// The parts of a source that withProvenance() produced; nothing when it does
/// not start with a provenance header.
std::optional<ProvenanceParts> splitProvenance(std::string_view source);

/// True when `source` has a provenance header whose hash matches its body.
bool provenanceIntact(std::string_view source);

} // namespace gnnjit::codegen
