// What every planner test ends with: each module of a planned program
// compiled by NVRTC for sm_90 (no GPU needed), its error shown when not.
#pragma once

#include "codegen/Program.h"
#include "exec/KernelSource.h"
#include "runtime/KernelCache.h"

#include <doctest/doctest.h>

namespace gnnjit::test {

/// Compiles every module of `program` through `cache`; returns how many.
inline int compileModules(runtime::KernelCache &cache, const codegen::Program &program) {
  int compiled = 0;
  for (const codegen::GeneratedModule &m : program.code.modules) {
    CAPTURE(m.name);
    auto result = cache.tryCompile(exec::kernelSource(m), runtime::CompileOptions{});
    REQUIRE_MESSAGE(result.ok(), std::string(result.ok() ? "" : result.error().what()));
    ++compiled;
  }
  return compiled;
}

} // namespace gnnjit::test
