// llmsim._core.calibration: a profile fitted to benchmark runs (calibration/fit/run_fit.hpp) and to raw
// microbenchmark results (profile_fit.hpp). JSON text across the boundary; the GIL released while fitting.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "convert.hpp"
#include "fit/profile_fit.hpp"
#include "fit/raw_results.hpp"
#include "fit/run_fit.hpp"
#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/core/input_file.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"

namespace py = pybind11;

namespace llmsim::python {

void register_calibration(py::module_& m) {
  m.def("fit_runs", [](const std::string& runs_path, const std::string& raw_path, const std::string& gpu_arg,
                       bool cross_validate, int min_runs_per_field, const std::vector<std::string>& fields,
                       std::optional<double> prior_scale, const std::string& capacity_guard) {
    py::gil_scoped_release nogil;
    const auto guard = calibration::capacity_guard_mode(capacity_guard, "--capacity-guard (Python capacity_guard=)");
    const auto runs = analysis::read_bench_runs(runs_path, gpu_arg);
    std::optional<calibration::RawResults> raw;
    if (!raw_path.empty()) raw = calibration::parse_raw_results(read_text_file(raw_path, "raw results"), raw_path);
    std::string gpu_name = gpu_arg;
    if (gpu_name.empty()) gpu_name = raw ? raw->gpu_id : (runs.gpu.empty() ? runs.runs.front().gpu : runs.gpu);
    const auto gpu = spec::Catalog::builtin().gpu(gpu_name, "gpu");
    perf::HardwareProfile base = perf::default_profile(gpu);
    Json micro;
    if (raw) {
      const auto r = calibration::fit_profile(*raw, gpu, base);
      base = r.profile;
      micro = calibration::to_json(r);
    }
    calibration::RunFitOptions o;
    o.cross_validate = cross_validate;
    o.min_runs_per_field = min_runs_per_field;
    o.fields = fields;
    if (prior_scale) o.prior_scale = *prior_scale;  // None: the default (ConfigError when negative)
    o.capacity_guard = guard;
    const auto rep = calibration::fit_runs(runs.runs, gpu, base, o);
    Json report = calibration::to_json(rep);
    if (raw) report["microbenchmarks"] = micro;
    report["source"] = runs.source;
    Json run_info = Json::array();
    for (const auto& r : runs.runs) run_info.push_back(analysis::to_json(r));
    report["run_info"] = run_info;
    return dump(Json{{"profile", perf::to_json(rep.profile)}, {"report", report}});
  }, py::arg("runs"), py::arg("raw"), py::arg("gpu"), py::arg("cross_validate"), py::arg("min_runs_per_field"),
     py::arg("fields"), py::arg("prior_scale") = py::none(), py::arg("capacity_guard") = "auto",
     "Fits a profile to RUNS.json (and a raw microbenchmark file first, when given): JSON text "
     "{\"profile\", \"report\"}.");
  m.def("predict_runs", [](const std::string& runs_path, const std::string& profile_text, const std::string& gpu_arg) {
    py::gil_scoped_release nogil;
    const auto runs = analysis::read_bench_runs(runs_path, gpu_arg);
    std::optional<perf::HardwareProfile> profile;
    if (!profile_text.empty()) {
      const Json doc = parse_text(profile_text, "profile");
      profile = perf::profile_from_json(JsonView(doc, "profile"));
    }
    Json out = Json::array();
    for (const auto& r : runs.runs) {
      Json row = analysis::to_json(r);
      const analysis::BenchPredictor pred(r);
      row["predicted"] = pred.predict(profile ? *profile : perf::default_profile(pred.resolved().gpu));
      out.push_back(row);
    }
    return dump(out);
  }, py::arg("runs"), py::arg("profile"), py::arg("gpu"),
     "Every run of RUNS.json predicted with a profile (JSON text; empty = each GPU's default profile): "
     "[{name, measured, predicted, ...}].");
}

}  // namespace llmsim::python
