#include "common.hpp"

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
#include "llmsim/analysis/sweep.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "command_hints.hpp"
#include "signals.hpp"

namespace llmsim::cli {

namespace {

// Boost prints a default through lexical_cast, which writes a double with 17 significant digits
// ("(=0.029999999999999999)"). The help shows the shortest text that reads back as the same double.
std::string clean_default(std::string name) {
  const auto open = name.rfind("(=");
  if (open == std::string::npos || name.back() != ')') return name;
  const std::string text = name.substr(open + 2, name.size() - open - 3);
  if (text.find_first_of(".eE") == std::string::npos) return name;  // integers and words print as given
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return name;
  char buf[32];
  const auto [out, ec2] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  if (ec2 != std::errc()) return name;
  return name.substr(0, open + 2) + std::string(buf, out) + ")";
}

// Boost's own layout cuts a word in two when the last space lies more than half the description column back (a
// long `PATH=VALUE` example becomes "hardware.g" / "pu=..."), and its column is 80 wide. The help is laid out here
// instead: the option column as Boost writes it ("--rel-tol arg (=0.03)"), descriptions wrapped at spaces only (a
// word longer than the line stands on a line of its own), `width` columns in all.
std::size_t help_width() {
  // $COLUMNS, as terminals and `COLUMNS=200 llmsim ... --help` set it; 100 otherwise.
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long v = std::strtol(c, &end, 10);
    if (end != c && *end == '\0' && v >= 40) return static_cast<std::size_t>(std::min<long>(v, 1000000));
  }
  return 100;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The usage line wrapped at `width`, at spaces outside [...] groups and quotes, continued under its first argument.
std::string usage_text(const std::string& usage, std::size_t width) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (const char c : usage) {
    if (quote) {
      quote = c == quote ? 0 : quote;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']' && depth > 0) {
      --depth;
    } else if (c == ' ' && depth == 0) {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cur.empty()) parts.push_back(cur);
  // "usage: llmsim CMD" stays together; continuation lines start under what follows it.
  std::string line;
  std::size_t indent = 0;
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i < 3) {
      line += (i ? " " : "") + parts[i];
      indent = line.size() + 1;
      continue;
    }
    if (line.size() > indent && line.size() + 1 + parts[i].size() > width) {
      out += line + "\n";
      line.assign(indent - 1, ' ');
    }
    line += " " + parts[i];
  }
  return out + line;
}

