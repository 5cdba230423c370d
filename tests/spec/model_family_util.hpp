// Helpers shared by the model-family tests: a config read as the loader reads it, a catalogue model, a test
// checkpoint folder, billions.
#pragma once

#include <cstdint>
#include <string>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::test {

inline double billions(std::int64_t n) { return static_cast<double>(n) / 1e9; }
inline spec::ModelSpec read(const Json& c) { return spec::model_spec_from_hf_config(JsonView(c, "model"), "test"); }
inline const spec::ModelSpec& cat(const char* id) {
  static thread_local spec::ModelSpec m;
  m = spec::Catalog::builtin().model(id);
  return m;
}

/// A checkpoint folder under tests/data/hf_checkpoints, read as the catalogue reads a config path.
inline spec::ModelSpec checkpoint(const char* folder) {
  return spec::Catalog::builtin().model(std::string(LLMSIM_SOURCE_DIR) + "/tests/data/hf_checkpoints/" + folder);
}

}  // namespace llmsim::test
