#include "common.hpp"

#include <cmath>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string_view>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/core/error.hpp"
#include "signals.hpp"

namespace llmsim::cli {

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
  try {
    // Boost skips argv[0] (here the subcommand name) itself.
    // Without a positional description Boost stores stray words nowhere and says nothing: `llmsim simulate
    // --scenario a.json b.json` would silently ignore b.json. An empty description makes them an error.
    static const po::positional_options_description none;
    auto parser = po::command_line_parser(argc, argv).options(all).positional(positional ? *positional : none);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n\n" << all << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError("arguments", e.what());
  }
  return true;
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
      ("gpu", po::value<std::string>(), "override hardware.gpu (billed at --price, else its catalogue price)")
      ("price", po::value<double>(), "USD per GPU-hour (overrides hardware.price_per_gpu_hour)");
}

void apply_gpu_options(spec::Scenario& s, const po::variables_map& vm) {
  std::optional<double> price;
  if (vm.count("price")) {
    price = vm["price"].as<double>();
    if (!(*price >= 0) || !std::isfinite(*price)) throw ConfigError("--price", "must be >= 0, got " + format_value(*price));
    s.hardware.price_per_gpu_hour = price;
  }
  if (vm.count("gpu")) analysis::set_gpu(s, vm["gpu"].as<std::string>(), price);
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

std::string fmt(double v, int decimals) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_gb(double bytes) { return fmt(bytes / 1e9, 2) + " GB"; }

}  // namespace llmsim::cli
