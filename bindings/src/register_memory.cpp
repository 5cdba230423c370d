// llmsim._core.memory: the memory planner of one replica.
#include <pybind11/pybind11.h>

#include "convert.hpp"
#include "llmsim/memory/memory_plan.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::python {

void register_memory(py::module_& m) {
  m.def("plan", [](const std::string& text) {
    Json doc = parse_text(text, "scenario");
    spec::ResolvedScenario r = spec::resolve_unbilled(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin());
    // The document `llmsim memory --json` prints (memory::to_json of the scenario: one writer for both).
    const Json out = memory::to_json(r, memory::plan_memory(r));
    return dump(out);
  }, py::arg("scenario"),
     "Memory plan of the scenario's replica as JSON text (`llmsim memory --json` fields), planned for the "
     "resolved max_model_len (engine.max_model_len, else vLLM's auto: the model's limit if it fits, else the largest that does).");
}

}  // namespace llmsim::python
