#pragma once
// Argument conversion shared by the register_<area> files. Scenarios cross the boundary as JSON text (the
// CLI's format, so Python and CLI parse identically); results come back as JSON text or numpy columns.
#include <string>

#include <pybind11/pybind11.h>

#include "llmsim/core/json_view.hpp"

namespace llmsim::python {

namespace py = pybind11;

/// Parses JSON text handed over from Python (ConfigError naming `source` on bad syntax).
Json parse_text(const std::string& text, const std::string& source);

/// Compact JSON text for Python's json.loads (nlohmann prints doubles so they round-trip exactly).
std::string dump(const Json& j);

}  // namespace llmsim::python
