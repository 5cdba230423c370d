#include "common.hpp"
#include "scenario_input.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <new>
#include <set>
#include <sstream>
#include <string_view>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/analysis/server_args.hpp"
#include "llmsim/analysis/server_command.hpp"
#include "llmsim/analysis/sweep.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "command_hints.hpp"
#include "signals.hpp"

namespace llmsim::cli {

void add_scenario_options(po::options_description& opts, po::positional_options_description& positional,
                          const char* what) {
  opts.add_options()("scenario", po::value<std::string>()->required(),
                     (std::string(what) + " (or as the first argument; - reads it from standard input, and a pipe "
                                          "such as <(jq ... s.json) is read once to its end)").c_str());
  positional.add("scenario", 1);
  add_set_option(opts);
}

void add_set_option(po::options_description& opts) {
  opts.add_options()
      ("vllm-args", po::value<std::string>(),
       "a `vllm serve` command line (\"vllm serve MODEL -tp 2 --max-num-seqs 128 --kv-cache-dtype fp8\"): its "
       "model and the engine arguments llmsim models override the scenario file; the others are listed on stderr; "
       "an unknown or misspelled flag is an error")
      ("sglang-args", po::value<std::string>(),
       "an SGLang server command line (\"python -m sglang.launch_server --model-path M --tp-size 2\"), read as "
       "--vllm-args is (docs/vllm.md lists the flags that map)")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "PATH=VALUE, repeatable: set a scenario field by its dotted path, after --vllm-args and before the other "
       "flags apply (--set workload.arrival.rate=8 --set hardware.gpu=a100-80gb-sxm); VALUE is JSON, else a plain "
       "string. An object replaces the whole field (--set engine={...} clears the engine's other settings), where a "
       "grid or --axis value merges into it");
}

std::string server_command_line(const po::variables_map& vm, const char* name) {
  if (!vm.count(name)) return {};
  const std::string v = vm[name].as<std::string>();
  // Given but blank (an unset shell variable): the server's settings would be dropped without a word.
  if (v.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ConfigError(std::string("--") + name,
                      analysis::empty_server_line_problem(std::string(name) == "sglang-args", "leave the flag out"));
  return v;
}

namespace {
void print_notes(const std::vector<std::string>& notes) {
  for (const auto& n : notes) std::cerr << "note: " << n << "\n";
}
}  // namespace

std::pair<std::string, Json> parse_set(const std::string& text, const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) throw ConfigError(flag, "expected PATH=VALUE, got '" + text + "'");
  const std::string path = text.substr(0, eq), value = text.substr(eq + 1);
  const auto first = value.find_first_not_of(" \t\r\n");
  const bool looks_structured = first != std::string::npos && (value[first] == '{' || value[first] == '[');
  try {
    [[maybe_unused]] const Json probe = Json::parse(value);
  } catch (const Json::parse_error&) {
    if (!looks_structured) return {path, Json(value)};  // a bare string: hardware.gpu=a100-80gb-sxm
  } catch (const Json::out_of_range&) {
    // 1e999 is a number beyond double's range, not the string "1e999" (which a number field refused as a string).
    if (!looks_structured)
      throw ConfigError(path, "the number " + value + " is out of range: expected a finite number");
  }
  // parse_json, as for files: a syntax error inside an object or list, a duplicate key and a nested out-of-range
  // number are errors naming where they are (nlohmann would keep the last of two equal keys silently).
  return {path, parse_json(value, flag + " " + path)};
}

void apply_sets(Json& scenario, const po::variables_map& vm) {
  if (!vm.count("set")) return;
  for (const auto& text : vm["set"].as<std::vector<std::string>>()) {
    const auto [path, value] = parse_set(text);
    spec::set_json_path(scenario, path, value);
  }
}

Json load_scenario(const po::variables_map& vm) { return load_scenario(read_scenario_json(vm["scenario"].as<std::string>()), vm); }

