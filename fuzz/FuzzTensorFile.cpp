// Tensor files (cli/TensorFiles.h): the input is cut at kPartSeparator into
// NAME.json and NAME.bin (no separator: no .bin), read as `run --inputs`
// does, block by block.
#include "FuzzSupport.h"

#include "cli/TensorFiles.h"

#include <algorithm>
#include <vector>

using namespace gnnjit;

namespace {

constexpr size_t kBlock = 1000;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const auto parts = fuzz::splitParts(fuzz::asText(data, size), 2);
  fuzz::writeScratch("t.json", parts[0]);
  if (parts.size() > 1)
    fuzz::writeScratch("t.bin", parts[1]);
  else
    fuzz::removeScratch("t.bin");

  fuzz::readOrRefuse("TensorFileReader", [&] {
    cli::TensorFileReader reader(fuzz::scratchFolder(), "t");
    fuzz::require(reader.rows() >= 0 && reader.cols() >= 0, "non-negative tensor sizes");
    const auto values = static_cast<uint64_t>(reader.rows()) * static_cast<uint64_t>(reader.cols());
    fuzz::require(parts.size() > 1 && values * sizeof(double) == parts[1].size(),
                  "the .bin holds exactly rows x cols float64 values");
    std::vector<double> block(kBlock);
    for (uint64_t left = values; left > 0;) {
      const size_t count = static_cast<size_t>(std::min<uint64_t>(left, kBlock));
      reader.read(block.data(), count);
      left -= count;
    }
    return values;
  });
  return 0;
}
