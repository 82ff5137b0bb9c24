// gnnjit._core: the C++ core as a Python extension (nanobind).
#include "python/core/Bindings.h"

#include "codegen/Version.h"

NB_MODULE(_core, m) {
  m.doc() = "gnnjit's C++ core: graphs, layers, the CPU reference executor, the GPU runner";
  m.attr("generator_version") = gnnjit::codegen::kGeneratorVersion;
  // torch's operator registry and gnnjit.ops' layer cache keep gnnjit objects
  // until after this module is torn down at exit: not leaks, but nanobind
  // would report each one then.
  nanobind::set_leak_warnings(false);
  gnnjit::python::registerErrors(m);
  gnnjit::python::registerGraph(m);
  gnnjit::python::registerLayers(m);
  gnnjit::python::registerReference(m);
  gnnjit::python::registerDatasets(m);
  gnnjit::python::registerCuda(m);
  gnnjit::python::registerDsl(m);
}
