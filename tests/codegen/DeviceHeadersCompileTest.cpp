// NVRTC compiles the device helpers for sm_90 from the embedded texts, with
// no GPU: the same instantiation file the nvcc ctest compiles from disk.
#include "codegen/DeviceHeaders.h"
#include "codegen/Provenance.h"

#include "runtime/Compile.h"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace gnnjit::codegen {
namespace {

std::vector<runtime::Header> embeddedHeaders() {
  std::vector<runtime::Header> out;
  for (const DeviceHeader &header : deviceHeaders())
    out.push_back({std::string(header.name), std::string(header.text)});
  return out;
}

std::string instantiationSource() {
  std::ifstream in(GNNJIT_DEVICE_INSTANTIATION_CU, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " GNNJIT_DEVICE_INSTANTIATION_CU);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("NVRTC compiles every device helper for sm_90 without warnings") {
  runtime::Source source{"DeviceHeadersInstantiate.cu", instantiationSource(), embeddedHeaders()};
  runtime::CompiledKernel kernel = runtime::compileToCubin(source, runtime::CompileOptions{});
  CHECK_MESSAGE(kernel.log.empty(), kernel.log);
  CHECK(kernel.cubin.size() > 4);
  CHECK(kernel.ptx.find(".target sm_90") != std::string::npos);
  for (const char *entry : {"gnnjit_test_warp", "gnnjit_test_vector_load", "gnnjit_test_convert",
                            "gnnjit_test_packed_atomic", "gnnjit_test_online_softmax"}) {
    CAPTURE(entry);
    CHECK(kernel.ptx.find(std::string(".entry ") + entry) != std::string::npos);
  }
}

TEST_CASE("a kernel with a provenance header compiles and keeps its hash") {
  ProvenanceInfo info{"test", "spmm", "scale", {{"vec", "4"}}, "all"};
  std::string text = withProvenance(info, "#include \"gnnjit/gnnjit_device.cuh\"\n"
                                          "extern \"C\" __global__ void scale(const float *x, float *y, int n) {\n"
                                          "  float v[4];\n"
                                          "  const int i = 4 * (blockIdx.x * blockDim.x + threadIdx.x);\n"
                                          "  gnnjit::device::ldgVec(x + i, n - i, v);\n"
                                          "  for (float &e : v)\n"
                                          "    e *= 2.0f;\n"
                                          "  gnnjit::device::storeVec(y + i, n - i, v);\n"
                                          "}\n");
  CHECK(provenanceIntact(text));
  runtime::CompiledKernel kernel =
      runtime::compileToCubin({"scale.cu", text, embeddedHeaders()}, runtime::CompileOptions{});
  CHECK(kernel.ptx.find(".entry scale") != std::string::npos);
}

} // namespace
} // namespace gnnjit::codegen
