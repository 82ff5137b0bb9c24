#include "cli/TensorFiles.h"

#include "support/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>

namespace gnnjit::cli {

namespace fs = std::filesystem;

namespace {

void swapBytesIfBigEndian(std::vector<double> &values) {
  if constexpr (std::endian::native == std::endian::big) {
    for (double &v : values) {
      unsigned char b[sizeof(double)];
      std::memcpy(b, &v, sizeof b);
      std::reverse(b, b + sizeof b);
      std::memcpy(&v, b, sizeof b);
    }
  }
}

} // namespace

ref::Tensor readTensorFile(const fs::path &dir, const std::string &name) {
  const fs::path header = dir / (name + ".json"), data = dir / (name + ".bin");
  std::ifstream headerIn(header);
  if (!headerIn)
    throwUserError("cannot read '{}': every input needs NAME.json and NAME.bin in the --inputs folder",
                   header.string());
  nlohmann::json j;
  try {
    headerIn >> j;
  } catch (const nlohmann::json::exception &e) {
    throwUserError("'{}' is not valid JSON: {}", header.string(), e.what());
  }
  if (!j.is_object() || !j.contains("rows") || !j.contains("cols") || !j["rows"].is_number_integer() ||
      !j["cols"].is_number_integer())
    throwUserError("'{}' must be an object with integer \"rows\" and \"cols\"", header.string());
  if (j.value("dtype", std::string("float64")) != "float64")
    throwUserError("'{}': dtype must be \"float64\"", header.string());
  if (j.value("byte_order", std::string("little")) != "little")
    throwUserError("'{}': byte_order must be \"little\"", header.string());
  const int64_t rows = j["rows"], cols = j["cols"];
  if (rows < 0 || cols < 0)
    throwUserError("'{}': rows and cols must not be negative", header.string());
  std::ifstream in(data, std::ios::binary);
  if (!in)
    throwUserError("cannot read '{}'", data.string());
  std::error_code ec;
  const auto bytes = fs::file_size(data, ec);
  const uint64_t want = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) * sizeof(double);
  if (ec || bytes != want)
    throwUserError("'{}' holds {} bytes, but {} x {} float64 values are {} bytes", data.string(), ec ? 0 : bytes, rows,
                   cols, want);
  ref::Tensor t(rows, cols);
  in.read(reinterpret_cast<char *>(t.values.data()), static_cast<std::streamsize>(want));
  if (!in)
    throwUserError("could not read all of '{}'", data.string());
  swapBytesIfBigEndian(t.values);
  return t;
}

void writeTensorFile(const fs::path &dir, const std::string &name, const ref::Tensor &tensor) {
  const nlohmann::ordered_json j = {
      {"rows", tensor.rows}, {"cols", tensor.cols}, {"dtype", "float64"}, {"byte_order", "little"}};
  std::ofstream(dir / (name + ".json")) << j.dump() << "\n";
  std::vector<double> values = tensor.values;
  swapBytesIfBigEndian(values);
  std::ofstream out(dir / (name + ".bin"), std::ios::binary);
  out.write(reinterpret_cast<const char *>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(double)));
  if (!out)
    throwUserError("could not write '{}'", (dir / (name + ".bin")).string());
}

} // namespace gnnjit::cli
