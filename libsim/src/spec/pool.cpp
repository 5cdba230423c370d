#include "llmsim/spec/pool.hpp"

namespace llmsim::spec {

ResolvedScenario resolve_pool(const Scenario& base, const Deployment& hw, const Json* engine_patch,
                              const Catalog& catalog) {
  Scenario s = base;
  s.hardware = hw;
  if (engine_patch) {
    Json doc = to_json(s);
    doc["engine"].merge_patch(*engine_patch);
    s = scenario_from_json(JsonView(doc, ""));
  }
  return resolve(s, catalog);
}

}  // namespace llmsim::spec
