// Which GPU, if any, kernels are compiled for.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gnnjit::runtime {

/// The arch compiled for when there is no device and none was asked for (H200).
inline constexpr std::string_view kCompileOnlyArch = "sm_90";

/// Whether a CUDA device and a driver to reach it are present. Checked once per
/// process; false on a machine without a GPU or without libcuda.
bool hasCudaDevice();

/// The current device's ordinal, or -1 when there is no device.
int currentDevice();

/// Device memory free now and in all (cudaMemGetInfo), for preflights.
struct DeviceMemoryInfo {
  size_t freeBytes = 0, totalBytes = 0;
};
/// Of the current device; throws CudaError without one.
DeviceMemoryInfo deviceMemoryInfo();

/// "sm_XY" of the current device, or nothing when there is none (compile-only).
std::optional<std::string> deviceArch();

/// The current device's name ("NVIDIA H200"), or empty without one.
std::string deviceName();
/// The CUDA driver's version (13000 for 13.0), or 0 without a driver.
int driverVersion();

/// Returns `arch` when it is "sm_NN" or "sm_NNa" (NN: 2 or 3 digits) and this
/// NVRTC can target it; otherwise throws UserError saying what is accepted.
std::string validateArch(std::string_view arch);

/// The arch to compile for: `forced` (validated) when given, else the
/// device's, else kCompileOnlyArch.
std::string targetArch(std::string_view forced = {});

} // namespace gnnjit::runtime
