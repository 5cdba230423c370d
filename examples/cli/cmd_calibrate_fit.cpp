// `llmsim calibrate-fit raw.json -o profile.json`: fits a hardware profile to the raw results of the
// calibration programs (calibration/run_all.sh) and prints the residual of every fitted term.
#include <iostream>
#include <optional>

#include "common.hpp"
#include "output_file.hpp"
#include "fit/profile_fit.hpp"
#include "fit/raw_results.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"

namespace llmsim::cli {
namespace {

int run(int argc, char** argv) {
  return guarded("calibrate-fit", [&] {
    po::options_description opts("calibrate-fit options");
    opts.add_options()("raw", po::value<std::string>()->required(), "raw results file written by calibration/run_all.sh")(
        "output,o", po::value<std::string>(), "write the fitted profile JSON here (default: stdout, report on stderr)")(
        "gpu", po::value<std::string>(), "GPU id or spec file the efficiencies are relative to (default: the raw file's gpu_id)")(
        "report", po::value<std::string>(), "also write the fit report (terms, residuals, notes) as JSON here");
    po::positional_options_description pos;
    pos.add("raw", 1);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm, "usage: llmsim calibrate-fit RAW.json [-o PROFILE.json] [--gpu ID]", &pos))
      return static_cast<int>(kOk);
    // Outputs open before the fit: a missing directory fails now.
    std::optional<OutputFile> output, report_file;
    if (vm.count("output")) output.emplace(vm["output"].as<std::string>(), "--output");
    if (vm.count("report")) report_file.emplace(vm["report"].as<std::string>(), "--report");
    const std::string raw_path = vm["raw"].as<std::string>();
    const auto raw = calibration::parse_raw_results(read_text_file(raw_path, "raw results"), raw_path);
    const std::string gpu_name = vm.count("gpu") ? vm["gpu"].as<std::string>() : raw.gpu_id;
    const spec::GpuSpec gpu = spec::Catalog::builtin().gpu(gpu_name, vm.count("gpu") ? "--gpu" : raw_path + ": gpu_id");
    const auto report = calibration::fit_profile(raw, gpu, perf::default_profile(gpu));

    const bool to_stdout = !vm.count("output");
    std::ostream& out = to_stdout ? std::cerr : std::cout;
    out << "calibrated " << gpu.id << " from " << raw_path << " (" << raw.device_name << ", " << raw.date << ")\n";
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

    const Json profile = perf::to_json(report.profile);
    if (to_stdout) {
      print_json(profile);
    } else {
      output->write(profile.dump(2) + "\n");
      output->commit();
      out << "wrote " << output->path() << "\n";
    }
    if (report_file) {
      report_file->write(calibration::to_json(report).dump(2) + "\n");
      report_file->commit();
    }
    return static_cast<int>(kOk);
  });
}

}  // namespace

Command command_calibrate_fit() {
  return {"calibrate_fit", "fit a hardware profile to calibration raw results (calibration/run_all.sh)", run};
}

}  // namespace llmsim::cli
