#include "autotune/ConfigJson.h"

#include <stdexcept>
#include <string>

namespace gnnjit::autotune {

using nlohmann::json;

namespace {

json tilingJson(const lower::RowTiling &t) {
  return {{"group", t.group},
          {"chunks", t.chunks},
          {"vec", t.vec},
          {"block", t.blockThreads},
          {"heavy_threshold", t.heavyThreshold},
          {"segment_length", t.segmentLength},
          {"segment_group", t.segmentGroup},
          {"segment_chunks", t.segmentChunks}};
}

template <typename T> T field(const json &j, const char *name) {
  if (!j.contains(name))
    throw std::invalid_argument(std::string("config without \"") + name + "\"");
  try {
    return j.at(name).get<T>();
  } catch (const json::exception &) {
    throw std::invalid_argument(std::string("config field \"") + name + "\" of the wrong type");
  }
}

void readTiling(const json &j, lower::RowTiling &t) {
  t.group = field<int>(j, "group");
  t.chunks = field<int>(j, "chunks");
  t.vec = field<int>(j, "vec");
  t.blockThreads = field<int>(j, "block");
  t.heavyThreshold = field<int64_t>(j, "heavy_threshold");
  t.segmentLength = field<int64_t>(j, "segment_length");
  t.segmentGroup = field<int>(j, "segment_group");
  t.segmentChunks = field<int>(j, "segment_chunks");
}

} // namespace

json configJson(const lower::StageConfig &config) {
  struct ToJson {
    json operator()(std::monostate) const { return {{"family", "none"}}; }
    json operator()(const lower::SpmmConfig &c) const {
      json j = tilingJson(c);
      j["family"] = "spmm";
      j["backend"] = c.backend == lower::SpmmConfig::Backend::Cusparse ? "cusparse" : "generated";
      j["cusparse_algorithm"] = c.cusparseAlgorithm;
      return j;
    }
    json operator()(const lower::ReductionConfig &c) const {
      json j = tilingJson(c);
      j["family"] = "reduction";
      j["arg_scatter"] = c.argScatter;
      j["packed_merge"] = c.packedMerge;
      return j;
    }
    json operator()(const lower::AttentionConfig &c) const {
      json j = tilingJson(c);
      j["family"] = "attention";
      j["range_edges"] = c.rangeEdges;
      j["fuse_backward"] = c.fuseBackward;
      j["padded_dim"] = c.paddedDim;
      return j;
    }
  };
  return std::visit(ToJson{}, config);
}

lower::StageConfig configFromJson(const json &j) {
  if (!j.is_object())
    throw std::invalid_argument("config is not an object");
  const std::string family = field<std::string>(j, "family");
  if (family == "none")
    return std::monostate{};
  if (family == "spmm") {
    lower::SpmmConfig c;
    readTiling(j, c);
    const std::string backend = field<std::string>(j, "backend");
    if (backend != "generated" && backend != "cusparse")
      throw std::invalid_argument("unknown SpMM backend \"" + backend + "\"");
    c.backend = backend == "cusparse" ? lower::SpmmConfig::Backend::Cusparse : lower::SpmmConfig::Backend::Generated;
    c.cusparseAlgorithm = field<int>(j, "cusparse_algorithm");
    // Records of older versions may name ALG3, which is no longer used.
    if (c.cusparseAlgorithm < 0 || c.cusparseAlgorithm > 2)
      throw std::invalid_argument("cuSPARSE algorithm " + std::to_string(c.cusparseAlgorithm) + " (0, 1 or 2)");
    return c;
  }
  if (family == "reduction") {
    lower::ReductionConfig c;
    readTiling(j, c);
    c.argScatter = field<bool>(j, "arg_scatter");
    c.packedMerge = field<bool>(j, "packed_merge");
    return c;
  }
  if (family == "attention") {
    lower::AttentionConfig c;
    readTiling(j, c);
    c.rangeEdges = field<int64_t>(j, "range_edges");
    c.fuseBackward = field<bool>(j, "fuse_backward");
    c.paddedDim = field<int64_t>(j, "padded_dim");
    return c;
  }
  throw std::invalid_argument("unknown config family \"" + family + "\"");
}

} // namespace gnnjit::autotune
