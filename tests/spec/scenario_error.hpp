// The problem a scenario document is refused with, for tests of the spec layer's refusals.
#pragma once

#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::test {

/// The ConfigError's text `j` is refused with when read as a scenario; "" when it is accepted.
inline std::string scenario_error_of(const Json& j) {
  try {
    spec::scenario_from_json(JsonView(j, ""));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace llmsim::test
