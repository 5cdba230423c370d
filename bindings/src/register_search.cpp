// llmsim._core.search: the deployment search (analysis/search.hpp). The threaded search is one call; for a Dask
// cluster the steps are exposed so that Python only ships the candidates the C++ planner produced to workers
// (evaluate) and hands their evaluations back to the C++ wave rule and front builder: one rule, in C++.
#include <limits>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "convert.hpp"
#include "interrupt.hpp"
#include "llmsim/analysis/search.hpp"
#include "llmsim/spec/catalog.hpp"

namespace llmsim::python {

namespace {

analysis::SearchOptions options_of(const std::string& text) {
  const Json doc = parse_text(text, "search options");
  return analysis::search_options_from_json(JsonView(doc, "search"));
}

std::vector<std::optional<analysis::SearchEvaluation>> evaluations_of(const std::vector<std::optional<std::string>>& done) {
  std::vector<std::optional<analysis::SearchEvaluation>> out(done.size());
  for (std::size_t i = 0; i < done.size(); ++i) {
    if (!done[i]) continue;
    const Json j = parse_text(*done[i], "evaluation");
    out[i] = analysis::evaluation_from_json(JsonView(j, "evaluation"));
  }
  return out;
}

}  // namespace

void register_search(py::module_& m) {
  py::class_<analysis::SearchPlan>(m, "SearchPlan", "Surviving candidates of a search (opaque; see llmsim.search)")
      .def("__len__", [](const analysis::SearchPlan& p) { return p.candidates.size(); })
      .def("candidate", [](const analysis::SearchPlan& p, std::size_t i) {
        if (i >= p.candidates.size()) throw py::index_error("candidate " + std::to_string(i));
        return dump(analysis::to_json(p.candidates[i]));
      }, py::arg("position"), "The candidate at `position` as JSON text (what a worker evaluates).");

  m.def("default_axes", [](const std::vector<std::string>& gpus) { return dump(analysis::to_json(analysis::default_search_axes(gpus))); },
        py::arg("gpus") = std::vector<std::string>{}, "The default axes as JSON [[path, [values]], ...].");

  m.def("default_axes_for", [](const std::string& scenario, const std::vector<std::string>& gpus) {
    return dump(analysis::to_json(analysis::default_search_axes_for(parse_text(scenario, "scenario"), gpus)));
  }, py::arg("scenario"), py::arg("gpus") = std::vector<std::string>{},
     "The default axes for this base scenario as JSON (a disaggregated one: the pools' split instead of the cards).");

  m.def("with_default_gpu_axis", [](const std::string& options, const std::vector<std::string>& gpus, const std::string& scenario) {
    Json doc = parse_text(options, "search options");
    const auto o = analysis::search_options_from_json(JsonView(doc, "search"));
    doc["axes"] = analysis::to_json(analysis::with_default_gpu_axis(o.axes, gpus, parse_text(scenario, "scenario")));
    return dump(doc);
  }, py::arg("options"), py::arg("gpus"), py::arg("scenario"),
     "The options with the given axes completed as the CLI's --axis are (analysis::with_default_gpu_axis): the "
     "default hardware.gpu axis over `gpus` stays first unless an axis or the scenario places the cards.");

  m.def("axes_for_sets", [](const std::string& options, const std::vector<std::string>& given, const std::string& sets) {
    Json doc = parse_text(options, "search options");
    const auto o = analysis::search_options_from_json(JsonView(doc, "search"));
    std::vector<std::pair<std::string, Json>> pairs;
    for (const auto& pair : parse_text(sets, "sets")) pairs.emplace_back(pair.at(0).get<std::string>(), pair.at(1));
    std::vector<std::string> notes;
    doc["axes"] = analysis::to_json(analysis::search_axes_for_sets(o.axes, given, pairs, notes));
    return std::make_pair(dump(doc), notes);
  }, py::arg("options"), py::arg("given"), py::arg("sets"),
     "The options with their axes as the caller's own settings leave them (analysis::search_axes_for_sets): a "
     "default axis over a field set is dropped (noted), a given one refused. `sets`: [[path, value], ...] JSON.");

  m.def("plan", [](const std::string& scenario, const std::string& options) {
    std::atomic<bool> cancel{false};
    Warnings warnings;
    return run_interruptible(cancel, warnings, [&] {
      auto o = options_of(options);
      o.cancel = &cancel;
      return analysis::plan_search(parse_text(scenario, "scenario"), o, spec::Catalog::builtin());
    });
  }, py::arg("scenario"), py::arg("options"), "Enumerate and prune statically (GIL released).");

  m.def("next_wave", [](const analysis::SearchPlan& plan, const std::vector<std::optional<std::string>>& done,
                        const std::string& options) {
    return analysis::next_wave(plan, evaluations_of(done), options_of(options));
  }, py::arg("plan"), py::arg("done"), py::arg("options"),
     "Positions to evaluate next (branch-and-bound) given the evaluations so far (JSON text or None per position).");

  m.def("cutoff", [](const std::vector<std::optional<std::string>>& done, const std::string& options) {
    return analysis::search_cutoff(evaluations_of(done), options_of(options));
  }, py::arg("done"), py::arg("options"), "The branch-and-bound cutoff (monthly bill) the next wave is screened against.");

  m.def("evaluate", [](const std::string& candidate, const std::string& options, bool final_check, double max_bill) {
    std::atomic<bool> cancel{false};
    Warnings warnings;
    return run_interruptible(cancel, warnings, [&] {
      const auto o = options_of(options);
      const Json c = parse_text(candidate, "candidate");
      return dump(analysis::to_json(analysis::evaluate_candidate(analysis::candidate_from_json(JsonView(c, "candidate")),
                                                                 final_check ? o.final_check : o.screen,
                                                                 spec::Catalog::builtin(), &cancel, max_bill)));
    });
  }, py::arg("candidate"), py::arg("options"), py::arg("final_check") = false,
     py::arg("max_bill") = std::numeric_limits<double>::infinity(),
     "One candidate's capacity and fleet at the target (evaluation JSON text), screened against `max_bill` (the "
     "wave's cutoff); GIL released, Ctrl-C stops it.");

  m.def("front_positions", [](const std::vector<std::optional<std::string>>& done, const std::string& options) {
    return analysis::pareto_positions(evaluations_of(done), options_of(options));
  }, py::arg("done"), py::arg("options"), "Positions of the first-pass Pareto front (to re-check).");

  m.def("assemble", [](const analysis::SearchPlan& plan, const std::vector<std::optional<std::string>>& done,
                       const std::vector<std::string>& finals, const std::string& options) {
    std::vector<analysis::SearchEvaluation> f;
    for (const auto& t : finals) {
      const Json j = parse_text(t, "evaluation");
      f.push_back(analysis::evaluation_from_json(JsonView(j, "evaluation")));
    }
    return dump(analysis::to_json(analysis::assemble_search(plan, evaluations_of(done), f, options_of(options))));
  }, py::arg("plan"), py::arg("done"), py::arg("finals"), py::arg("options"), "The result JSON text.");

  m.def("search", [](const std::string& scenario, const std::string& options) {
    std::atomic<bool> cancel{false};
    Warnings warnings;
    return run_interruptible(cancel, warnings, [&] {
      auto o = options_of(options);
      o.cancel = &cancel;
      return dump(analysis::to_json(analysis::search(parse_text(scenario, "scenario"), o, spec::Catalog::builtin())));
    });
  }, py::arg("scenario"), py::arg("options"),
     "The whole search on options.jobs threads (result JSON text); GIL released, Ctrl-C stops it.");
}

}  // namespace llmsim::python
