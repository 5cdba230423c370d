// llmsim._core: one submodule per C++ area (register_<area>.cpp), plus the exception mapping.
// Areas whose library layers are not built are left out (see bindings/CMakeLists.txt).
#include <pybind11/pybind11.h>

#include "convert.hpp"
#include "llmsim/core/error.hpp"

namespace py = pybind11;

namespace llmsim::python {
#define LLMSIM_AREA(name) void register_##name(py::module_& m);
#include "areas.inc"
#undef LLMSIM_AREA
}  // namespace llmsim::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "llmsim C++ core (private; use the `llmsim` package)";
  // Translators are tried newest first, so the base class goes first. ConfigError and CalibrationDataError
  // are bad input: ValueError subclasses carrying the C++ message (which names the field path).
  auto error = py::register_exception<llmsim::Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<llmsim::InternalError>(m, "InternalError", error.ptr());
  py::register_exception<llmsim::ConfigError>(m, "ConfigError", PyExc_ValueError);
  py::register_exception<llmsim::CalibrationDataError>(m, "CalibrationDataError", PyExc_ValueError);

  py::list areas;
#define LLMSIM_AREA(name)                                                   \
  {                                                                         \
    auto sub = m.def_submodule(#name);                                      \
    llmsim::python::register_##name(sub);                                   \
    areas.append(#name);                                                    \
  }
#include "areas.inc"
#undef LLMSIM_AREA
  m.attr("areas") = areas;
}
