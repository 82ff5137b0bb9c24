#include "exec/KernelSource.h"

#include "codegen/DeviceHeaders.h"

namespace gnnjit::exec {

runtime::Source kernelSource(const codegen::GeneratedModule &module) {
  runtime::Source source{module.name + ".cu", module.source, {}};
  for (const codegen::DeviceHeader &h : codegen::deviceHeaders())
    source.headers.push_back({std::string(h.name), std::string(h.text)});
  return source;
}

} // namespace gnnjit::exec
