// llmsim._core.analysis: priced simulation, capacity search, compare and sweeps. Every call converts its
// arguments with the GIL held and releases it around the C++ work, so Python threads run in parallel.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <optional>

#include "convert.hpp"
#include "interrupt.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/compare.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/quality.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/analysis/server_args.hpp"
#include "llmsim/analysis/server_command.hpp"
#include "llmsim/analysis/sweep.hpp"
#include "llmsim/analysis/throughput.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/spec/catalog.hpp"
#include "records.hpp"
#include "report/load_curves.hpp"
#include "report/report_page.hpp"

namespace llmsim::python {

namespace {

// `rate` rescales the offered load as `llmsim simulate --rate` does (closed loop: concurrency; classes: mix kept).
spec::ResolvedScenario resolved_of(const std::string& text, std::optional<double> rate = std::nullopt) {
  Json doc = parse_text(text, "scenario");
  spec::Scenario scenario = spec::scenario_from_json(JsonView(doc, ""));
  if (rate) scenario.workload = spec::with_rate(scenario.workload, *rate);
  return spec::resolve(scenario, spec::Catalog::builtin());
}

analysis::CapacityOptions capacity_options(const py::dict& d) {
  analysis::CapacityOptions opt;
  for (auto [key, value] : d) {
    const auto k = key.cast<std::string>();
    if (k == "num_requests") opt.num_requests = value.cast<std::int64_t>();
    else if (k == "warmup_requests") opt.warmup_requests = value.cast<std::int64_t>();
    else if (k == "replications") opt.replications = value.cast<int>();
    else if (k == "rel_tol") opt.rel_tol = value.cast<double>();
    else if (k == "max_evaluations") opt.max_evaluations = value.cast<int>();
    else if (k == "max_rate") opt.max_rate = value.cast<double>();
    else if (k == "max_concurrency") opt.max_concurrency = value.cast<int>();
    else throw ConfigError("capacity." + k, "unknown option (valid: num_requests, warmup_requests, "
                           "replications, rel_tol, max_evaluations, max_rate, max_concurrency)");
  }
  opt.validate("capacity");
  return opt;
}

// check()'s options from Python's arguments ("" = not given).
analysis::VllmCheckOptions check_options(const std::string& scenario_text, const std::string& vllm_args,
                                         const std::string& sglang_args, const std::string& model,
                                         const std::string& gpu, const std::string& engine_version) {
  analysis::VllmCheckOptions o;
  o.scenario = parse_text(scenario_text, "scenario");
  o.vllm_args = vllm_args;
  o.sglang_args = sglang_args;
  o.model = model;
  o.gpu = gpu;
  o.engine_version = engine_version;
  return o;
}

// Sweep points of [(labels JSON, scenario JSON text)], each with its screening verdict when given (SweepPoint::cannot_run).
std::vector<analysis::SweepPoint> sweep_points(const std::vector<std::pair<std::string, std::string>>& points,
                                               const std::vector<std::string>& cannot_run) {
  if (!cannot_run.empty() && cannot_run.size() != points.size())
    throw ConfigError("cannot_run", "expected one entry per point (" + std::to_string(points.size()) + "), got " +
                                        std::to_string(cannot_run.size()));
  std::vector<analysis::SweepPoint> parsed;
  parsed.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::vector<std::pair<std::string, Json>> labels;
    Json doc;
    try {
      for (const auto& pair : parse_text(points[i].first, "labels")) labels.emplace_back(pair.at(0).get<std::string>(), pair.at(1));
      doc = parse_text(points[i].second, "scenario");
    } catch (const ConfigError& e) {
      // named as run_sweep names its points
      throw ConfigError(std::vector<std::string>{"grid point " + std::to_string(i) + ": " + e.what()});
    }
    // A scenario that does not read is judged with the whole grid (analysis::screen_points), as `llmsim sweep` does.
    parsed.push_back(analysis::sweep_point(doc, std::move(labels)));
    if (!cannot_run.empty()) parsed.back().cannot_run = cannot_run[i];
  }
  return parsed;
}

// A flattened row (CSV columns, as `llmsim sweep --out x.csv` writes them) as JSON [[column, value], ...].
std::string flat_row(const analysis::Row& row) {
  Json out = Json::array();
  for (auto& [column, value] : analysis::flatten(row)) out.push_back(Json::array({column, value}));
  return dump(out);
}

// Progress reports from C++ (always on the thread that called in, with the GIL released) into Python.
analysis::Progress progress_of(const py::object& callback) {
  if (callback.is_none()) return {};
  return [callback](std::size_t done, std::size_t total) {
    py::gil_scoped_acquire gil;
    try {
      callback(done, total);
    } catch (py::error_already_set& e) {  // a failing progress bar must not abort (or tear down) the run
      e.discard_as_unraisable("llmsim progress callback");
    }
  };
}

// The comparison Python's compare() and report() ask for (the CLI's compare_options reads the same from flags).
analysis::CompareOptions compare_options(const std::vector<std::string>& gpus, const std::vector<std::string>& quants,
                                         const std::vector<std::string>& policies,
                                         const std::vector<int>& max_num_seqs,
                                         const std::vector<int>& max_num_batched_tokens, const py::dict& capacity,
                                         const std::string& rank_by, int jobs,
                                         const std::map<std::string, double>& prices,
                                         const std::map<std::string, double>& purchase_prices) {
  analysis::CompareOptions opt;
  opt.prices = prices;
  opt.purchase_prices = purchase_prices;
  opt.gpus = gpus;
  opt.quants = quants;
  opt.policies = policies;
  opt.max_num_seqs = max_num_seqs;
  opt.max_num_batched_tokens = max_num_batched_tokens;
  opt.capacity = capacity_options(capacity);
  opt.rank_by = analysis::parse_rank_by(rank_by, "rank_by");
  opt.jobs = jobs;
  return opt;
}

}  // namespace

