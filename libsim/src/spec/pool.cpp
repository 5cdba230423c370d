#include "llmsim/spec/pool.hpp"

#include "scenario_json.hpp"

namespace llmsim::spec {

ResolvedScenario resolve_pool(const Scenario& base, const Deployment& hw, const Json* engine_patch, const Catalog& catalog) {
  Scenario s = base;
  s.disaggregation.reset();  // a pool serves one phase or one share of the load; it is not itself split
  s.hardware = hw;
  if (engine_patch && !engine_patch->is_null()) {
    Json e = detail::engine_json(s.engine);
    e.merge_patch(*engine_patch);
    s.engine = detail::read_engine(JsonView(e, "engine"));
  }
  return resolve(s, catalog);
}

}  // namespace llmsim::spec
