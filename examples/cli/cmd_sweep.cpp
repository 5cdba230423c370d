// `llmsim sweep`: a grid of scenarios on a thread pool, rows in grid order to CSV/JSON, and `--fail-if`
// bounds that turn a sweep into a CI check (exit 1 exactly when a row violates one). With --out, finished rows
// go to a journal (F.partial) as they finish, so an interrupted sweep continues with --resume; the file F
// itself appears only when every row is there.
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <optional>

#include "common.hpp"
#include "llmsim/analysis/fail_if.hpp"
#include "llmsim/analysis/sweep.hpp"
#include "llmsim/analysis/sweep_journal.hpp"
#include "llmsim/core/error.hpp"
#include "output_file.hpp"
#include "scenario_input.hpp"
#include "signals.hpp"

namespace llmsim::cli {

namespace {

using analysis::RowRecord;

std::string csv_cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n\r") != std::string::npos) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

void write_out(OutputFile& out, const std::vector<RowRecord>& rows) {
  if (ends_with(out.path(), ".json")) {
    Json arr = Json::array();
    for (const auto& r : rows) arr.push_back(r.row);
    out.write(arr.dump(1) + "\n");
  } else {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      std::string line;
      if (k == 0) {
        for (std::size_t i = 0; i < rows[k].flat.size(); ++i) line += (i ? "," : "") + csv_cell(rows[k].flat[i].first);
        line += "\n";
      }
      for (std::size_t i = 0; i < rows[k].flat.size(); ++i) line += (i ? "," : "") + csv_cell(rows[k].flat[i].second);
      out.write(line + "\n");
    }
  }
  out.commit();
}

std::string num(const Json& v, int d) { return v.is_null() ? "-" : fmt(v.get<double>(), d); }

Json column(const RowRecord& r, const std::string& name) {
  for (const auto& [c, v] : r.flat)
    if (c == name) return v;
  return nullptr;
}

void print_table(const analysis::Grid& grid, const std::vector<RowRecord>& rows) {
  std::vector<std::string> header = {"#"};
  for (const auto& p : grid.label_paths) header.push_back(p);
  // The cost head names the rows' currency (common.hpp's rule, as compare's heads); rows in several currencies
  // (cost.currency as an axis) get a neutral head, each cell its own currency.
  std::string currency;
  for (const auto& r : rows) {
    const std::string c = r.row.value("currency", std::string("USD"));
    currency = currency.empty() || currency == c ? c : "mixed";
  }
  const std::string cost_head = currency == "mixed" ? "cost/Mtok out" : currency_unit(currency.empty() ? "USD" : currency) + "/Mtok out";
  for (const std::string h : {"fits", "SLO", "TTFT p95", "TPOT p95", "goodput tok/s", cost_head.c_str(), "note"}) header.push_back(h);
  Table t(header);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Json& j = rows[i].row;
    std::vector<std::string> cells = {std::to_string(i)};
    for (const auto& p : grid.label_paths) {
      const Json v = column(rows[i], p);
      cells.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    }
    const bool fits = j.value("fits", false);
    cells.push_back(fits ? "yes" : "no");
    cells.push_back(!fits ? "-" : j["meets_slo"].is_null() ? "no SLO set" : j["meets_slo"].get<bool>() ? "met" : "missed");
    cells.push_back(num(j["ttft_ms"]["p95"], 0));
    cells.push_back(num(j["tpot_ms"]["p95"], 1));
    cells.push_back(num(j["goodput_output_tps"], 0));
    cells.push_back(j["cost_per_mtok_output_slo"].is_null()
                        ? "-"
                        : money_prefix(j.value("currency", std::string("USD"))) + num(j["cost_per_mtok_output_slo"], 3));
    cells.push_back(j.value("reason", std::string()));
    t.add(cells);
  }
  t.print(std::cout);
}