void register_analysis(py::module_& m) {
  m.def("evaluate", [](const std::string& text, bool record_requests, bool record_iterations,
                       std::optional<double> rate, double time_series_s) {
    std::atomic<bool> cancel{false};
    Warnings warnings;
    engine::SimulationResult result = run_interruptible(cancel, warnings, [&] {
      engine::SimulationOptions opt;
      opt.record_requests = record_requests;
      opt.record_iterations = record_iterations;
      opt.time_series_window_s = time_series_s;
      opt.cancel = &cancel;
      return analysis::evaluate(resolved_of(text, rate), opt);
    });
    return py::make_tuple(dump(metrics::to_json(result.summary)), request_columns(result.requests),
                          iteration_columns(result.iterations), dump(metrics::to_json(result.time_series)));
  }, py::arg("scenario"), py::arg("record_requests") = false, py::arg("record_iterations") = false,
     py::arg("rate") = py::none(), py::arg("time_series_s") = -1.0,
     "(summary JSON text with cost, request columns, iteration columns, time-series JSON text); time_series_s: "
     "window width (0 = automatic, < 0 = off). GIL released while it runs, Ctrl-C stops it (KeyboardInterrupt).");

  m.def("throughput", [](const std::string& text, std::int64_t num_requests) {
    py::gil_scoped_release nogil;
    Json doc = parse_text(text, "scenario");
    analysis::ThroughputOptions opt;
    opt.num_requests = num_requests;
    return dump(analysis::to_json(
        analysis::max_throughput(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin(), opt)));
  }, py::arg("scenario"), py::arg("num_requests") = 0,
     "`llmsim throughput --json` of the scenario (every request at t = 0) as JSON text; GIL released.");

  m.def("capacity", [](const std::string& text, const py::dict& options, bool flat) {
    analysis::RowOptions opt{true, capacity_options(options)};
    std::atomic<bool> cancel{false};
    opt.cancel = &cancel;
    Warnings warnings;
    return run_interruptible(cancel, warnings, [&] {
      const analysis::Row row = analysis::evaluate_row(resolved_of(text), opt);
      return flat ? flat_row(row) : dump(analysis::to_json(row));
    });
  }, py::arg("scenario"), py::arg("options") = py::dict(), py::arg("flat") = false,
     "Capacity row (JSON text, `llmsim capacity --json` fields; flat: the sweep's [[column, value], ...]); GIL "
     "released while it runs, Ctrl-C stops it.");

  m.def("scenario_warnings", [](const std::vector<std::string>& texts) {
    // analysis::scenario_warnings of each scenario, the distinct ones in order; a scenario that does not parse or
    // whose profile cannot be read says nothing here (the run itself reports it, naming the field).
    std::vector<std::string> out;
    for (const auto& text : texts) {
      std::vector<std::string> found;
      try {
        Json doc = parse_text(text, "scenario");
        found = analysis::scenario_warnings(spec::scenario_from_json(JsonView(doc, "")));
      } catch (const ConfigError&) {
        continue;
      }
      for (auto& w : found)
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(std::move(w));
    }
    return out;
  }, py::arg("scenarios"),
     "The distinct analysis::scenario_warnings of scenarios (JSON texts): what Python's capacity, compare, report, "
     "search and sweep issue as ScenarioWarning.");

  m.def("has_slo", [](const std::string& text) {
    Json doc = parse_text(text, "scenario");
    return analysis::has_slo(spec::scenario_from_json(JsonView(doc, "")));
  }, py::arg("scenario"),
     "analysis::has_slo of a scenario (JSON text): whether it sets a latency target (its SLO or a class's); without "
     "one Result's repr says \"no SLO set\", never \"SLO met\".");

  m.def("apply_overrides", [](const std::string& text, const std::string& overrides) {
    std::vector<std::pair<std::string, Json>> pairs;
    for (const auto& pair : parse_text(overrides, "overrides")) pairs.emplace_back(pair.at(0).get<std::string>(), pair.at(1));
    return dump(analysis::apply_overrides(parse_text(text, "scenario"), pairs));
  }, py::arg("scenario"), py::arg("overrides"),
     "Scenario JSON text with [[dotted path, value], ...] applied and repriced (a card moved to keeps no other "
     "card's price), as libsim's analysis::apply_overrides does for every face.");

  m.def("server_arg_sets", [](const std::string& text, const std::string& vllm_args, const std::string& sglang_args) {
    const auto r = analysis::server_arg_sets(vllm_args, sglang_args, parse_text(text, "scenario"));
    Json pairs = Json::array();
    for (const auto& [path, value] : r.sets) pairs.push_back(Json::array({path, value}));
    return std::make_pair(dump(pairs), r.notes);
  }, py::arg("scenario"), py::arg("vllm_args"), py::arg("sglang_args"),
     "A server command line (one of vllm_args, sglang_args) as ([[path, value], ...] JSON text to apply before the "
     "keyword overrides, [notes]): analysis::server_arg_sets, the rule of the CLI's --vllm-args/--sglang-args.");

  m.def("apply_server_line", [](const std::string& text, const std::string& vllm_args, const std::string& sglang_args) {
    const Json doc = parse_text(text, "scenario");
    const auto line = analysis::server_arg_sets(vllm_args, sglang_args, doc);
    return std::make_pair(dump(analysis::apply_server_sets(doc, line)), line.notes);
  }, py::arg("scenario"), py::arg("vllm_args"), py::arg("sglang_args"),
     "(scenario JSON text with the server line applied, [notes]): analysis::server_arg_sets then apply_server_sets "
     "(a value a field refuses is a ValueError naming the flag typed), the CLI's --vllm-args/--sglang-args.");

  m.def("output_wording", [](bool slo_set) {
    return std::make_pair(metrics::priced_output_tokens(slo_set), metrics::capacity_bound(slo_set));
  }, py::arg("slo_set"),
     "(the tokens a cost per million divides by, how max_qps is bounded) as every output says them: \"SLO-meeting "
     "output tokens\" / \"inside the SLO\", or with no latency target set the words that say so "
     "(metrics::priced_output_tokens, metrics::capacity_bound).");

  m.def("check_server_fields", [](const std::string& result, const std::string& scenario, const std::string& vllm_args,
                                   const std::string& sglang_args, const std::vector<std::string>& later) {
    const auto line = analysis::server_arg_sets(vllm_args, sglang_args, parse_text(scenario, "scenario"));
    analysis::check_server_fields(parse_text(result, "scenario"), line, later);
  }, py::arg("result"), py::arg("scenario"), py::arg("vllm_args"), py::arg("sglang_args"), py::arg("later"),
     "analysis::check_server_fields: `result` (the scenario after the line and the keyword overrides `later`) read; a "
     "problem on a field the line set is a ValueError naming the flag typed (--max-num-seqs, not engine.max_num_seqs).");

  m.def("command_server_fields", [](const std::string& command, const std::string& vllm_args, const std::string& sglang_args) {
    if (command != "memory" && command != "step") throw ConfigError("command", "expected memory or step, got " + command);
    const auto r = analysis::command_server_fields(
        command == "memory" ? analysis::PlanCommand::memory : analysis::PlanCommand::step, vllm_args, sglang_args,
        analysis::ServerFace::python);
    Json pairs = Json::array();
    for (const auto& [path, value] : r.fields) pairs.push_back(Json::array({path, value}));
    return std::make_pair(dump(pairs), r.notes);
  }, py::arg("command"), py::arg("vllm_args"), py::arg("sglang_args"),
     "The scenario fields `memory` or `step` reads from a server command line, as ([[path, value], ...] JSON text, "
     "[notes]): analysis::command_server_fields, the rule of the CLI's memory/step --vllm-args/--sglang-args.");

  m.def("set_gpu", [](const std::string& text, const std::string& gpu, std::optional<double> price,
                      std::optional<double> purchase_price) {
    Json doc = parse_text(text, "scenario");
    spec::Scenario s = spec::scenario_from_json(JsonView(doc, ""));
    analysis::set_gpu(s, gpu, price, purchase_price);
    return dump(spec::to_json(s));
  }, py::arg("scenario"), py::arg("gpu"), py::arg("price") = py::none(), py::arg("purchase_price") = py::none(),
     "The scenario (normalized JSON text) put on `gpu`, priced by price_on_gpu (the CLI's --gpu/--price rule).");

  m.def("quality", [] {
    Json out = Json::array();
    for (const auto& q : analysis::quality_deltas())
      out.push_back({{"format", q.format}, {"model", q.model}, {"params_b", q.params_b}, {"metric", q.metric},
                     {"baseline", q.baseline != 0 ? Json(q.baseline) : Json(nullptr)},
                     {"quantized", q.quantized != 0 ? Json(q.quantized) : Json(nullptr)},
                     {"delta", q.delta}, {"source", q.source}, {"text", q.text()}});
    return dump(out);
  }, "JSON list of the published quality deltas per quantization format (llmsim does not model quality).");

  m.def("compare", [](const std::string& text, const std::vector<std::string>& gpus,
                      const std::vector<std::string>& quants, const std::vector<std::string>& policies,
                      const std::vector<int>& max_num_seqs, const std::vector<int>& max_num_batched_tokens,
                      const py::dict& capacity, const std::string& rank_by, int jobs, const py::object& progress,
                      const std::map<std::string, double>& prices, const std::map<std::string, double>& purchase_prices) {
    analysis::CompareOptions opt = compare_options(gpus, quants, policies, max_num_seqs, max_num_batched_tokens,
                                                   capacity, rank_by, jobs, prices, purchase_prices);
    std::atomic<bool> cancel{false};
    opt.capacity.cancel = &cancel;  // each option's capacity search stops within one simulation
    auto report = progress_of(progress);
    Warnings warnings;
    analysis::CompareResult result = run_interruptible(cancel, warnings, [&] {
      Json doc = parse_text(text, "scenario");
      return analysis::compare(spec::scenario_from_json(JsonView(doc, "")), opt, report);
    });
    py::list rows;
    for (const auto& row : result.rows) rows.append(flat_row(row));
    return py::make_tuple(rows, dump(analysis::to_json(result)));
  }, py::arg("scenario"), py::arg("gpus"), py::arg("quants"), py::arg("policies"), py::arg("max_num_seqs"),
     py::arg("max_num_batched_tokens"), py::arg("capacity"), py::arg("rank_by"), py::arg("jobs"),
     py::arg("progress") = py::none(), py::arg("prices") = std::map<std::string, double>{},
     py::arg("purchase_prices") = std::map<std::string, double>{},
     "(flattened rows, compare JSON text); capacity search per option on `jobs` threads, GIL released, Ctrl-C "
     "stops it.");

  m.def("report", [](const std::string& text, const std::vector<std::string>& gpus,
                     const std::vector<std::string>& quants, const std::vector<std::string>& policies,
                     const std::vector<int>& max_num_seqs, const std::vector<int>& max_num_batched_tokens,
                     const py::dict& capacity, const std::string& rank_by, int jobs, const py::object& progress,
                     const std::map<std::string, double>& prices, const std::map<std::string, double>& purchase_prices,
                     const std::string& source) {
    // `llmsim report`'s steps and page (examples/cli/report, the library llmsim_report): the comparison, each
    // option's latency against load, then the HTML document and its one-sentence answer.
    analysis::CompareOptions opt = compare_options(gpus, quants, policies, max_num_seqs, max_num_batched_tokens,
                                                   capacity, rank_by, jobs, prices, purchase_prices);
    std::atomic<bool> cancel{false};
    opt.capacity.cancel = &cancel;
    auto report = progress_of(progress);
    Warnings warnings;
    const auto [html, headline] = run_interruptible(cancel, warnings, [&] {
      Json doc = parse_text(text, "scenario");
      const spec::Scenario base = spec::scenario_from_json(JsonView(doc, ""));
      const analysis::CompareResult result = analysis::compare(base, opt, report);
      const auto curves = cli::report::load_curves(base, result, opt, &cancel, report);
      const cli::report::ReportInput input{base, result, curves, opt, source};
      return std::pair<std::string, std::string>(cli::report::render_report(input), cli::report::headline(input));
    });
    return py::make_tuple(html, headline);
  }, py::arg("scenario"), py::arg("gpus"), py::arg("quants"), py::arg("policies"), py::arg("max_num_seqs"),
     py::arg("max_num_batched_tokens"), py::arg("capacity"), py::arg("rank_by"), py::arg("jobs"),
     py::arg("progress") = py::none(), py::arg("prices") = std::map<std::string, double>{},
     py::arg("purchase_prices") = std::map<std::string, double>{}, py::arg("source") = "",
     "(HTML page, headline) of `llmsim report` for the comparison: compare, then each option's latency against "
     "load, on `jobs` threads with the GIL released; Ctrl-C stops it. progress(done, total) restarts at 0 for the "
     "latency phase.");

  m.def("expand_grid", [](const std::string& grid_text, const std::vector<std::string>& axis_order,
                          const std::string& split_sets, const std::string& before_sets) {
    // The CLI's grid rules (cartesian order, overlapping axes refused, per-card repricing) for Python's grids.
    const Json doc = parse_text(grid_text, "grid");
    analysis::Grid grid = analysis::expand_grid(JsonView(doc, ""), "", axis_order, before_sets.empty());
    if (!before_sets.empty()) {
      // The same grid on the base before what was set on it: a point that read there and not here contradicts
      // what was set (its row cannot run), as `llmsim sweep --set` judges it (analysis::judge_sets).
      const Json before_doc = parse_text(before_sets, "grid");
      const analysis::Grid before = analysis::expand_grid(JsonView(before_doc, ""), "", axis_order, false);
      std::vector<bool> read_before(grid.points.size(), false);
      for (std::size_t i = 0; i < grid.points.size() && i < before.points.size(); ++i)
        read_before[i] = before.points[i].problem.empty();
      analysis::judge_sets(grid, read_before);
    }
    // What the caller set on the base (keyword overrides, a server line): a split among them labels the rows with
    // the split each ran, as `llmsim sweep --set` does (analysis::label_split_of_sets).
    std::vector<std::pair<std::string, Json>> sets;
    for (const auto& pair : parse_text(split_sets, "split_sets")) sets.emplace_back(pair.at(0).get<std::string>(), pair.at(1));
    analysis::label_split_of_sets(grid, sets);
    py::list out;
    for (const auto& p : grid.points) {
      Json labels = Json::array();
      for (const auto& [path, value] : p.labels) labels.push_back(Json::array({path, value}));
      // A point whose values contradict each other keeps its document as written: its row cannot run.
      out.append(py::make_tuple(dump(labels), dump(p.problem.empty() ? spec::to_json(p.scenario) : p.written),
                                p.cannot_run));
    }
    return out;
  }, py::arg("grid"), py::arg("axis_order") = std::vector<std::string>{}, py::arg("split_sets") = std::string("[]"),
     py::arg("before_sets") = std::string(),
     "Points of a grid object ({\"base\": {...}, \"grid\": {...}} or {\"base\": {...}, \"scenarios\": [...]}) as "
     "[(labels JSON, scenario JSON text, cannot_run)], exactly as `llmsim sweep` expands them. `before_sets`: the same "
     "grid on the base before `split_sets` were set on it: a point contradicting them has its reason in cannot_run "
     "(analysis::judge_sets), for sweep(cannot_run=...).");

  m.def("screen_points", [](const std::vector<std::pair<std::string, std::string>>& points,
                            const std::vector<std::string>& cannot_run) {
    const std::vector<analysis::SweepPoint> parsed = sweep_points(points, cannot_run);
    py::gil_scoped_release nogil;
    return analysis::screen_points(parsed);
  }, py::arg("points"), py::arg("cannot_run") = std::vector<std::string>{},
     "analysis::screen_points of [(labels JSON, scenario JSON text)]: per point \"\" or the reason its values "
     "contradict each other (a fits = false row); a bad value raises ValueError naming the point. Python's Dask "
     "sweep screens the whole grid with it before sending chunks.");

  m.def("sweep", [](const std::vector<std::pair<std::string, std::string>>& points, bool capacity,
                    const py::dict& capacity_opts, int jobs, const py::object& progress,
                    const std::vector<std::string>& cannot_run) {
    analysis::SweepOptions opt;
    opt.row.capacity = capacity;
    std::vector<std::string> given;
    for (const auto& item : capacity_opts) given.push_back(item.first.cast<std::string>());
    analysis::refuse_capacity_options_without_capacity(capacity, given, "capacity=True");
    opt.row.capacity_options = capacity_options(capacity_opts);
    std::atomic<bool> cancel{false};
    opt.row.cancel = &cancel;
    Warnings warnings;
    opt.on_warning = warnings.sink();
    // Rows as they finish, so an interrupted sweep still hands back what it computed.
    std::vector<std::optional<std::string>> finished(points.size());
    opt.on_row = [&](std::size_t i, const analysis::Row& row) { finished[i] = flat_row(row); };
    auto report = progress_of(progress);
    run_interruptible(
        cancel, warnings,
        [&] {
          analysis::run_sweep(sweep_points(points, cannot_run), jobs, report, opt);
          return true;
        },
        [&](py::error_already_set& e) {  // KeyboardInterrupt.partial_rows: [(point, flat row JSON), ...]
          py::list partial;
          for (std::size_t i = 0; i < finished.size(); ++i)
            if (finished[i]) partial.append(py::make_tuple(i, *finished[i]));
          if (py::hasattr(e.value(), "__dict__")) e.value().attr("partial_rows") = partial;
        });
    py::list out;
    for (const auto& row : finished) out.append(row ? py::object(py::str(*row)) : py::object(py::none()));
    return out;
  }, py::arg("points"), py::arg("capacity"), py::arg("capacity_options"), py::arg("jobs"),
     py::arg("progress") = py::none(), py::arg("cannot_run") = std::vector<std::string>{},
     "Flattened rows of [(labels JSON [[path, value], ...], scenario JSON text)], in point order, on `jobs` "
     "threads with the GIL released. Ctrl-C stops it: the KeyboardInterrupt carries `partial_rows`, the "
     "[(point, row)] that had finished. `cannot_run`: the whole grid's screen_points verdicts for these points "
     "(a chunk of it), else the points are screened among themselves.");

  m.def("check_vllm", [](const std::string& result_text, const std::string& source, const std::string& scenario_text,
                         const std::string& vllm_args, const std::string& model, const std::string& gpu,
                         const std::string& engine_version, const std::string& sglang_args) {
    py::gil_scoped_release nogil;
    const auto o = check_options(scenario_text, vllm_args, sglang_args, model, gpu, engine_version);
    return dump(analysis::to_json(analysis::check_vllm_result(analysis::parse_vllm_result(result_text, source), o)));
  }, py::arg("result"), py::arg("source"), py::arg("scenario"), py::arg("vllm_args"), py::arg("model"), py::arg("gpu"),
     py::arg("engine_version") = "", py::arg("sglang_args") = "",
     "A vLLM benchmark result (JSON text) beside llmsim's prediction: the check JSON text (rows, notes, scenario); "
     "GIL released while it runs.");

  m.def("check_vllm_runs", [](const std::string& result_text, const std::string& source, const std::string& scenario_text,
                              const std::string& vllm_args, const std::string& model, const std::string& gpu,
                              const std::string& engine_version, int run, const std::string& sglang_args) {
    py::gil_scoped_release nogil;
    const auto o = check_options(scenario_text, vllm_args, sglang_args, model, gpu, engine_version);
    const auto runs = analysis::parse_vllm_results(result_text, source);
    Json out = Json::array();
    if (run > 0) {
      out.push_back(analysis::to_json(analysis::check_vllm_result(analysis::pick_vllm_run(runs, run), o)));
    } else {
      for (const auto& r : runs) out.push_back(analysis::to_json(analysis::check_vllm_result(r, o)));
    }
    return dump(out);
  }, py::arg("result"), py::arg("source"), py::arg("scenario"), py::arg("vllm_args"), py::arg("model"), py::arg("gpu"),
     py::arg("engine_version"), py::arg("run"), py::arg("sglang_args") = "",
     "Every run of a result file (one JSON document, or JSON lines: --append-result, SGLang bench_serving), or the "
     "one on line `run` (> 0), beside llmsim's prediction: a JSON array of check objects; GIL released.");
}

}  // namespace llmsim::python
