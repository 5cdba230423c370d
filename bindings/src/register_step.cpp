// llmsim._core.step: the cost model's time for one engine iteration, with its per-op breakdown.
#include <pybind11/pybind11.h>

#include "convert.hpp"
#include "llmsim/analysis/step.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::python {

void register_step(py::module_& m) {
  m.def("step", [](const std::string& text, std::int64_t prefill_tokens, std::int64_t prefill_context,
                   std::int64_t decode_seqs, std::int64_t context) {
    Json doc = parse_text(text, "scenario");
    spec::ResolvedScenario r = spec::resolve_unbilled(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin());
    // The same checks (lengths, context, memory, KV room) and the same cost model as `llmsim step` and a simulation
    // of this scenario (analysis::step_of_scenario); with engine.speculative the decoders verify k + 1 tokens each and
    // the proposer is an op; the document `llmsim step --json` prints, with the scenario's warnings.
    const Json out = analysis::step_of_scenario(r, {prefill_tokens, prefill_context, decode_seqs, context}).json;
    return dump(out);
  }, py::arg("scenario"), py::arg("prefill_tokens"), py::arg("prefill_context"), py::arg("decode_seqs"),
     py::arg("context"), "One iteration's cost breakdown as JSON text (`llmsim step --json` fields).");
}

}  // namespace llmsim::python
