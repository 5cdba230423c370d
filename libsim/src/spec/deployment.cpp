#include "llmsim/spec/deployment.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/gpu_option.hpp"

namespace llmsim::spec {

std::string to_string(RouterPolicy r) {
  switch (r) {
    case RouterPolicy::round_robin: return "round_robin";
    case RouterPolicy::least_outstanding: return "least_outstanding";
    case RouterPolicy::least_kv: return "least_kv";
    case RouterPolicy::weighted_least_outstanding: return "weighted_least_outstanding";
    case RouterPolicy::shortest_expected_delay: return "shortest_expected_delay";
    case RouterPolicy::session_affinity: return "session_affinity";
    case RouterPolicy::power_of_two: return "power_of_two";
  }
  throw InternalError("unknown RouterPolicy " + std::to_string(static_cast<int>(r)));
}

RouterPolicy parse_router(const std::string& s, const std::string& path) {
  std::vector<std::string> names;
  for (auto r : {RouterPolicy::round_robin, RouterPolicy::least_outstanding, RouterPolicy::least_kv,
                 RouterPolicy::weighted_least_outstanding, RouterPolicy::shortest_expected_delay,
                 RouterPolicy::session_affinity, RouterPolicy::power_of_two}) {
    if (s == to_string(r)) return r;
    names.push_back(to_string(r));
  }
  throw ConfigError(path, unknown_name_message("router policy", s, names));
}

std::vector<int> pp_stage_layers(int num_layers, int pp) {
  pp = std::max(pp, 1);
  std::vector<int> stages(static_cast<std::size_t>(pp), std::max(num_layers, 0) / pp);
  const int remaining = std::max(num_layers, 0) % pp;  // < pp, so stages [pp-1-remaining, pp-2] get one more each
  for (int i = 2; i < remaining + 2; ++i) ++stages[static_cast<std::size_t>(pp - i)];
  return stages;
}

int largest_pp_stage(int num_layers, int pp) {
  const auto stages = pp_stage_layers(num_layers, pp);
  return *std::max_element(stages.begin(), stages.end());
}

std::vector<int> pp_stage_layers(int num_layers, const ParallelConfig& parallel) {
  const int pp = std::max(parallel.pp, 1);
  if (static_cast<int>(parallel.layer_partition.size()) == pp) return parallel.layer_partition;
  return pp_stage_layers(num_layers, pp);
}

int largest_pp_stage(int num_layers, const ParallelConfig& parallel) {
  const auto stages = pp_stage_layers(num_layers, parallel);
  return *std::max_element(stages.begin(), stages.end());
}

std::vector<int> parse_layer_partition(const std::string& text, const std::string& path) {
  // vllm/distributed/utils.py get_pp_indices: [int(layer) for layer in partition_list_str.split(",")].
  std::vector<int> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? std::string() : item.substr(b, e - b + 1);
    std::size_t used = 0;
    long long v = 0;
    bool ok = !item.empty() && (std::isdigit(static_cast<unsigned char>(item[0])) || item[0] == '-' || item[0] == '+');
    if (ok) {
      try {
        v = std::stoll(item, &used);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok || used != item.size() || v > 1000000 || v < -1000000)
      throw ConfigError(path, "invalid partition string '" + text + "': expected comma-separated layer counts, one "
                              "per pipeline stage (e.g. \"18,17\"), got '" + item + "'");
    out.push_back(static_cast<int>(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void check_layer_partition(const std::vector<int>& partition, int pp, int num_layers, const std::string& path,
                           Problems& problems) {
  if (partition.empty()) return;
  std::string text;
  long long sum = 0;
  for (const int n : partition) {
    text += (text.empty() ? "" : ",") + std::to_string(n);
    sum += n;
  }
  if (static_cast<int>(partition.size()) != pp)
    problems.add(path, "'" + text + "' has " + std::to_string(partition.size()) + " stages but pipeline parallel is " +
                           std::to_string(pp) + " (vLLM: len(partitions) must match pp_size)");
  for (std::size_t i = 0; i < partition.size(); ++i)
    if (partition[i] < 1)
      problems.add(path, "'" + text + "': stage " + std::to_string(i) + " has " + std::to_string(partition[i]) +
                             " layers; every stage needs at least one");
  if (sum != num_layers)
    problems.add(path, "'" + text + "' sums to " + std::to_string(sum) + " layers but the model has " +
                           std::to_string(num_layers) + " (vLLM: sum(partitions) must match num_hidden_layers)");
}

void Deployment::validate(const std::string& path) const {
  Problems p;
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    const std::string mp = path + ".fleet[" + std::to_string(i) + "]";
    if (!fleet[i].hardware.fleet.empty()) p.add(mp + ".fleet", "a fleet member cannot itself be a fleet");
    if (fleet[i].engine && !fleet[i].engine->is_object())
      p.add(mp + ".engine", "must be an object of engine overrides, got " + std::string(fleet[i].engine->type_name()));
    try {
      fleet[i].hardware.validate(mp);
    } catch (const ConfigError& e) {
      for (const auto& x : e.problems()) p.add("", x);
    }
  }
  if (gpu.empty()) {
    p.add(path + ".gpu", "must name a GPU");
  } else {
    try {  // the option's syntax, and a count that agrees with tp/pp, are checked where the file is read
      split_for(parse_gpu_option(gpu, path + ".gpu"), parallel, path + ".tp");
    } catch (const ConfigError& e) {
      for (const auto& x : e.problems()) p.add("", x);
    }
  }
  // Bounds keep products such as tp * pp * replicas far from overflow.
  if (parallel.tp < 1 || parallel.tp > 1024) p.add(path + ".tp", "must be in 1..1024, got " + std::to_string(parallel.tp));
  if (parallel.pp < 1 || parallel.pp > 1024) p.add(path + ".pp", "must be in 1..1024, got " + std::to_string(parallel.pp));
  if (replicas < 1 || replicas > 100000) {
    p.add(path + ".replicas", "must be in 1..100000, got " + std::to_string(replicas));
  }
  // The hourly price's upper bound is the monthly bill's (check_monthly_bill); the purchase price is bounded here
  // (in any currency far beyond any real card) so the owned cost it divides into stays finite.
  if (price_per_gpu_hour && (!(*price_per_gpu_hour >= 0) || !std::isfinite(*price_per_gpu_hour))) {
    p.add(path + ".price_per_gpu_hour", "must be >= 0, got " + format_given(*price_per_gpu_hour));
  }
  if (purchase_price_per_gpu && (!(*purchase_price_per_gpu >= 0) || !(*purchase_price_per_gpu <= 1e12))) {
    p.add(path + ".purchase_price_per_gpu", "must be in [0, 1e12], got " + format_given(*purchase_price_per_gpu));
  }
  p.throw_if_any();
}

}  // namespace llmsim::spec
