// A generated module as the runtime compiles it: the source with the device
// helper headers it includes, served from memory.
#pragma once

#include "codegen/KernelParams.h"
#include "runtime/Source.h"

namespace gnnjit::exec {

runtime::Source kernelSource(const codegen::GeneratedModule &module);

} // namespace gnnjit::exec
