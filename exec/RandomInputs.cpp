#include "exec/RandomInputs.h"

#include "exec/TensorOps.h"
#include "runtime/PhiloxUniform.h"
#include "support/CheckedMath.h"
#include "support/Random.h"

#include <algorithm>
#include <vector>

namespace gnnjit::exec {

namespace {

/// The map from cuRAND's (0, 1] to (-1, 1]; exact in float (2u is exact),
/// so the host and the device agree bit for bit whether or not the device
/// fuses it into one multiply-add.
constexpr float kScale = 2.0f, kShift = -1.0f;
/// Host values are made in blocks, so no second full-size float copy exists.
constexpr size_t kHostBlock = size_t{1} << 22;

} // namespace

uint64_t tensorSeed(uint64_t seed, uint64_t stream) {
  uint64_t state = seed ^ (stream * 0xD1B54A32D192ED03ull);
  return splitMix64(state);
}

ref::Tensor randomHostTensor(int64_t rows, int64_t cols, uint64_t seed) {
  (void)checkedProduct({rows, cols, static_cast<int64_t>(sizeof(double))}, "a random input tensor");
  ref::Tensor t(rows, cols);
  // One sequence over the whole tensor, as on the device, made a block at a
  // time from its offset.
  std::vector<float> block(std::min(kHostBlock, t.values.size()));
  for (size_t begin = 0; begin < t.values.size(); begin += block.size()) {
    const size_t count = std::min(block.size(), t.values.size() - begin);
    runtime::philoxUniformHost(block.data(), count, seed, begin);
    for (size_t k = 0; k < count; ++k)
      t.values[begin + k] = static_cast<double>(block[k] * kScale + kShift);
  }
  return t;
}

void fillRandom(const DeviceTensor &t, uint64_t seed, cudaStream_t stream) {
  runtime::philoxUniformDevice(t.data, static_cast<size_t>(t.rows * t.cols), seed, stream);
  affineInPlace(t, kScale, kShift, stream);
}

} // namespace gnnjit::exec
