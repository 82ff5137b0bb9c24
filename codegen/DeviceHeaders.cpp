#include "codegen/DeviceHeaders.h"

#include "support/Error.h"

#include <algorithm>

namespace gnnjit::codegen {

// Defined in the file EmbedDeviceHeaders.cmake writes at build time.
namespace embedded {
extern const DeviceHeader kDeviceHeaders[];
extern const size_t kDeviceHeaderCount;
} // namespace embedded

std::span<const DeviceHeader> deviceHeaders() { return {embedded::kDeviceHeaders, embedded::kDeviceHeaderCount}; }

std::string_view deviceHeader(std::string_view name) {
  std::span<const DeviceHeader> all = deviceHeaders();
  auto found = std::lower_bound(all.begin(), all.end(), name,
                                [](const DeviceHeader &header, std::string_view key) { return header.name < key; });
  if (found == all.end() || found->name != name)
    throwInternalError("no embedded device header named '{}'", name);
  return found->text;
}

} // namespace gnnjit::codegen
