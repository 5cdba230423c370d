// `llmsim sweep`: a grid of scenarios on a thread pool, rows in grid order to CSV/JSON, and `--fail-if`
// bounds that turn a sweep into a CI check (exit 1 exactly when a row violates one).
#include <fstream>
#include <iostream>

#include "common.hpp"
#include "llmsim/analysis/fail_if.hpp"
#include "llmsim/analysis/sweep.hpp"
#include "llmsim/core/error.hpp"

namespace llmsim::cli {

namespace {

std::string csv_cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") != std::string::npos) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  return s;
}

void write_out(const std::string& file, const std::vector<analysis::Row>& rows) {
  const bool json = file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0;
  const bool csv = file.size() >= 4 && file.compare(file.size() - 4, 4, ".csv") == 0;
  if (!json && !csv) throw ConfigError("--out", "expected a .csv or .json file name, got '" + file + "'");
  std::ofstream out(file);
  if (!out) throw ConfigError("--out", "cannot write '" + file + "'");
  if (json) {
    Json arr = Json::array();
    for (const auto& r : rows) arr.push_back(analysis::to_json(r));
    out << arr.dump(1) << "\n";
    return;
  }
  bool header = true;
  for (const auto& r : rows) {
    const auto flat = analysis::flatten(r);
    if (header) {
      for (std::size_t i = 0; i < flat.size(); ++i) out << (i ? "," : "") << csv_cell(flat[i].first);
      out << "\n";
      header = false;
    }
    for (std::size_t i = 0; i < flat.size(); ++i) out << (i ? "," : "") << csv_cell(flat[i].second);
    out << "\n";
  }
}

std::string num(const Json& v, int d) { return v.is_null() ? "-" : fmt(v.get<double>(), d); }

void print_table(const analysis::Grid& grid, const std::vector<analysis::Row>& rows) {
  std::vector<std::string> header = {"#"};
  for (const auto& p : grid.label_paths) header.push_back(p);
  for (const char* h : {"fits", "SLO", "TTFT p95", "TPOT p95", "goodput tok/s", "$/Mtok out", "note"}) header.push_back(h);
  Table t(header);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Json j = analysis::to_json(rows[i]);
    std::vector<std::string> cells = {std::to_string(i)};
    for (const auto& [path, value] : rows[i].labels) cells.push_back(value.is_string() ? value.get<std::string>() : value.dump());
    cells.push_back(rows[i].fits ? "yes" : "no");
    cells.push_back(!rows[i].fits ? "-" : rows[i].meets_slo() ? "met" : "missed");
    cells.push_back(num(j["ttft_ms"]["p95"], 0));
    cells.push_back(num(j["tpot_ms"]["p95"], 1));
    cells.push_back(num(j["goodput_output_tps"], 0));
    cells.push_back(j["cost_per_mtok_output_slo"].is_null() ? "-" : "$" + num(j["cost_per_mtok_output_slo"], 3));
    cells.push_back(rows[i].reason);
    t.add(cells);
  }
  t.print(std::cout);
}

int run_sweep(int argc, char** argv) {
  return guarded("sweep", [&] {
    analysis::CapacityOptions defaults;
    po::options_description opts("llmsim sweep options");
    po::positional_options_description pos;
    pos.add("grid", 1);
    opts.add_options()
        ("grid", po::value<std::string>()->required(), "grid JSON file (or as the first argument): {\"base\": ..., \"grid\": {path: [values]}} or {\"scenarios\": [...]}")
        ("out", po::value<std::string>(), "write the rows to results.csv or results.json")
        ("jobs,j", po::value<int>()->default_value(1), "threads (rows and results do not depend on it)")
        ("fail-if", po::value<std::vector<std::string>>()->composing(),
         "'FIELD OP VALUE' (OP: < <= > >= == !=), repeatable: exit 1 when any row satisfies it")
        ("capacity", "run a capacity search per point (adds max_qps, replicas_needed, monthly_cost)")
        ("replications", po::value<int>()->default_value(defaults.replications), "with --capacity: seeds for the CI")
        ("json", "print the rows as JSON instead of the table");
    add_set_option(opts);
    add_progress_options(opts);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim sweep GRID.json [--set PATH=VALUE ...] [--out results.csv|.json] [--jobs N] "
                    "[--fail-if 'ttft_ms.p95 > 2000' ...] [--capacity]",
                    &pos)) {
      return kOk;
    }
    analysis::Grid grid = analysis::load_grid(vm["grid"].as<std::string>());
    apply_sets(grid, vm);  // every point, before anything runs
    // Conditions are checked before anything runs: a typo in a field name is exit 2 in milliseconds.
    std::vector<analysis::FailIf> bounds;
    if (vm.count("fail-if")) {
      const auto fields = analysis::row_columns(grid.label_paths);
      for (const auto& text : vm["fail-if"].as<std::vector<std::string>>())
        bounds.push_back(analysis::parse_fail_if(text, fields));
    }
    if (vm.count("out")) {  // a bad output name fails before the sweep, not after it
      const std::string f = vm["out"].as<std::string>();
      if (!(f.size() >= 4 && f.compare(f.size() - 4, 4, ".csv") == 0) && !(f.size() >= 5 && f.compare(f.size() - 5, 5, ".json") == 0))
        throw ConfigError("--out", "expected a .csv or .json file name, got '" + f + "'");
    }
    analysis::SweepOptions options;
    options.row.capacity = vm.count("capacity") > 0;
    options.row.capacity_options.replications = vm["replications"].as<int>();
    const auto rows = analysis::run_sweep(grid.points, vm["jobs"].as<int>(), ProgressLine("sweep", "points", vm));
    if (vm.count("out")) write_out(vm["out"].as<std::string>(), rows);
    if (vm.count("json")) {
      Json arr = Json::array();
      for (const auto& r : rows) arr.push_back(analysis::to_json(r));
      print_json(arr);
    } else if (!vm.count("out")) {
      print_table(grid, rows);
    }
    std::size_t violated = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto v = analysis::violations(bounds, analysis::flatten(rows[i]));
      if (v.empty()) continue;
      ++violated;
      std::string where;
      for (const auto& [path, value] : rows[i].labels) where += (where.empty() ? "" : ", ") + path + "=" + value.dump();
      std::cerr << "llmsim sweep: row " << i << " (" << (where.empty() ? rows[i].name : where) << "): ";
      for (std::size_t k = 0; k < v.size(); ++k) std::cerr << (k ? "; " : "") << v[k];
      std::cerr << "\n";
    }
    if (violated) {
      std::cerr << "llmsim sweep: " << violated << " of " << rows.size() << " rows violate a --fail-if bound\n";
      return kBoundViolated;
    }
    return kOk;
  });
}

}  // namespace

Command command_sweep() {
  return {"sweep", "a grid of scenarios on N threads to CSV/JSON; --fail-if bounds for CI (exit 1)", run_sweep};
}

}  // namespace llmsim::cli
