#pragma once
// Shared plumbing of the llmsim subcommands: error handling with exit codes, tables, JSON output.
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "llmsim/core/json_view.hpp"
#include "llmsim/metrics/summary.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {
struct Grid;
}

namespace llmsim::cli {

namespace po = boost::program_options;

/// Exit codes: 0 success, 1 a stated bound was violated (--fail-if), 2 bad input (or an output that cannot be
/// written: a full disk, a missing directory), 3 internal error, 128 + N interrupted by signal N (130 SIGINT,
/// 143 SIGTERM).
enum ExitCode { kOk = 0, kBoundViolated = 1, kBadInput = 2, kInternal = 3 };

struct Command {
  const char* name;
  const char* summary;  ///< one line for `llmsim --help`
  int (*run)(int argc, char** argv);  ///< argv[0] is the subcommand name
};

/// Parses argv against `opts` (plus --help). Returns false and prints usage to stdout when --help was
/// given; the help shows each default as the shortest text that reads back as it ("(=0.03)"). Unknown or
/// malformed options, an option given twice and an argument beyond `positional` throw ConfigError naming
/// the option or the argument.
bool parse_args(int argc, char** argv, const po::options_description& opts, po::variables_map& vm,
                const std::string& usage, const po::positional_options_description* positional = nullptr);

/// The input of a scenario command: the file as the first argument or as --scenario FILE (one of the two,
/// once), and --set PATH=VALUE (repeatable). Adds both options to `opts` and the argument to `positional`.
void add_scenario_options(po::options_description& opts, po::positional_options_description& positional,
                          const char* what = "scenario JSON file");
/// Reads the scenario file (read_scenario_json: "-" or a pipe too, read once), applies --vllm-args/--sglang-args, then
/// every --set in order (then the command applies its named flags): scenario file < server command line < --set.
Json load_scenario(const po::variables_map& vm);
/// The same for a scenario file already read (`file`: read_scenario_json's document), for a command that needs the
/// file as written too (search): a pipe can be read only once.
Json load_scenario(Json file, const po::variables_map& vm);
/// Adds --vllm-args, --sglang-args and --set PATH=VALUE (repeatable) alone, for commands whose input is not one
/// scenario (sweep).
void add_set_option(po::options_description& opts);
/// The value of --vllm-args / --sglang-args (`name` without dashes), "" when not given; ConfigError naming the flag
/// when it is given blank (an unset shell variable would drop the server's settings without a word).
std::string server_command_line(const po::variables_map& vm, const char* name);
/// "PATH=VALUE" -> (PATH, VALUE as JSON when it parses as JSON, else the bare string): "rate=8" -> 8,
/// "hardware.gpu=a100-80gb-sxm" -> "a100-80gb-sxm", 'slo.ttft_ms={"p95": 500}' -> an object.
/// ConfigError(flag) without '='; a value that is JSON with a duplicate key, a syntax error inside {...} or [...], or
/// a number beyond double's range is an error, not a string.
std::pair<std::string, Json> parse_set(const std::string& text, const std::string& flag = "--set");
/// Applies the --set overrides to a scenario document through spec::set_json_path (ConfigError names the
/// path when it is not a scenario field).
void apply_sets(Json& scenario, const po::variables_map& vm);

/// Applies --vllm-args/--sglang-args, then the --set overrides, to every point of a sweep grid; ConfigError when a
/// path either sets is one of the grid's axes (the grid already sets it per point).
void apply_sets(analysis::Grid& grid, const po::variables_map& vm);

/// The scenario's warnings (analysis::scenario_warnings: a GPU profile fitted on another runtime) as "warning: ..."
/// lines on stderr, each text once per process, `where` (a sweep point's labels) before it. For the commands that
/// run many simulations and print no summary of their own (simulate prints its summary's). A scenario that does not
/// resolve says nothing here: the command reports that error itself.
void print_scenario_warnings(const spec::Scenario& scenario, const std::string& where = "");

/// Adds --progress (progress lines on stderr even when it is not a terminal) and --quiet/-q (none).
void add_progress_options(po::options_description& opts);

/// Progress of a long command on stderr, for analysis::Progress callbacks. On a terminal (and not --quiet)
/// one line rewritten in place with '\r'; with --progress and stderr not a terminal (a file, a pipe, CI
/// logs) a plain line per 10%, never '\r'; otherwise nothing.
class ProgressLine {
 public:
  /// `label` starts each line ("sweep"), `unit` names the items ("points").
  ProgressLine(std::string label, std::string unit, const po::variables_map& vm);
  void operator()(std::size_t done, std::size_t total);

 private:
  std::string label_, unit_;
  enum class Mode { off, terminal, lines } mode_ = Mode::off;
  std::size_t last_ = static_cast<std::size_t>(-1);  ///< last percent (terminal) or decile (lines) shown
};

/// Runs `body`, turning exceptions into a one-line message on stderr and an exit code:
/// ConfigError/program_options errors -> 2, other llmsim::Error -> 2, Cancelled -> 128 + signal,
/// InternalError/other -> 3.
int guarded(const std::string& command, const std::function<int()>& body);

/// Adds --gpu (override hardware.gpu with a GPU option) and --price (per GPU-hour, cost.currency) to a scenario command's options.
void add_gpu_options(po::options_description& opts);
/// Applies --gpu and --price to a parsed scenario. The scenario's price_per_gpu_hour priced its own card, so a
/// --gpu card is billed at --price, else at its catalogue price (analysis::set_gpu, the rule compare uses).
void apply_gpu_options(spec::Scenario& scenario, const po::variables_map& vm);

/// Pretty-prints JSON to stdout followed by a newline.
void print_json(const Json& j);

/// Flushes stdout; ConfigError when the text did not all get out (stdout on a full disk, a closed pipe).
void check_stdout();

/// A plain aligned text table: first row is the header; numbers are right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

/// A disaggregated scenario's pools and link (one line each), then, given a run's summary, its KV transfers, the
/// decode pool's admission wait and each pool's load. Prints nothing for a colocated scenario.
void print_disaggregation(const spec::ResolvedScenario& rs, const metrics::Summary* summary);
/// One pool's (or fleet member's) measured line: busy share, MFU, MBU, mean KV use, saturation rate.
void print_pool(const std::string& name, const metrics::PoolSummary& p);
/// A heterogeneous fleet's members, each measured on its own replicas (nothing for other deployments).
void print_fleet_pools(const metrics::Summary& s);

/// Fixed-point formatting for tables: fmt(3.14159, 2) = "3.14"; NaN "n/a"; a nonzero figure never reads as 0
/// (fmt(0.00038, 2) = "0.00038", core format_fixed_nonzero).
std::string fmt(double v, int decimals = 2);
/// Bytes as GB (1e9) with 2 decimals: "28.03 GB".
std::string fmt_gb(double bytes);

/// How money is written in every table (compare, sweep): a column head names the currency its cells are in,
/// "$/month" for USD and "HKD/month" for another code, never a "$" over another currency's numbers.
std::string currency_unit(const std::string& currency);
/// The prefix of a money cell: "$" for USD, else the code and a space ("HKD 14600").
std::string money_prefix(const std::string& currency);

}  // namespace llmsim::cli
