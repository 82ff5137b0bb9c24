// The device helper headers (codegen/device/*.cuh), embedded into the library
// at build time. Generated kernels `#include "gnnjit/gnnjit_device.cuh"`;
// NVRTC is handed these texts under these names, and `export` writes them
// beside the .cu so nvcc finds them with -I.
#pragma once

#include <span>
#include <string_view>

namespace gnnjit::codegen {

struct DeviceHeader {
  std::string_view name; ///< as included, e.g. "gnnjit/warp.cuh"
  std::string_view text;
};

/// The header that includes all others.
inline constexpr std::string_view kDeviceUmbrellaHeader = "gnnjit/gnnjit_device.cuh";

/// Every embedded header, sorted by name.
std::span<const DeviceHeader> deviceHeaders();

/// The text of the header `name`. Throws InternalError for an unknown name.
std::string_view deviceHeader(std::string_view name);

} // namespace gnnjit::codegen
