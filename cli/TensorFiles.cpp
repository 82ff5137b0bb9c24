#include "cli/TensorFiles.h"

#include "support/CheckedMath.h"
#include "support/Error.h"
#include "support/Message.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>

namespace gnnjit::cli {

namespace fs = std::filesystem;

namespace {

/// A header is a few dozen bytes; anything past this is not one.
constexpr size_t kMaxHeaderBytes = 64 * 1024;
/// Sizes past this could not be stored on any machine: a typo or garbage.
constexpr int64_t kMaxSide = int64_t{1} << 48;

void toHostOrder(double *values, size_t count) {
  if constexpr (std::endian::native == std::endian::big) {
    for (size_t k = 0; k < count; ++k) {
      unsigned char b[sizeof(double)];
      std::memcpy(b, &values[k], sizeof b);
      std::reverse(b, b + sizeof b);
      std::memcpy(&values[k], b, sizeof b);
    }
  }
}

std::string pathText(const fs::path &p) { return clipForMessage(p.string()); }

int64_t sizeField(const nlohmann::json &j, const char *key, std::string_view file) {
  if (!j.contains(key))
    throwUserError("'{}' has no \"{}\": a tensor header needs integer \"rows\" and \"cols\"", file, key);
  const nlohmann::json &v = j.at(key);
  if (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(kMaxSide))
    return static_cast<int64_t>(v.get<uint64_t>());
  if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= kMaxSide)
    return v.get<int64_t>();
  throwUserError("'{}': \"{}\" must be an integer from 0 to 2^48, found {}", file, key,
                 clipForMessage(v.dump(), 60));
}

void requireString(const nlohmann::json &j, const char *key, std::string_view want, std::string_view file) {
  if (!j.contains(key))
    return;
  const nlohmann::json &v = j.at(key);
  if (!v.is_string() || v.get<std::string>() != want)
    throwUserError("'{}': \"{}\" must be \"{}\" (or left out), found {}", file, key, want,
                   clipForMessage(v.dump(), 60));
}

} // namespace

TensorHeader parseTensorHeader(std::string_view text, std::string_view file) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    throwUserError("'{}' is not valid JSON; a tensor header looks like {{\"rows\": 3, \"cols\": 4}}", file);
  if (!j.is_object())
    throwUserError("'{}' must be a JSON object with integer \"rows\" and \"cols\"", file);
  for (const auto &[key, value] : j.items())
    if (key != "rows" && key != "cols" && key != "dtype" && key != "byte_order")
      throwUserError("'{}' has an unknown key \"{}\"; a tensor header has rows, cols, dtype and byte_order", file,
                     clipForMessage(key, 60));
  TensorHeader h;
  h.rows = sizeField(j, "rows", file);
  h.cols = sizeField(j, "cols", file);
  requireString(j, "dtype", "float64", file);
  requireString(j, "byte_order", "little", file);
  (void)checkedProduct({h.rows, h.cols, sizeof(double)}, fmt::format("the bytes of the tensor '{}' declares", file));
  return h;
}

TensorFileReader::TensorFileReader(const fs::path &dir, const std::string &name)
    : headerPath_(dir / (name + ".json")), dataPath_(dir / (name + ".bin")) {
  std::ifstream headerIn(headerPath_, std::ios::binary);
  if (!headerIn)
    throwUserError("cannot read '{}': every input needs NAME.json and NAME.bin in the --inputs folder",
                   pathText(headerPath_));
  std::string text(kMaxHeaderBytes + 1, '\0');
  headerIn.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(headerIn.gcount()));
  if (text.size() > kMaxHeaderBytes)
    throwUserError("'{}' is larger than any tensor header ({} KiB at most)", pathText(headerPath_),
                   kMaxHeaderBytes / 1024);
  header_ = parseTensorHeader(text, pathText(headerPath_));

  in_.open(dataPath_, std::ios::binary);
  if (!in_)
    throwUserError("cannot read '{}'", pathText(dataPath_));
  std::error_code ec;
  const uintmax_t bytes = fs::file_size(dataPath_, ec);
  remaining_ = static_cast<uint64_t>(header_.rows) * static_cast<uint64_t>(header_.cols); // checked by the parser
  if (ec || bytes != remaining_ * sizeof(double))
    throwUserError("'{}' holds {} bytes, but {} x {} float64 values are {} bytes", pathText(dataPath_),
                   ec ? 0 : bytes, header_.rows, header_.cols, remaining_ * sizeof(double));
}

void TensorFileReader::read(double *out, size_t count) {
  if (count > remaining_)
    throwInternalError("reading {} values from '{}', which has {} left", count, pathText(dataPath_), remaining_);
  in_.read(reinterpret_cast<char *>(out), static_cast<std::streamsize>(count * sizeof(double)));
  if (!in_)
    throwUserError("could not read all of '{}' (did it change while being read?)", pathText(dataPath_));
  toHostOrder(out, count);
  remaining_ -= count;
}

TensorFileWriter::TensorFileWriter(const fs::path &dir, const std::string &name, int64_t rows, int64_t cols)
    : dataPath_(dir / (name + ".bin")) {
  const fs::path header = dir / (name + ".json");
  const nlohmann::ordered_json j = {{"rows", rows}, {"cols", cols}, {"dtype", "float64"}, {"byte_order", "little"}};
  std::ofstream headerOut(header);
  headerOut << j.dump() << "\n";
  if (!headerOut)
    throwUserError("could not write '{}'", pathText(header));
  out_.open(dataPath_, std::ios::binary);
  if (!out_)
    throwUserError("could not write '{}'", pathText(dataPath_));
  remaining_ = checkedProduct({rows, cols}, "a dumped tensor's values");
}

void TensorFileWriter::write(const double *values, size_t count) {
  if (count > remaining_)
    throwInternalError("writing {} values to '{}', which takes {} more", count, pathText(dataPath_), remaining_);
  if constexpr (std::endian::native == std::endian::big) {
    std::vector<double> swapped(values, values + count);
    toHostOrder(swapped.data(), count); // the same swap both ways
    out_.write(reinterpret_cast<const char *>(swapped.data()), static_cast<std::streamsize>(count * sizeof(double)));
  } else {
    out_.write(reinterpret_cast<const char *>(values), static_cast<std::streamsize>(count * sizeof(double)));
  }
  if (!out_)
    throwUserError("could not write '{}' (is the disk full?)", pathText(dataPath_));
  remaining_ -= count;
}

void TensorFileWriter::finish() {
  if (remaining_ != 0)
    throwInternalError("'{}' closed with {} values unwritten", pathText(dataPath_), remaining_);
  out_.close();
  if (!out_)
    throwUserError("could not write '{}' (is the disk full?)", pathText(dataPath_));
}

ref::Tensor readTensorFile(const fs::path &dir, const std::string &name) {
  TensorFileReader reader(dir, name);
  ref::Tensor t(reader.rows(), reader.cols());
  reader.read(t.values.data(), t.values.size());
  return t;
}

void writeTensorFile(const fs::path &dir, const std::string &name, const ref::Tensor &tensor) {
  TensorFileWriter writer(dir, name, tensor.rows, tensor.cols);
  writer.write(tensor.values.data(), tensor.values.size());
  writer.finish();
}

} // namespace gnnjit::cli