std::string where_text(const analysis::SweepPoint& p, const RowRecord& r) {
  std::string where;
  for (const auto& [path, value] : p.labels) where += (where.empty() ? "" : ", ") + path + "=" + value.dump();
  return where.empty() ? r.row.value("name", std::string()) : where;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The rows a journal holds for this grid and these options; ConfigError when it was written for others.
std::map<std::size_t, RowRecord> read_journal(const std::string& journal, const std::vector<std::string>& keys) {
  const std::string text = read_text_file(journal, "--resume", kMaxCsvFileBytes);
  std::map<std::size_t, RowRecord> done;
  std::size_t line = 0;
  for (auto& e : analysis::parse_journal(text, journal)) {
    ++line;
    if (e.point >= keys.size() || e.key != keys[e.point])
      throw ConfigError("--resume", "'" + journal + "' line " + std::to_string(line) + " is a row of point " +
                                        std::to_string(e.point) +
                                        " of another grid, other options or other input files (a trace or profile the grid reads changed); "
                                        "delete the file to start over");
    done[e.point] = std::move(e.record);
  }
  // A line torn by a kill has no '\n': cut it, so that the rows appended next start on a line of their own.
  const std::size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (keep < text.size() && ::truncate(journal.c_str(), static_cast<off_t>(keep)) != 0)
    throw ConfigError("--resume", "cannot repair the torn last line of '" + journal + "'");
  return done;
}

int run_sweep(int argc, char** argv) {
  return guarded("sweep", [&] {
    analysis::CapacityOptions defaults;
    po::options_description opts("llmsim sweep options");
    po::positional_options_description pos;
    pos.add("grid", 1);
    opts.add_options()
        ("grid", po::value<std::string>()->required(), "grid JSON file (or as the first argument; - or a pipe streams it): {\"base\": ..., \"grid\": {path: [values]}} or {\"scenarios\": [...]}")
        ("out", po::value<std::string>(), "write the rows to results.csv or results.json (rows also go to results.csv.partial as they finish)")
        ("resume", "continue an interrupted sweep from the rows in its --out file's .partial journal")
        ("jobs,j", po::value<int>()->default_value(1), "threads (rows and results do not depend on it)")
        ("fail-if", po::value<std::vector<std::string>>()->composing(),
         "'FIELD OP VALUE' (OP: < <= > >= == !=), repeatable: exit 1 when any row satisfies it; a row without a "
         "value for FIELD violates it")
        ("allow-missing", "with --fail-if: a row without a value for the field (e.g. it does not fit) passes the bound")
        ("capacity", "run a capacity search per point (adds max_qps, replicas_needed, monthly_cost)")
        ("replications", po::value<int>()->default_value(defaults.replications), "with --capacity: seeds for the CI")
        ("rel-tol", po::value<double>()->default_value(defaults.rel_tol), "with --capacity: relative tolerance of the bisection")
        ("requests", po::value<long long>()->default_value(defaults.num_requests), "with --capacity: requests per simulation (at most the scenario's)")
        ("max-evaluations", po::value<int>()->default_value(defaults.max_evaluations), "with --capacity: simulations per replication at most")
        ("json", "print the rows as JSON instead of the table");
    add_set_option(opts);
    add_progress_options(opts);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm,
                    "usage: llmsim sweep GRID.json [--set PATH=VALUE ...] [--vllm-args \"vllm serve ...\" | --sglang-args \"...\"] [--out results.csv|.json [--resume]] [--jobs N] "
                    "[--fail-if 'ttft_ms.p95 > 2000' ...] [--allow-missing] [--capacity]",
                    &pos)) {
      return kOk;
    }
    // A grid is a scenario with axes: read from a file, a pipe or "-" as a scenario is (relative paths in a streamed
    // grid are the working directory's).
    const std::string grid_arg = vm["grid"].as<std::string>();
    analysis::Grid grid = is_stream_argument(grid_arg)
                              ? analysis::parse_grid(read_scenario_text(grid_arg), stream_argument_name(grid_arg))
                              : analysis::load_grid(grid_arg);
    apply_sets(grid, vm);  // every point, before anything runs
    for (const auto& p : grid.points) {
      std::string where;
      for (const auto& [path, value] : p.labels) where += (where.empty() ? "" : ", ") + path + "=" + value.dump();
      print_scenario_warnings(p.scenario, where.empty() ? "" : "point " + where);
    }
    // Conditions are checked before anything runs: a typo in a field name, or a value of the wrong kind for the
    // field ('fits == maybe'), is exit 2 in milliseconds.
    std::vector<analysis::FailIf> bounds;
    if (vm.count("fail-if")) {
      std::vector<std::vector<Json>> label_values(grid.label_paths.size());
      for (const auto& p : grid.points)
        for (std::size_t k = 0; k < p.labels.size() && k < label_values.size(); ++k)
          label_values[k].push_back(p.labels[k].second);
      const auto schema = analysis::row_schema(grid.label_paths, label_values);
      for (const auto& text : vm["fail-if"].as<std::vector<std::string>>())
        bounds.push_back(analysis::parse_fail_if(text, schema));
    }
    const bool allow_missing = vm.count("allow-missing") > 0;
    if (allow_missing && bounds.empty()) throw ConfigError("--allow-missing", "given without --fail-if");

    analysis::SweepOptions options;
    options.row.capacity = vm.count("capacity") > 0;
    auto& c = options.row.capacity_options;  // as `llmsim capacity` sets them
    c.replications = vm["replications"].as<int>();
    c.rel_tol = vm["rel-tol"].as<double>();
    c.num_requests = vm["requests"].as<long long>();
    c.max_evaluations = vm["max-evaluations"].as<int>();
    std::vector<std::string> search_flags;  // given by the user, not defaulted
    for (const char* flag : {"replications", "rel-tol", "requests", "max-evaluations"})
      if (!vm[flag].defaulted()) search_flags.push_back(std::string("--") + flag);
    analysis::refuse_capacity_options_without_capacity(options.row.capacity, search_flags, "--capacity");
    c.validate("capacity");

    CancelScope interrupts;  // first, so that no signal can leave a temporary output file behind
    // Outputs are opened before the work: a missing directory or a bad name fails in milliseconds.
    std::optional<OutputFile> out, journal;
    std::string journal_path;
    std::map<std::size_t, RowRecord> done;
    std::vector<std::string> keys;  // fingerprints tie journal lines to points (only needed with --out)
    if (vm.count("out")) {
      keys.resize(grid.points.size());
      for (std::size_t i = 0; i < grid.points.size(); ++i) keys[i] = analysis::point_key(grid.points[i], options.row);
      const std::string f = vm["out"].as<std::string>();
      if (!ends_with(f, ".csv") && !ends_with(f, ".json"))
        throw ConfigError("--out", "expected a .csv or .json file name, got '" + f + "'");
      journal_path = f + ".partial";
      if (vm.count("resume")) {
        if (!file_exists(journal_path))
          throw ConfigError("--resume", "no interrupted sweep to continue: '" + journal_path + "' does not exist");
        done = read_journal(journal_path, keys);
      } else if (file_exists(journal_path)) {
        throw ConfigError("--out", "'" + journal_path + "' holds the rows of an interrupted sweep: continue it with "
                                   "--resume, or delete it to start over");
      }
      out.emplace(f, "--out");
      journal.emplace(journal_path, "--out", OutputFile::Mode::append);
    } else if (vm.count("resume")) {
      throw ConfigError("--resume", "needs --out (the file whose sweep was interrupted)");
    }

    std::vector<RowRecord> records(grid.points.size());
    if (!done.empty()) {  // which points contradict themselves is the whole grid's verdict, not the rest's
      const std::vector<std::string> verdicts = analysis::screen_points(grid.points);
      for (std::size_t i = 0; i < grid.points.size(); ++i) grid.points[i].cannot_run = verdicts[i];
    }
    std::vector<analysis::SweepPoint> todo;
    std::vector<std::size_t> todo_index;
    for (std::size_t i = 0; i < grid.points.size(); ++i) {
      if (auto it = done.find(i); it != done.end()) {
        records[i] = std::move(it->second);
      } else {
        todo.push_back(grid.points[i]);
        todo_index.push_back(i);
      }
    }
    if (!done.empty() && !vm.count("quiet"))
      std::cerr << "llmsim sweep: resuming: " << done.size() << " of " << grid.points.size()
                << " points done in " << journal_path << "\n";

    options.row.cancel = interrupts.flag();
    options.on_warning = [](const std::string& m) { std::cerr << "llmsim sweep: warning: " << m << "\n"; };
    std::size_t finished = done.size();
    options.on_row = [&](std::size_t k, const analysis::Row& row) {
      const std::size_t i = todo_index[k];
      records[i] = analysis::record_of(row);
      if (journal) {
        journal->write(analysis::journal_line(i, keys[i], records[i]));
        journal->flush();  // a finished row is kept even if the process is killed next
      }
      ++finished;
    };
    ProgressLine progress("sweep", "points", vm);  // resumed rows count as done
    const std::size_t total = grid.points.size();
    try {
      if (!todo.empty())
        analysis::run_sweep(todo, vm["jobs"].as<int>(), [&](std::size_t, std::size_t) { progress(finished, total); },
                            options);
    } catch (const Cancelled&) {
      if (journal)
        std::cerr << "llmsim sweep: " << finished << " of " << total << " rows are kept in " << journal_path
                  << "; run the same command with --resume to continue\n";
      throw;
    }

    if (out) {
      write_out(*out, records);
      journal.reset();
      ::unlink(journal_path.c_str());  // the result is complete: the journal has done its job
    }
    if (vm.count("json")) {
      Json arr = Json::array();
      for (const auto& r : records) arr.push_back(r.row);
      print_json(arr);
    } else if (!out) {
      print_table(grid, records);
    }
    std::vector<std::vector<std::pair<std::string, Json>>> flats;
    for (const auto& r : records) flats.push_back(r.flat);
    analysis::require_values(bounds, flats);  // a bound on a field no row has is an error, not a pass
    std::size_t violated = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto v = analysis::violations(bounds, records[i].flat, allow_missing);
      if (v.empty()) continue;
      ++violated;
      std::cerr << "llmsim sweep: row " << i << " (" << where_text(grid.points[i], records[i]) << "): ";
      for (std::size_t k = 0; k < v.size(); ++k) std::cerr << (k ? "; " : "") << v[k];
      std::cerr << "\n";
    }
    if (violated) {
      std::cerr << "llmsim sweep: " << violated << " of " << records.size() << " rows violate a --fail-if bound\n";
      return kBoundViolated;
    }
    return kOk;
  });
}

}  // namespace

Command command_sweep() {
  return {"sweep", "a grid of scenarios on N threads to CSV/JSON; --fail-if bounds for CI (exit 1); --resume", run_sweep};
}

}  // namespace llmsim::cli
