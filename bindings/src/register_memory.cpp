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
    spec::ResolvedScenario r = spec::resolve(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin());
    memory::MemoryPlan plan = memory::plan_memory(r);
    Json out = memory::to_json(plan);
    // The identity fields `llmsim memory --json` adds, so the two outputs compare equal.
    const auto& par = r.scenario.hardware.parallel;
    out["model"] = r.model.id;
    out["gpu"] = r.gpu.id;
    out["num_gpus"] = par.gpus();
    out["tp"] = par.tp;
    out["pp"] = par.pp;
    out["quant"] = r.quant.weights.id;
    out["kv_dtype"] = std::string(spec::to_string(r.quant.kv_dtype));
    out["gpu_memory_utilization"] = r.scenario.engine.gpu_memory_utilization;
    out["notes"] = r.notes;  // what resolving assumed (the checkpoint's quantization_config, MTP layers, ...)
    return dump(out);
  }, py::arg("scenario"),
     "Memory plan of the scenario's replica as JSON text (`llmsim memory --json` fields), planned for the "
     "resolved max_model_len (engine.max_model_len, else vLLM's auto: the model's limit if it fits, else the largest that does).");
}

}  // namespace llmsim::python
