#include "runtime/Device.h"

#include "runtime/CudaCheck.h"
#include "support/Error.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace gnnjit::runtime {

bool hasCudaDevice() {
  static const bool present = [] {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    (void)cudaGetLastError(); // no device is an answer here, not an error to keep
    return status == cudaSuccess && count > 0;
  }();
  return present;
}

int currentDevice() {
  if (!hasCudaDevice())
    return -1;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return device;
}

DeviceMemoryInfo deviceMemoryInfo() {
  DeviceMemoryInfo info;
  GNNJIT_CUDA_CHECK(cudaMemGetInfo(&info.freeBytes, &info.totalBytes));
  return info;
}

std::string deviceName() {
  const int device = currentDevice();
  cudaDeviceProp props{};
  if (device < 0 || cudaGetDeviceProperties(&props, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return props.name;
}

int driverVersion() {
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return version;
}

std::optional<std::string> deviceArch() {
  int device = currentDevice();
  if (device < 0)
    return std::nullopt;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return fmt::format("sm_{}{}", major, minor);
}

namespace {

std::vector<int> nvrtcArchs() {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0)
    return {};
  std::vector<int> archs(static_cast<size_t>(count));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS)
    return {};
  return archs;
}

} // namespace

std::string validateArch(std::string_view arch) {
  std::string_view digits = arch.starts_with("sm_") ? arch.substr(3) : std::string_view{};
  if (digits.ends_with('a'))
    digits.remove_suffix(1);
  bool wellFormed = (digits.size() == 2 || digits.size() == 3) &&
                    std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); });
  if (!wellFormed)
    throwUserError("'{}' is not a GPU arch: write sm_NN or sm_NNa, e.g. sm_90 for H100/H200", arch);
  int number = std::stoi(std::string(digits));
  std::vector<int> supported = nvrtcArchs();
  if (!supported.empty() && std::find(supported.begin(), supported.end(), number) == supported.end())
    throwUserError("this NVRTC cannot compile for {}; it supports sm_{}", arch, fmt::join(supported, ", sm_"));
  return std::string(arch);
}

std::string targetArch(std::string_view forced) {
  if (!forced.empty())
    return validateArch(forced);
  return deviceArch().value_or(std::string(kCompileOnlyArch));
}

} // namespace gnnjit::runtime
