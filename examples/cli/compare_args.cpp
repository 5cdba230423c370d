#include "compare_args.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/core/error.hpp"

namespace llmsim::cli {

namespace po = boost::program_options;

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<int> int_list(const std::string& s, const std::string& flag) {
  std::vector<int> out;
  for (const auto& item : split_list(s)) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 1) throw ConfigError(flag, "expected positive integers, got '" + item + "'");
    out.push_back(v);
  }
  if (out.empty()) throw ConfigError(flag, "empty list");
  return out;
}

std::map<std::string, double> price_map(const std::string& list, const std::string& flag) {
  std::map<std::string, double> out;
  for (const auto& item : split_list(list)) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw ConfigError(flag, "expected gpu=PRICE, got '" + item + "'");
    char* end = nullptr;
    const std::string value = item.substr(eq + 1);
    const double price = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') throw ConfigError(flag, "expected a number after '=', got '" + item + "'");
    out[item.substr(0, eq)] = price;
  }
  return out;
}

}  // namespace

void add_compare_options(po::options_description& opts) {
  analysis::CapacityOptions defaults;
  opts.add_options()
      ("gpus", po::value<std::string>(), "comma list: rtx4090-24gb,2xrtx4090-24gb,2xa100-80gb-pcie+nvlink,4xh100-80gb-sxm@pp "
                                         "(NxGPU = N cards, tensor parallel; @pp = pipeline; +nvlink = bridged pair)")
      ("quants", po::value<std::string>(), "comma list of weight formats (default: the scenario's)")
      ("policies", po::value<std::string>(), "comma list of scheduler policies: vllm, vllm-v0, chunked, sglang, static")
      ("max-num-seqs", po::value<std::string>(), "comma list of engine.max_num_seqs values")
      ("max-num-batched-tokens", po::value<std::string>(), "comma list of engine.max_num_batched_tokens values")
      ("prices", po::value<std::string>(), "comma list gpu=PRICE per GPU-hour (cost.currency), overriding catalogue placeholders")
      ("purchase-prices", po::value<std::string>(), "comma list gpu=PRICE to buy one card (owned hardware), overriding the catalogue's")
      ("target-qps", po::value<double>(), "load to size the fleet for (default cost.target_qps, else the offered rate)")
      ("rank-by", po::value<std::string>()->default_value("monthly_cost"),
       "winner criterion: monthly_cost, cost_per_mtok (at the target load) or cost_per_mtok_at_capacity")
      ("jobs,j", po::value<int>()->default_value(1), "threads")
      ("replications", po::value<int>()->default_value(defaults.replications), "independent seeds for the 95% CI")
      ("rel-tol", po::value<double>()->default_value(defaults.rel_tol), "relative tolerance of the capacity bisection")
      ("requests", po::value<long long>()->default_value(defaults.num_requests), "requests per simulation (at most the scenario's)");
}

void apply_target_qps(Json& scenario, const po::variables_map& vm) {
  if (vm.count("target-qps")) spec::set_json_path(scenario, "cost.target_qps", vm["target-qps"].as<double>());
}

analysis::CompareOptions compare_options(const po::variables_map& vm) {
  analysis::CompareOptions o;
  if (vm.count("gpus")) {
    o.gpus = split_list(vm["gpus"].as<std::string>());
    if (o.gpus.empty()) throw ConfigError("--gpus", "empty list");
  }
  if (vm.count("quants")) {
    o.quants = split_list(vm["quants"].as<std::string>());
    if (o.quants.empty()) throw ConfigError("--quants", "empty list");
  }
  if (vm.count("policies")) o.policies = split_list(vm["policies"].as<std::string>());
  if (vm.count("max-num-seqs")) o.max_num_seqs = int_list(vm["max-num-seqs"].as<std::string>(), "--max-num-seqs");
  if (vm.count("max-num-batched-tokens"))
    o.max_num_batched_tokens = int_list(vm["max-num-batched-tokens"].as<std::string>(), "--max-num-batched-tokens");
  if (vm.count("prices")) o.prices = price_map(vm["prices"].as<std::string>(), "--prices");
  if (vm.count("purchase-prices")) o.purchase_prices = price_map(vm["purchase-prices"].as<std::string>(), "--purchase-prices");
  o.rank_by = analysis::parse_rank_by(vm["rank-by"].as<std::string>());
  o.jobs = vm["jobs"].as<int>();
  o.capacity.replications = vm["replications"].as<int>();
  o.capacity.rel_tol = vm["rel-tol"].as<double>();
  o.capacity.num_requests = vm["requests"].as<long long>();
  return o;
}

std::string row_note(const analysis::Row& row, const spec::Scenario& base) {
  std::vector<std::string> notes;
  if (!row.fits) notes.push_back(row.reason);
  else if (!row.meets_slo()) notes.push_back(row.reason.empty() ? "SLO not met" : row.reason);
  if (row.capacity && row.capacity->hit_limit) notes.push_back("search limit reached");
  if (row.at_target && !analysis::run_meets_slo(*row.at_target))
    notes.push_back("SLO NOT met at target load (" + analysis::slo_failures(base, *row.at_target) + ")");
  if (row.replicas_added > 0) notes.push_back("+" + std::to_string(row.replicas_added) + " replica(s) for the SLO at target");
  if (row.num_gpus > 1 && row.meets_slo() && !row.scaling_efficiency) notes.push_back("no 1-GPU capacity to scale from");
  std::string s;
  for (const auto& n : notes) s += (s.empty() ? "" : "; ") + n;
  return s;
}

}  // namespace llmsim::cli
