// The tensor kernels and random inputs, without a GPU: NVRTC compiles the
// module for sm_90, and the host's random inputs are deterministic, in
// range, and the same whether made in one block or many.
#include "exec/KernelSource.h"
#include "exec/RandomInputs.h"
#include "exec/TensorOps.h"
#include "runtime/Compile.h"
#include "runtime/PhiloxUniform.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace gnnjit;

TEST_CASE("the tensor-ops module compiles for sm_90 without warnings") {
  runtime::CompileOptions options;
  options.arch = "sm_90";
  const runtime::CompiledKernel k =
      runtime::compileToCubin(exec::kernelSource("gnnjit_tensor_ops.cu", "#include \"gnnjit/tensor_ops.cuh\"\n"), options);
  CHECK(k.log.empty());
  CHECK(k.ptx.find(".entry gnnjit_tensor_checksum") != std::string::npos);
  CHECK(k.ptx.find(".entry gnnjit_tensor_affine") != std::string::npos);
}

TEST_CASE("random host tensors: deterministic, in (-1, 1], independent per seed") {
  const ref::Tensor a = exec::randomHostTensor(37, 5, 42), b = exec::randomHostTensor(37, 5, 42);
  CHECK(a.values == b.values);
  const ref::Tensor c = exec::randomHostTensor(37, 5, 43);
  CHECK(a.values != c.values);
  double sum = 0;
  for (double v : a.values) {
    CHECK(v > -1.0);
    CHECK(v <= 1.0);
    CHECK(static_cast<double>(static_cast<float>(v)) == v); // floats, as the device holds them
    sum += v;
  }
  CHECK(std::fabs(sum / static_cast<double>(a.values.size())) < 0.2);
  CHECK(exec::tensorSeed(0, 1) != exec::tensorSeed(0, 2));
  CHECK(exec::tensorSeed(0, 1) != exec::tensorSeed(1, 1));
}

TEST_CASE("a tensor made in blocks equals one made in one go") {
  // More values than one host block (2^22), so the offset path runs.
  const int64_t rows = 3001, cols = 1500;
  const ref::Tensor t = exec::randomHostTensor(rows, cols, 7);
  std::vector<float> once(static_cast<size_t>(rows * cols));
  runtime::philoxUniformHost(once.data(), once.size(), 7);
  int64_t mismatches = 0;
  for (size_t k = 0; k < once.size(); ++k)
    mismatches += t.values[k] != static_cast<double>(once[k] * 2.0f - 1.0f);
  CHECK(mismatches == 0);
}

TEST_CASE("host checksums leave non-finite values out and count them") {
  ref::Tensor t(2, 2);
  t.values = {1.0, -3.0, NAN, INFINITY};
  const exec::Checksum c = exec::checksum(t);
  CHECK(c.sum == -2.0);
  CHECK(c.sumSq == 10.0);
  CHECK(c.maxAbs == 3.0);
  CHECK(c.nonFinite == 2);
}