Json load_scenario(Json file, const po::variables_map& vm) {
  const auto line = analysis::server_arg_sets(server_command_line(vm, "vllm-args"), server_command_line(vm, "sglang-args"), file);
  print_notes(line.notes);
  Json doc = analysis::apply_server_sets(std::move(file), line);
  apply_sets(doc, vm);
  // A bad value the server line gave (--max-num-seqs 0) is named by the flag the user typed, not the scenario field
  // it became; a field --set gave again keeps its name.
  std::vector<std::string> later;
  if (vm.count("set"))
    for (const auto& text : vm["set"].as<std::vector<std::string>>()) later.push_back(parse_set(text).first);
  analysis::check_server_fields(doc, line, later);
  return doc;
}

void apply_sets(analysis::Grid& grid, const po::variables_map& vm) {
  const std::string vllm = server_command_line(vm, "vllm-args"), sglang = server_command_line(vm, "sglang-args");
  const bool server = !vllm.empty() || !sglang.empty();
  if (!vm.count("set") && !server) return;
  std::vector<std::pair<std::string, Json>> sets;
  if (vm.count("set"))
    for (const auto& text : vm["set"].as<std::vector<std::string>>()) sets.push_back(parse_set(text));
  analysis::refuse_sets_on_axes(grid, sets, "--set");
  std::vector<std::pair<std::string, Json>> applied = sets;  // everything set on top, for the rows' labels
  std::vector<bool> read_before(grid.points.size());
  for (std::size_t i = 0; i < grid.points.size(); ++i) {
    const analysis::SweepPoint& point = grid.points[i];
    read_before[i] = point.problem.empty();
    // A point whose values contradict each other keeps its document as written (analysis::SweepPoint::problem).
    Json doc = read_before[i] ? spec::to_json(point.scenario) : point.written;
    if (server) {  // scenario < server command line < --set, at every point
      const auto s = analysis::server_arg_sets(vllm, sglang, doc);
      analysis::refuse_sets_on_axes(grid, s.sets, vllm.empty() ? "--sglang-args" : "--vllm-args");
      if (i == 0) print_notes(s.notes);
      for (const auto& [path, value] : s.sets) spec::set_json_path(doc, path, value);
      if (i == 0) applied.insert(applied.end(), s.sets.begin(), s.sets.end());
    }
    for (const auto& [path, value] : sets) spec::set_json_path(doc, path, value);
    grid.points[i] = analysis::sweep_point(doc, std::move(grid.points[i].labels));
  }
  // A point that read before and does not now contradicts what was set (a "2x...@pp" card under --set hardware.tp=2):
  // its row cannot run; a value bad on its own is an error naming the point.
  analysis::judge_sets(grid, read_before);
  // A split set on top of a card axis: the rows say the tp and pp they ran (analysis::label_split_of_sets).
  analysis::label_split_of_sets(grid, applied);
}

void add_progress_options(po::options_description& opts) {
  opts.add_options()
      ("progress", "progress on stderr even when it is not a terminal (plain lines, no carriage returns)")
      ("quiet,q", "no progress on stderr");
}

ProgressLine::ProgressLine(std::string label, std::string unit, const po::variables_map& vm)
    : label_(std::move(label)), unit_(std::move(unit)) {
  const bool forced = vm.count("progress") > 0, quiet = vm.count("quiet") > 0;
  if (forced && quiet) throw ConfigError("--progress", "conflicts with --quiet; give one");
  if (quiet) return;
  if (isatty(STDERR_FILENO)) mode_ = Mode::terminal;
  else if (forced) mode_ = Mode::lines;
}

void ProgressLine::operator()(std::size_t done, std::size_t total) {
  if (mode_ == Mode::off || total == 0) return;
  const std::size_t percent = done * 100 / total;
  const std::string text = label_ + ": " + std::to_string(done) + "/" + std::to_string(total) + " " + unit_ + " (" +
                           std::to_string(percent) + "%)";
  if (mode_ == Mode::terminal) {
    if (percent == last_ && done != total) return;
    last_ = percent;
    std::cerr << "\r" << text << (done == total ? "\n" : "") << std::flush;
    return;
  }
  const std::size_t decile = percent / 10;
  if (decile == last_ && done != total) return;
  if (done == total && last_ == 10) return;
  last_ = decile;
  std::cerr << text << "\n" << std::flush;
}

