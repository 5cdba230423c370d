// `llmsim report`: the comparison as one self-contained HTML page for whoever decides — the headline answer, the
// options table, the winner and why the others lost, cost at the user's load and at capacity, latency against load,
// cost against capacity and the assumptions (placeholder prices flagged). The numbers are analysis::compare's (the
// same as `llmsim compare` with the same options); the page is composed in report/.
#include <iostream>
#include <optional>

#include "common.hpp"
#include "compare_args.hpp"
#include "output_file.hpp"
#include "signals.hpp"
#include "llmsim/analysis/compare.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario.hpp"
#include "report/load_curves.hpp"
#include "report/report_page.hpp"

namespace llmsim::cli {

namespace {

int run_report(int argc, char** argv) {
  return guarded("report", [&] {
    po::options_description opts("llmsim report options");
    po::positional_options_description pos;
    add_scenario_options(opts, pos, "base scenario JSON file (model, workload, SLO, cost)");
    add_compare_options(opts);
    opts.add_options()
        ("out,o", po::value<std::string>(), "the HTML file to write (required unless --json)")
        ("json", "print the comparison as JSON (compare's result format, plus \"headline\" and \"report\": the "
                 "page's path or null) instead of the headline");
    add_progress_options(opts);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim report BASE.json --gpus G1,2xG2,... [--quants fp16,awq-int4] [--prices gpu=PRICE,...] "
                    "[--set PATH=VALUE ...] [--vllm-args \"vllm serve ...\" | --sglang-args \"...\"] [--jobs N] -o report.html [--json]",
                    &pos)) {
      return kOk;
    }
    const bool json = vm.count("json") > 0;
    if (!vm.count("out") && !json)
      throw ConfigError("--out", "required: the HTML file to write (-o report.html), or --json for the numbers");
    Json doc = load_scenario(vm);
    apply_target_qps(doc, vm);
    const spec::Scenario base = spec::scenario_from_json(JsonView(doc, ""));
    print_scenario_warnings(base);
    analysis::CompareOptions o = compare_options(vm);

    CancelScope interrupts;  // first, so that no signal can leave a temporary output file behind
    std::optional<OutputFile> out;  // opened before the work: a missing directory fails now
    if (vm.count("out")) out.emplace(vm["out"].as<std::string>(), "--out");
    o.capacity.cancel = interrupts.flag();
    const auto result = analysis::compare(base, o, ProgressLine("report: compare", "options", vm));
    // The latency curves are the page's: --json alone does not run them.
    std::vector<report::LoadCurve> curves;
    if (out) curves = report::load_curves(base, result, o, interrupts.flag(), ProgressLine("report: latency", "runs", vm));
    std::string source = vm.count("scenario") ? vm["scenario"].as<std::string>() : std::string();
    const report::ReportInput input{base, result, curves, o, source};
    if (out) {
      out->write(report::render_report(input));
      out->commit();
    }
    if (json) {
      Json j = analysis::to_json(result);
      j["headline"] = report::headline(input);
      j["report"] = out ? Json(out->path()) : Json(nullptr);
      print_json(j);
    } else {
      std::cout << report::headline(input) << "\nwrote " << out->path() << "\n";
    }
    return kOk;
  });
}

}  // namespace

Command command_report() {
  return {"report", "the comparison as one self-contained HTML page: answer, options, winner, costs, latency plots",
          run_report};
}

}  // namespace llmsim::cli