std::string help_text(const po::options_description& opts, std::size_t width) {
  // Boost 1.74 has no caption accessor: its printout starts with "caption:" when there is one.
  std::ostringstream printed;
  printed << opts;
  std::string caption = printed.str().substr(0, printed.str().find('\n'));
  if (caption.empty() || caption.back() != ':') caption.clear();
  std::vector<std::pair<std::string, std::string>> rows;
  std::size_t widest = 0;
  for (const auto& o : opts.options()) {
    std::string left = "  " + o->format_name();
    // As Boost's format_parameter: a flag that takes no token shows no value.
    const std::string value = o->semantic()->max_tokens() ? clean_default(o->semantic()->name()) : std::string();
    if (!value.empty()) left += " " + value;
    widest = std::max(widest, left.size());
    rows.emplace_back(std::move(left), o->description());
  }
  const std::size_t column = std::min(widest + 2, width / 2);
  const std::size_t room = width > column ? width - column : 1;
  std::ostringstream out;
  if (!caption.empty()) out << caption << "\n";
  for (const auto& [left, description] : rows) {
    std::string line = left;
    bool fresh = true;  // no word on this line's description part yet
    auto pad = [&] {
      if (line.size() + 1 > column) {  // the option column is wider: the description starts on the next line
        out << line << "\n";
        line.clear();
      }
      line.resize(column, ' ');
    };
    pad();
    for (const auto& w : words_of(description)) {
      if (!fresh && line.size() + 1 + w.size() > column + room) {
        out << line << "\n";
        line.assign(column, ' ');
        fresh = true;
      }
      line += (fresh ? "" : " ") + w;
      fresh = false;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  return out.str();
}

constexpr const char* kExtra = "llmsim-extra-arguments";  // collects arguments beyond the positional ones

}  // namespace

bool parse_args(int argc, char** argv, const po::options_description& opts, po::variables_map& vm,
                const std::string& usage, const po::positional_options_description* positional) {
  po::options_description all(opts);
  all.add_options()("help,h", "show this help");
  // Boost.Program_options 1.74 loops forever formatting an error for a token that contains a
  // %placeholder% (found by fuzz/cli): no flag or value of ours needs '%', so refuse it up front.
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]).find('%') != std::string_view::npos) {
      throw ConfigError("arguments", "'%' is not allowed in arguments, got '" + std::string(argv[i]) + "'");
    }
  }
  // Arguments beyond the command's positional ones land in a hidden option, so the error can name them.
  po::positional_options_description pos = positional ? *positional : po::positional_options_description();
  const unsigned takes = pos.max_total_count();
  const bool bounded = takes != std::numeric_limits<unsigned>::max();  // nothing can follow "all the rest"
  if (bounded) pos.add(kExtra, -1);
  po::options_description parsing(all);
  parsing.add_options()(kExtra, po::value<std::vector<std::string>>());
  try {
    // Boost skips argv[0] (here the subcommand name) itself.
    po::store(po::command_line_parser(argc, argv).options(parsing).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << usage_text(usage, help_width()) << "\n\n" << help_text(all, help_width()) << "\n";
      return false;
    }
    if (bounded && vm.count(kExtra)) {
      const auto& extra = vm[kExtra].as<std::vector<std::string>>();
      std::string taken;
      for (unsigned i = 0; i < takes; ++i) taken += (i ? ", " : "") + pos.name_for_position(i);
      throw ConfigError("arguments", "unexpected argument '" + extra.front() + "' (" +
                                         (takes ? "this command takes one " + taken + " argument"
                                                : std::string("this command takes options only")) + ")");
    }
    po::notify(vm);
  } catch (const po::multiple_occurrences& e) {
    const std::string name = e.get_option_name();
    throw ConfigError(name, "given more than once" +
                                std::string(positional && positional->max_total_count() > 0 &&
                                                    name == "--" + positional->name_for_position(0)
                                                ? " (as the first argument and as " + name + ", or twice); give one"
                                                : ""));
  } catch (const po::validation_error& e) {
    // A value of the wrong type names its option (was: "arguments"), and a number past the double's range says so
    // (Boost calls both "invalid").
    const std::string what = e.what();
    std::string why = what;
    const auto a = what.find("('"), b = what.find("')");
    if (a != std::string::npos && b != std::string::npos && b > a + 2) {
      const std::string given = what.substr(a + 2, b - a - 2);
      errno = 0;
      char* end = nullptr;
      const double v = std::strtod(given.c_str(), &end);
      if (end && *end == '\0' && errno == ERANGE && std::isinf(v))
        why = "the number " + given + " is out of range: expected a finite number";
      else
        why = "'" + given + "' is not a valid value for it";
    }
    throw ConfigError(e.get_option_name().empty() ? "arguments" : e.get_option_name(), why);
  } catch (const po::unknown_option& e) {
    std::vector<std::string> names;
    for (const auto& o : all.options()) names.push_back(o->long_name());
    throw ConfigError("arguments", unknown_option_message(e.get_option_name(), names));
  } catch (const po::error& e) {
    throw ConfigError("arguments", e.what());
  }
  return true;
}

void add_scenario_options(po::options_description& opts, po::positional_options_description& positional,
                          const char* what) {
  opts.add_options()("scenario", po::value<std::string>()->required(),
                     (std::string(what) + " (or as the first argument)").c_str());
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
       "string");
}

std::string server_command_line(const po::variables_map& vm, const char* name) {
  if (!vm.count(name)) return {};
  const std::string v = vm[name].as<std::string>();
  // Given but blank (an unset shell variable): the server's settings would be dropped without a word.
  if (v.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ConfigError(std::string("--") + name, "an empty command line: give the server's own (\"vllm serve MODEL "
                                                "--max-num-seqs 128 ...\"), or leave the flag out");
  return v;
}

namespace {
void print_notes(const std::vector<std::string>& notes) {
  for (const auto& n : notes) std::cerr << "note: " << n << "\n";
}
}  // namespace

Json apply_server_args(Json scenario, const po::variables_map& vm) {
  std::vector<std::string> notes;
  scenario = analysis::apply_server_args(std::move(scenario), server_command_line(vm, "vllm-args"),
                                         server_command_line(vm, "sglang-args"), notes);
  print_notes(notes);
  return scenario;
}

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

Json load_scenario(const po::variables_map& vm) {
  Json doc = apply_server_args(read_json_file(vm["scenario"].as<std::string>()), vm);
  apply_sets(doc, vm);
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
  for (std::size_t i = 0; i < grid.points.size(); ++i) {
    Json doc = spec::to_json(grid.points[i].scenario);
    if (server) {  // scenario < server command line < --set, at every point
      const auto s = analysis::server_arg_sets(vllm, sglang, doc);
      analysis::refuse_sets_on_axes(grid, s.sets, vllm.empty() ? "--sglang-args" : "--vllm-args");
      if (i == 0) print_notes(s.notes);
      for (const auto& [path, value] : s.sets) spec::set_json_path(doc, path, value);
    }
    for (const auto& [path, value] : sets) spec::set_json_path(doc, path, value);
    grid.points[i].scenario = spec::scenario_from_json(JsonView(doc, ""));
  }
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