int guarded(const std::string& command, const std::function<int()>& body) {
  const std::string prefix = "llmsim " + command + ": error: ";
  try {
    return body();
  } catch (const ConfigError& e) {
    std::cerr << prefix << e.what() << "\n";
    return kBadInput;
  } catch (const CalibrationDataError& e) {
    std::cerr << prefix << e.what() << "\n";
    return kBadInput;
  } catch (const Cancelled& e) {
    const int sig = interrupt_signal();
    std::cerr << "llmsim " << command << ": " << e.what() << "; unfinished outputs were removed\n";
    return 128 + (sig > 0 ? sig : SIGINT);
  } catch (const InternalError& e) {
    std::cerr << prefix << e.what() << " (this is a bug in llmsim)\n";
    return kInternal;
  } catch (const Error& e) {
    std::cerr << prefix << e.what() << "\n";
    return kBadInput;
  } catch (const po::error& e) {
    std::cerr << prefix << e.what() << "\n";
    return kBadInput;
  } catch (const std::bad_alloc&) {  // the machine's limit, not a bug: say which knobs use memory
    std::cerr << prefix << "out of memory (fewer --jobs, fewer requests, or no per-request records need less)\n";
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << prefix << "unexpected: " << e.what() << " (this is a bug in llmsim)\n";
    return kInternal;
  }
}

void add_gpu_options(po::options_description& opts) {
  opts.add_options()
      ("gpu", po::value<std::string>(), "override hardware.gpu: a GPU option such as rtx4090-24gb, 2xrtx4090-24gb@pp, "
                                        "2xa100-80gb-pcie+nvlink (billed at --price, else its catalogue price)")
      ("price", po::value<double>(), "price per GPU-hour in cost.currency (overrides hardware.price_per_gpu_hour)");
}

namespace {

// Whether this command line itself writes a scenario field (--set, or --vllm-args/--sglang-args): a tp of 1 written
// beside --gpu 2x… counts (spec::split_for refuses it), while the file's, written for its own card, does not.
bool command_line_writes(const po::variables_map& vm, const std::string& field) {
  std::vector<std::pair<std::string, Json>> sets;
  const std::string vllm = server_command_line(vm, "vllm-args"), sglang = server_command_line(vm, "sglang-args");
  if (!vllm.empty() || !sglang.empty()) {
    try {
      sets = analysis::server_arg_sets(vllm, sglang, Json::object()).sets;
    } catch (const ConfigError&) {  // the line was applied to the scenario already; its errors were reported there
    }
  }
  if (vm.count("set"))
    for (const auto& text : vm["set"].as<std::vector<std::string>>()) sets.push_back(parse_set(text));
  for (const auto& [path, value] : sets)
    for (const auto& f : spec::json_path_fields(path, value))
      if (f == field) return true;
  return false;
}

}  // namespace

void apply_gpu_options(spec::Scenario& s, const po::variables_map& vm) {
  // Not silently ignored where the cards are elsewhere: the rule set_json_path applies to hardware.gpu.
  for (const char* flag : {"gpu", "price"})
    if (vm.count(flag))
      spec::refuse_hardware_card_field(std::string(flag) == "gpu" ? "gpu" : "price_per_gpu_hour",
                                       s.disaggregation.has_value(), !s.hardware.fleet.empty(),
                                       std::string("--") + flag);
  std::optional<double> price;
  if (vm.count("price")) {
    price = vm["price"].as<double>();
    if (!(*price >= 0) || !std::isfinite(*price)) throw ConfigError("--price", "must be >= 0, got " + format_given(*price));
    s.hardware.price_per_gpu_hour = price;
  }
  if (vm.count("gpu")) {
    const spec::ParallelConfig before = s.hardware.parallel;
    analysis::set_gpu(s, vm["gpu"].as<std::string>(), price);
    if (command_line_writes(vm, "hardware.tp")) s.hardware.parallel.tp_given = before.tp_given;
    if (command_line_writes(vm, "hardware.pp")) s.hardware.parallel.pp_given = before.pp_given;
  }
}

void print_json(const Json& j) { std::cout << j.dump(2) << "\n"; }

void check_stdout() {
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
    throw ConfigError("stdout", std::string("cannot write the output: ") + std::strerror(errno ? errno : EIO));
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> width;
  for (const auto& r : rows_) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  auto numeric = [](const std::string& s) {
    return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '$');
  };
  for (std::size_t ri = 0; ri < rows_.size(); ++ri) {
    const auto& r = rows_[ri];
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::string pad(width[i] - r[i].size(), ' ');
      line += (i ? "  " : "");
      line += (ri > 0 && numeric(r[i])) ? pad + r[i] : r[i] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
    if (ri == 0) {
      std::size_t total = 0;
      for (auto w : width) total += w + 2;
      out << std::string(total > 2 ? total - 2 : 0, '-') << "\n";
    }
  }
}

