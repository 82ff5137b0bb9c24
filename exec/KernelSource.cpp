#include "exec/KernelSource.h"

#include "codegen/DeviceHeaders.h"
#include "codegen/Version.h"

namespace gnnjit::exec {

runtime::Source kernelSource(const std::string &name, const std::string &text) {
  runtime::Source source{name, text, {}};
  for (const codegen::DeviceHeader &h : codegen::deviceHeaders())
    source.headers.push_back({std::string(h.name), std::string(h.text)});
  return source;
}

runtime::Source kernelSource(const codegen::GeneratedModule &module) {
  return kernelSource(module.name + ".cu", module.source);
}

runtime::KernelCache &defaultKernelCache() {
  static runtime::KernelCache cache(runtime::KernelCacheConfig{{}, codegen::kGeneratorVersion});
  return cache;
}

} // namespace gnnjit::exec
