#include "python/core/Bindings.h"

#include "support/Error.h"

namespace nb = nanobind;

namespace gnnjit::python {

void registerErrors(nb::module_ &m) {
  // Raised for what the caller can fix (a bad graph, shape, option or
  // layer); a ValueError, so code catching those keeps working.
  static nb::object error = nb::exception<UserError>(m, "Error", PyExc_ValueError);
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const InternalError &e) {
      PyErr_SetString(PyExc_RuntimeError, (std::string("gnnjit internal error (a bug): ") + e.what()).c_str());
    } catch (const LibraryError &e) {
      PyErr_SetString(PyExc_RuntimeError, (std::string("gnnjit: a library gnnjit uses failed: ") + e.what()).c_str());
    }
  });
}

} // namespace gnnjit::python
