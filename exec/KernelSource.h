// A generated module as the runtime compiles it: the source with the device
// helper headers it includes, served from memory.
#pragma once

#include "codegen/KernelParams.h"
#include "runtime/KernelCache.h"
#include "runtime/Source.h"

#include <string>

namespace gnnjit::exec {

runtime::Source kernelSource(const codegen::GeneratedModule &module);

/// A module of hand-written device code: `text` with the device headers.
runtime::Source kernelSource(const std::string &name, const std::string &text);

/// The process-wide kernel cache (in the default folder) the executor uses
/// when the caller names none.
runtime::KernelCache &defaultKernelCache();

} // namespace gnnjit::exec
