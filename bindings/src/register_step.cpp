// llmsim._core.step: the cost model's time for one engine iteration, with its per-op breakdown.
#include <pybind11/pybind11.h>

#include "convert.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/step.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::python {

void register_step(py::module_& m) {
  m.def("step", [](const std::string& text, std::int64_t prefill_tokens, std::int64_t prefill_context,
                   std::int64_t decode_seqs, std::int64_t context) {
    Json doc = parse_text(text, "scenario");
    spec::ResolvedScenario r = spec::resolve(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin());
    // The same checks (lengths, context, memory, KV room) as `llmsim step`.
    const analysis::StepLengths lengths{prefill_tokens, prefill_context, decode_seqs, context};
    // With engine.speculative the decoders verify k + 1 tokens each and the proposer is an op (`llmsim step --speculative`).
    const perf::CostModel cm = perf::make_cost_model(r);
    perf::StepCost cost = analysis::step_cost(cm, r.scenario.engine, lengths, analysis::StepNames::keywords,
                                              r.speculation ? &*r.speculation : nullptr);
    // The document `llmsim step --json` prints (analysis::step_json), with the warning `llmsim step --gpu-profile`
    // prints for a GPU profile fitted on another runtime (`warnings`).
    Json out = analysis::step_json(cost, cm, r.notes, analysis::scenario_warnings(r), r.speculation ? &*r.speculation : nullptr);
    return dump(out);
  }, py::arg("scenario"), py::arg("prefill_tokens"), py::arg("prefill_context"), py::arg("decode_seqs"),
     py::arg("context"), "One iteration's cost breakdown as JSON text (`llmsim step --json` fields).");
}

}  // namespace llmsim::python
