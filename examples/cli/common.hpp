#pragma once
// Shared plumbing of the llmsim subcommands: error handling with exit codes, tables, JSON output.
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/scenario.hpp"

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
/// given. Unknown or malformed options throw ConfigError naming the option.
bool parse_args(int argc, char** argv, const po::options_description& opts, po::variables_map& vm,
                const std::string& usage, const po::positional_options_description* positional = nullptr);

/// Runs `body`, turning exceptions into a one-line message on stderr and an exit code:
/// ConfigError/program_options errors -> 2, other llmsim::Error -> 2, Cancelled -> 128 + signal,
/// InternalError/other -> 3.
int guarded(const std::string& command, const std::function<int()>& body);

/// Adds --gpu (override hardware.gpu) and --price (USD per GPU-hour) to a scenario command's options.
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

/// Fixed-point formatting for tables: fmt(3.14159, 2) = "3.14".
std::string fmt(double v, int decimals = 2);
/// Bytes as GB (1e9) with 2 decimals: "28.03 GB".
std::string fmt_gb(double bytes);

}  // namespace llmsim::cli
