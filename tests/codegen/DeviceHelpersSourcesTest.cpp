// The kernels of test_codegen_device_gpu compile for sm_90 with NVRTC, no GPU
// needed: a broken test kernel fails here on every machine, not only on one
// with a device.
#include "DeviceHelperKernels.h"

#include "runtime/Compile.h"

#include <doctest/doctest.h>

#include <string>

namespace gnnjit::test {
namespace {

TEST_CASE("the device helper test kernels compile for sm_90 without warnings") {
  for (const DeviceHelperKernel &kernel : deviceHelperKernels()) {
    CAPTURE(kernel.source.name);
    runtime::CompiledKernel compiled = runtime::compileToCubin(kernel.source, runtime::CompileOptions{});
    CHECK(compiled.log.empty());
    CHECK(compiled.cubin.size() > 4);
    CHECK(compiled.ptx.find(".target sm_90") != std::string::npos);
    for (const std::string &entry : kernel.entries) {
      CAPTURE(entry);
      CHECK(compiled.ptx.find(".entry " + entry + "(") != std::string::npos);
    }
  }
}

} // namespace
} // namespace gnnjit::test
