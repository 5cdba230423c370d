// search's space of configurations (docs/search.md "The space is data"): the default axes (cards and splits,
// engine limits), the axes a --set removes or refuses, and a disaggregated base's pool split in place of the card
// axis.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/analysis/search.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/scenario.hpp"
#include "search_bound.hpp"

namespace llmsim::analysis {

using detail::is_disaggregated;

bool detail::is_disaggregated(const Json& base) {
  return base.is_object() && base.contains("disaggregation") && !base["disaggregation"].is_null();
}

std::vector<SearchAxis> default_search_axes(const std::vector<std::string>& gpus) {
  std::vector<Json> gpu_values;
  if (!gpus.empty()) {
    for (const auto& g : gpus) gpu_values.emplace_back(g);
  } else {
    for (const std::string card : {"rtx4090-24gb", "rtx4090-48gb", "l40s-48gb", "a100-80gb-pcie", "a100-80gb-sxm",
                                   "h100-80gb-sxm"})
      for (const std::string count : {"", "2x", "4x", "8x", "2x@pp", "4x@pp"})
        gpu_values.emplace_back(count.empty() ? card
                                : count.back() == 'p' ? count.substr(0, 2) + card + "@pp"
                                                      : count + card);
  }
  // No format axes: quantized weights and KV caches change answers, which llmsim does not model (quality.hpp), so
  // they enter the space only when asked for (an axis, or the base scenario's own quant) — as guide 003 advises.
  return {{"hardware.gpu", gpu_values},
          {"engine.max_num_seqs", {64, 128, 256, 512}},
          {"engine.max_num_batched_tokens", {2048, 4096, 8192, 16384}}};
}

std::vector<SearchAxis> search_axes_for_sets(std::vector<SearchAxis> axes, const std::vector<std::string>& given,
                                             const std::vector<std::pair<std::string, Json>>& sets,
                                             std::vector<std::string>& notes) {
  if (sets.empty()) return axes;
  std::vector<SearchAxis> out;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    SearchAxis& axis = axes[i];
    // The fields an axis writes: its own (a vLLM name's, per value); the card axis also writes the split.
    std::vector<std::string> fields;
    for (const auto& v : axis.values)
      for (auto& f : spec::merged_json_fields(axis.path, v)) fields.push_back(std::move(f));  // an object merges
    if (fields.empty()) fields.push_back(axis.path);
    const bool cards = axis.path == "hardware.gpu";
    if (cards) {
      fields.emplace_back("hardware.tp");
      fields.emplace_back("hardware.pp");
    }
    const bool is_default = std::find(given.begin(), given.end(), axis.path) == given.end();
    std::string hit, hit_field;
    for (const auto& [path, value] : sets) {
      for (const auto& sf : spec::json_path_fields(path, value))
        for (const auto& af : fields)
          if (hit.empty() && fields_overlap(sf, af)) {
            hit = path + " = " + value.dump();
            hit_field = sf;
          }
    }
    if (hit.empty()) {
      out.push_back(std::move(axis));
      continue;
    }
    if (!is_default || (cards && (hit_field.rfind("hardware.tp", 0) == 0 || hit_field.rfind("hardware.pp", 0) == 0)))
      throw ConfigError("search.axes[" + std::to_string(i) + "] (" + axis.path + ")",
                        "the search varies it, but " + hit + " is set on top of the scenario (--set, the server's "
                        "command line or a keyword): the axis would override it in every configuration" +
                            std::string(cards ? " (a card option writes the split: give it there, e.g. "
                                                "--gpus 2xa100-80gb-sxm, or gpus=[...])"
                                              : "") +
                            "; leave one of them out");
    notes.push_back(axis.path + " is not searched: " + hit + " as set (drop the setting to search it)");
  }
  return out;
}

namespace {

// A disaggregated base's cards are its pools': what sizing chooses is how many replicas each pool has in one unit
// (the unit, prefill + decode pools, is what the search replicates). The base's own counts stay in the axis.
std::vector<SearchAxis> pool_split_axes(const Json& base) {
  std::vector<SearchAxis> out;
  for (const auto& [pool, counts] : {std::pair{"prefill", std::vector<std::int64_t>{1, 2}},
                                     std::pair{"decode", std::vector<std::int64_t>{1, 2, 3, 4}}}) {
    std::vector<std::int64_t> v = counts;
    const Json& d = base["disaggregation"];
    if (d.is_object() && d.contains(pool) && d[pool].is_object() && d[pool].contains("replicas") &&
        d[pool]["replicas"].is_number_integer()) {
      const auto own = d[pool]["replicas"].get<std::int64_t>();
      if (own >= 1 && std::find(v.begin(), v.end(), own) == v.end()) v.push_back(own);
    }
    std::sort(v.begin(), v.end());
    out.push_back({std::string("disaggregation.") + pool + ".replicas", std::vector<Json>(v.begin(), v.end())});
  }
  return out;
}

void refuse_gpus_on_pools(const std::vector<std::string>& gpus, const Json& base) {
  if (!gpus.empty() && is_disaggregated(base))
    throw ConfigError("--gpus (Python gpus=)", "a disaggregated scenario's cards are its pools' (disaggregation.prefill.gpu, "
                                "disaggregation.decode.gpu): search them with --axis 'disaggregation.decode.gpu=[...]' "
                                "(Python axes=) instead of --gpus");
}

}  // namespace

std::vector<SearchAxis> default_search_axes_for(const Json& base, const std::vector<std::string>& gpus) {
  refuse_gpus_on_pools(gpus, base);
  std::vector<SearchAxis> axes = default_search_axes(gpus);
  if (is_disaggregated(base)) {  // the pools' split in place of the card axis
    axes.erase(axes.begin());
    const auto split = pool_split_axes(base);
    axes.insert(axes.begin(), split.begin(), split.end());
  }
  return axes;
}

std::vector<SearchAxis> with_default_gpu_axis(std::vector<SearchAxis> given, const std::vector<std::string>& gpus,
                                              const Json& base) {
  refuse_gpus_on_pools(gpus, base);
  const auto places_cards = [](const std::string& p) {
    return p == "hardware" || p == "hardware.gpu" || p.starts_with("hardware.fleet") || p == "disaggregation" ||
           (p.starts_with("disaggregation.") && (p.ends_with(".gpu") || p.ends_with("prefill") || p.ends_with("decode")));
  };
  if (is_disaggregated(base)) {  // the pools' split stays unless an axis sizes or places the pools itself
    for (const auto& a : given)
      if (a.path == "disaggregation" || a.path.starts_with("disaggregation.prefill") ||
          a.path.starts_with("disaggregation.decode"))
        return given;
    const auto split = pool_split_axes(base);
    given.insert(given.begin(), split.begin(), split.end());
    return given;
  }
  for (const auto& a : given)
    if (places_cards(a.path)) return given;
  const auto has = [&](const char* section, const char* key) {
    return base.is_object() && base.contains(section) && base[section].is_object() && base[section].contains(key) &&
           !base[section][key].is_null();
  };
  if (has("hardware", "fleet")) return given;  // the fleet's cards are its members' (a fleet base is refused)
  given.insert(given.begin(), default_search_axes(gpus).front());
  return given;
}

}  // namespace llmsim::analysis
