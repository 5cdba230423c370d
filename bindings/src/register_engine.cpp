// llmsim._core.engine: one simulation without cost fields (the analysis area adds them).
#include <optional>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "convert.hpp"
#include "interrupt.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/catalog.hpp"
#include "records.hpp"

namespace llmsim::python {

void register_engine(py::module_& m) {
  m.def("simulate", [](const std::string& text, bool record_requests, bool record_iterations,
                       std::optional<double> rate) {
    std::atomic<bool> cancel{false};
    Warnings warnings;
    engine::SimulationResult result = run_interruptible(cancel, warnings, [&] {
      Json doc = parse_text(text, "scenario");
      spec::Scenario scenario = spec::scenario_from_json(JsonView(doc, ""));
      if (rate) scenario.workload = spec::with_rate(scenario.workload, *rate);  // as `llmsim simulate --rate`
      spec::ResolvedScenario r = spec::resolve(scenario, spec::Catalog::builtin());
      engine::SimulationOptions opt;
      opt.record_requests = record_requests;
      opt.record_iterations = record_iterations;
      opt.cancel = &cancel;
      return engine::simulate(r, opt);
    });
    return py::make_tuple(dump(metrics::to_json(result.summary)), request_columns(result.requests),
                          iteration_columns(result.iterations));
  }, py::arg("scenario"), py::arg("record_requests") = false, py::arg("record_iterations") = false,
     py::arg("rate") = py::none(),
     "(summary JSON text, request columns, iteration columns) of one run; GIL released while it runs.");
}

}  // namespace llmsim::python
