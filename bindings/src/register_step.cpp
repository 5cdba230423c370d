// llmsim._core.step: the cost model's time for one engine iteration, with its per-op breakdown.
#include <pybind11/pybind11.h>

#include "convert.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::python {

void register_step(py::module_& m) {
  m.def("step", [](const std::string& text, std::int64_t prefill_tokens, std::int64_t prefill_context,
                   std::int64_t decode_seqs, std::int64_t context) {
    Problems problems;  // every bad length at once, named as `llmsim step` names its flags
    if (prefill_tokens < 0) problems.add("prefill_tokens", "must be >= 0, got " + std::to_string(prefill_tokens));
    if (prefill_context < 0) problems.add("prefill_context", "must be >= 0, got " + std::to_string(prefill_context));
    if (decode_seqs < 0) problems.add("decode_seqs", "must be >= 0, got " + std::to_string(decode_seqs));
    if (context < 0) problems.add("context", "must be >= 0, got " + std::to_string(context));
    if (decode_seqs > 0 && context < 1) problems.add("context", "must be >= 1 when decode_seqs > 0");
    if (prefill_tokens == 0 && decode_seqs == 0) problems.add("step", "empty batch: give prefill_tokens or decode_seqs");
    problems.throw_if_any();
    Json doc = parse_text(text, "scenario");
    spec::ResolvedScenario r = spec::resolve(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin());
    perf::BatchShape batch;
    if (prefill_tokens > 0) batch.add_prefill(prefill_tokens, prefill_context, true);
    batch.decode_seqs = decode_seqs;  // the sums add_decode() would build, without a loop per sequence
    batch.decode_context = decode_seqs * context;
    perf::validate(batch);
    perf::StepCost cost = perf::make_cost_model(r).breakdown(batch);
    Json out = perf::to_json(cost);
    if (!out.contains("tokens_per_s")) {
      out["tokens_per_s"] = cost.time_s > 0 ? static_cast<double>(batch.tokens()) / cost.time_s : 0.0;
    }
    return dump(out);
  }, py::arg("scenario"), py::arg("prefill_tokens"), py::arg("prefill_context"), py::arg("decode_seqs"),
     py::arg("context"), "One iteration's cost breakdown as JSON text (`llmsim step --json` fields).");
}

}  // namespace llmsim::python
