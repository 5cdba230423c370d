// `llmsim calibrate-fit raw.json -o profile.json`: fits a hardware profile to the raw results of the
// calibration programs (calibration/run_all.sh) and prints the residual of every fitted term.
// `llmsim calibrate-fit --runs RUNS.json [raw.json] -o profile.json`: fits it to the user's own benchmark files
// (analysis/bench_runs.hpp); with a raw file too, the kernels are fitted first and the runs adjust the engine around
// them. Prints each run's error before and after, and left out of the fit. `--json` prints {"profile", "report"} on
// stdout; without --json or --out the profile alone goes to stdout (the older behaviour), the report to stderr.
#include <iostream>
#include <optional>

#include "common.hpp"
#include "output_file.hpp"
#include "fit/profile_fit.hpp"
#include "fit/raw_results.hpp"
#include "fit/run_fit.hpp"
#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"

namespace llmsim::cli {
namespace {

std::string pct(double e) { return fmt(100.0 * e, 1) + " %"; }

void print_raw_report(std::ostream& out, const calibration::FitReport& report) {
  Table t({"field", "points", "rms rel. residual", "max rel. residual", "value"});
  for (const auto& term : report.terms)
    t.add({term.field, std::to_string(term.points), fmt(term.rms_rel_residual, 4), fmt(term.max_rel_residual, 4),
           term.value});
  t.print(out);
  if (!report.kept_from_base.empty()) {
    out << "not measured, kept from the default profile:";
    for (const auto& k : report.kept_from_base) out << " " << k;
    out << "\n";
  }
  for (const auto& n : report.notes) out << "note: " << n << "\n";
}

void print_runs_report(std::ostream& out, const calibration::RunFitReport& r) {
  Table f({"field", "base", "fitted", "bounds", "runs", "rel. std. error"});
  for (const auto& x : r.fields)
    f.add({x.field + (x.value_kind == "scale" ? " (x curve)" : ""), fmt(x.base, 6), fmt(x.fitted, 6),
           fmt(x.lower, 4) + " .. " + fmt(x.upper, 4) + (x.at_bound ? " (at bound)" : ""), std::to_string(x.runs),
           pct(x.std_error)});
  f.print(out);
  Table t({"run", "value", "measured", "before", "after", "left out"});
  for (const auto& row : r.runs)
    for (std::size_t i = 0; i < row.keys.size(); ++i) {
      auto e = [&](const std::vector<double>& v) {
        return v.empty() ? std::string("-") : fmt(v[i], 4) + " (" + pct(v[i] / row.measured[i] - 1) + ")";
      };
      t.add({i ? "" : row.run, row.keys[i], fmt(row.measured[i], 4), e(row.before), e(row.after),
             e(row.cross_validated)});
    }
  t.print(out);
  out << "RMS relative error over all values: before " << pct(r.rms_before) << ", after " << pct(r.rms_after);
  if (r.cross_validated) out << ", leave-one-run-out " << pct(r.rms_cv);
  out << "\nmedian run error: before " << pct(r.median_before) << ", after " << pct(r.median_after);
  if (r.cross_validated) out << ", leave-one-run-out " << pct(r.median_cv);
  out << "\n";
  if (const auto& cv = r.profile.cross_validated_error) {
    out << "error band recorded in the profile (predictions with it say so): median |error| " << pct(cv->median_abs)
        << ", p90 " << pct(cv->p90_abs) << ", from " << cv->runs << " cross-validated runs\n";
  }
  if (!r.unconstrained.empty()) {
    out << "no run constrains, kept from the base profile:";
    for (const auto& k : r.unconstrained) out << " " << k;
    out << "\n";
  }
  for (const auto& c : r.correlated)
    out << "inseparable: " << c.a << " and " << c.b << " (correlation " << fmt(c.correlation, 3)
        << "): the runs fix their combination, not each\n";
  for (const auto& n : r.notes) out << "note: " << n << "\n";
}

int run_calibrate_fit(int argc, char** argv) {
  return guarded("calibrate-fit", [&] {
    po::options_description opts("calibrate-fit options");
    opts.add_options()("raw", po::value<std::string>(), "raw results file written by calibration/run_all.sh")(
        "runs", po::value<std::string>(), "RUNS.json listing your benchmark result files (docs/calibration.md)")(
        "out", po::value<std::string>(), "write the fitted profile JSON here (without --out or --json: printed on "
        "stdout, the report on stderr)")(
        "output,o", po::value<std::string>(), "the same as --out (its older name)")(
        "json", "print {\"profile\", \"report\"} as JSON on stdout (the human report goes to stderr)")(
        "gpu", po::value<std::string>(),
        "GPU id or spec file the efficiencies are relative to (default: the raw file's gpu_id / RUNS.json's gpu)")(
        "no-cross-validate", po::bool_switch(), "--runs: skip the leave-one-run-out refits")(
        "min-runs-per-field", po::value<int>()->default_value(2), "--runs: runs that must constrain a fitted field")(
        "fields", po::value<std::string>(),
        "--runs: fit only these fields (comma-separated name prefixes, e.g. cpu_overhead,gemm_bw_eff_vs_m), or "
        "'auto': the field groups the leave-one-run-out error picks")(
        "prior-scale", po::value<double>(),
        "--runs: s of the log-normal prior that holds each field near the base profile: moving an efficiency by 15 % "
        "or a host cost by a factor 2 costs as much as one value missed by s (default 0.05, or the runs' own scatter "
        "about a plain fit when smaller; 0: no prior)")(
        "capacity-guard", po::value<std::string>()->default_value("auto"),
        "--runs: hold the predicted capacity within 15 % of the base profile's: auto (when every serving run ran "
        "below capacity, so none measured it), on (always; needs a serving run stating its output throughput) or "
        "off (the fit is free to move it)")(
        "report", po::value<std::string>(), "also write the fit report (terms, residuals, notes) as JSON here");
    po::positional_options_description pos;
    pos.add("raw", 1);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim calibrate-fit RAW.json [--out PROFILE.json] [--gpu ID] [--json]\n"
                    "       llmsim calibrate-fit --runs RUNS.json [RAW.json] [--gpu ID] --out PROFILE.json [--report FIT.json] "
                    "[--json]",
                    &pos))
      return static_cast<int>(kOk);
    // Read before any file: a misspelt switch fails at once, naming itself.
    const auto guard = calibration::capacity_guard_mode(vm["capacity-guard"].as<std::string>(),
                                                        "--capacity-guard (Python capacity_guard=)");
    if (!vm.count("raw") && !vm.count("runs"))
      throw ConfigError("calibrate-fit", "give a raw results file (RAW.json), --runs RUNS.json, or both");
    // Outputs open before the fit: a missing directory fails now.
    if (vm.count("out") && vm.count("output"))
      throw ConfigError("--out", "given with -o/--output, its older name: give one of them");
    const std::string out_name = vm.count("out") ? "out" : "output";
    std::optional<OutputFile> output, report_file;
    if (vm.count(out_name)) output.emplace(vm[out_name].as<std::string>(), "--" + out_name);
    if (vm.count("report")) report_file.emplace(vm["report"].as<std::string>(), "--report");
    // stdout carries JSON when asked (--json), or the profile when no file takes it (the older behaviour, kept);
    // the human report then goes to stderr.
    const bool json = vm.count("json") > 0;
    const bool to_stdout = !output && !json;
    std::ostream& out = to_stdout || json ? std::cerr : std::cout;

    std::optional<calibration::RawResults> raw;
    std::optional<analysis::BenchRuns> runs;
    const std::string gpu_arg = vm.count("gpu") ? vm["gpu"].as<std::string>() : "";
    if (vm.count("raw")) {
      const std::string raw_path = vm["raw"].as<std::string>();
      raw = calibration::parse_raw_results(read_text_file(raw_path, "raw results"), raw_path);
    }
    if (vm.count("runs")) runs = analysis::read_bench_runs(vm["runs"].as<std::string>(), gpu_arg);
    std::string gpu_name = gpu_arg;
    std::string gpu_where = "--gpu";
    if (gpu_name.empty() && raw) {
      gpu_name = raw->gpu_id;
      gpu_where = vm["raw"].as<std::string>() + ": gpu_id";
    }
    if (gpu_name.empty() && runs) {
      gpu_name = runs->gpu.empty() ? runs->runs.front().gpu : runs->gpu;
      gpu_where = runs->path + ": gpu";
    }
    const spec::GpuSpec gpu = spec::Catalog::builtin().gpu(gpu_name, gpu_where);

    perf::HardwareProfile profile = perf::default_profile(gpu);
    Json report_json = Json::object();
    if (raw) {
      const auto report = calibration::fit_profile(*raw, gpu, profile);
      out << "calibrated " << gpu.id << " from " << vm["raw"].as<std::string>() << " (" << raw->device_name << ", "
          << raw->date << ")\n";
      print_raw_report(out, report);
      profile = report.profile;
      report_json = calibration::to_json(report);
    }
    if (runs) {
      calibration::RunFitOptions o;
      o.cross_validate = !vm["no-cross-validate"].as<bool>();
      o.min_runs_per_field = vm["min-runs-per-field"].as<int>();
      if (vm.count("prior-scale")) o.prior_scale = vm["prior-scale"].as<double>();
      o.capacity_guard = guard;
      if (vm.count("fields")) {
        std::string f = vm["fields"].as<std::string>();
        for (std::size_t start = 0; start <= f.size();) {
          const auto comma = std::min(f.find(',', start), f.size());
          if (comma > start) o.fields.push_back(f.substr(start, comma - start));
          start = comma + 1;
        }
      }
      const auto report = calibration::fit_runs(runs->runs, gpu, profile, o);
      out << "fitted " << gpu.id << " (" << report.profile.runtime
          << (report.profile.engine_version.empty() ? "" : ", " + report.profile.engine_version) << ") from "
          << runs->runs.size() << " runs of " << runs->path << (raw ? " on the microbenchmark fit" : "") << "\n";
      print_runs_report(out, report);
      profile = report.profile;
      Json j = calibration::to_json(report);
      if (raw) j["microbenchmarks"] = report_json;
      j["source"] = runs->source;
      report_json = j;
    }

    const Json profile_json = perf::to_json(profile);
    if (to_stdout) print_json(profile_json);
    if (output) {
      output->write(profile_json.dump(2) + "\n");
      output->commit();
      out << "wrote " << output->path() << "\n";
    }
    if (report_file) {
      report_file->write(report_json.dump(2) + "\n");
      report_file->commit();
    }
    if (json) print_json(Json{{"profile", profile_json}, {"report", report_json}});
    return static_cast<int>(kOk);
  });
}

}  // namespace

Command command_calibrate_fit() {
  return {"calibrate_fit", "fit a hardware profile to calibration raw results or to your own benchmark runs", run_calibrate_fit};
}

}  // namespace llmsim::cli