std::string currency_unit(const std::string& currency) { return currency == "USD" ? "$" : currency; }

std::string money_prefix(const std::string& currency) { return currency == "USD" ? "$" : currency + " "; }

std::string fmt(double v, int decimals) {
  if (std::isnan(v)) return "n/a";
  return format_fixed_nonzero(v, decimals);  // core's rule: never cut short, never a nonzero figure read as 0
}

std::string fmt_gb(double bytes) { return fmt(bytes / 1e9, 2) + " GB"; }

void print_disaggregation(const spec::ResolvedScenario& rs, const metrics::Summary* summary) {
  if (!rs.scenario.disaggregation || rs.disagg_pools.size() != 2) return;
  const auto& d = *rs.scenario.disaggregation;
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& p = rs.disagg_pools[k];
    const auto& hw = p.scenario.hardware;
    std::cout << (k == 0 ? "prefill pool: " : "decode pool:  ") << hw.replicas << " x " << hw.parallel.gpus() << " "
              << p.gpu.id << " at $" << fmt(p.price_per_gpu_hour, 2) << "/GPU-h"
              << (p.price_is_placeholder ? " (placeholder)" : "") << ", max_num_seqs " << p.scenario.engine.max_num_seqs
              << ", max_num_batched_tokens " << p.scenario.engine.max_num_batched_tokens << "\n";
  }
  std::cout << "KV link: " << spec::to_string(d.link.kind) << " " << fmt(d.link.bandwidth_gbps, 0) << " Gbit/s, "
            << fmt(d.link.latency_s() * 1e6, 0) << " us per transfer, " << spec::to_string(d.transfer) << "\n";
  if (!summary || !summary->disaggregation) return;
  const auto& sd = *summary->disaggregation;
  std::cout << "KV transfer: " << fmt(sd.mean_transfer_mb, 1) << " MB per request, p50 " << fmt(sd.transfer_ms.p50, 1)
            << " ms, p95 " << fmt(sd.transfer_ms.p95, 1) << " ms (in TTFT); decode admission wait p50 "
            << fmt(sd.decode_wait_ms.p50, 1) << " ms, p95 " << fmt(sd.decode_wait_ms.p95, 1) << " ms\n";
  for (const auto& p : sd.pools) print_pool(p.role + " pool", p);
}

void print_pool(const std::string& name, const metrics::PoolSummary& p) {
  std::cout << "  " << name << ": busy " << fmt(100 * p.busy_fraction, 1) << "%, MFU " << fmt(100 * p.mfu, 1)
            << "%, MBU " << fmt(100 * p.mbu, 1) << "%, KV mean " << fmt(100 * p.kv_mean_used_fraction, 1)
            << "%, saturates at " << (p.saturation_requests_per_s > 0 ? fmt(p.saturation_requests_per_s, 2) + " req/s"
                                                                       : std::string("(never saturated)"))
            << "\n";
}

void print_fleet_pools(const metrics::Summary& s) {
  if (s.fleet_pools.empty()) return;
  std::cout << "fleet members, each on its own replicas:\n";
  for (std::size_t k = 0; k < s.fleet_pools.size(); ++k) {
    const auto& p = s.fleet_pools[k];
    print_pool("[" + std::to_string(k) + "] " + std::to_string(p.replicas) + " x " + p.gpu, p);
  }
}

void print_scenario_warnings(const spec::Scenario& scenario, const std::string& where) {
  static std::set<std::string> said;
  std::vector<std::string> warnings;
  try {
    warnings = analysis::scenario_warnings(scenario);  // nothing resolved: cheap for every point of a sweep
  } catch (const ConfigError&) {
    return;  // the run itself reports a bad profile
  }
  for (const auto& w : warnings)
    if (said.insert(w).second) std::cerr << "warning: " << (where.empty() ? "" : where + ": ") << w << "\n";
}

}  // namespace llmsim::cli
