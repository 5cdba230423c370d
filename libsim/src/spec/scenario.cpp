#include "llmsim/spec/scenario.hpp"

#include "llmsim/spec/multi_step.hpp"

#include <cmath>
#include <map>

#include "llmsim/core/error.hpp"
#include "llmsim/core/overloaded.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/fleet.hpp"
#include "llmsim/spec/scenario_prepass.hpp"
#include "llmsim/spec/gpu_option.hpp"
#include "llmsim/spec/pool.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "scenario_json.hpp"
#include "timed_events.hpp"

namespace llmsim::spec {

namespace detail {

int read_int(const JsonView& v, std::string_view key, int fallback) {
  if (!v.has(key)) return fallback;
  const auto x = v.integer(key);
  if (x < -(std::int64_t{1} << 31) + 1 || x > (std::int64_t{1} << 31) - 1) v[key].fail("out of range: " + std::to_string(x));
  return static_cast<int>(x);
}

std::vector<std::string> keys_of(const std::map<std::string, std::vector<std::string>>& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

std::vector<std::string> union_of(const std::map<std::string, std::vector<std::string>>& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) {
    for (const auto& f : v) {
      bool seen = false;
      for (const auto& o : out) seen = seen || o == f;
      if (!seen) out.push_back(f);
    }
  }
  return out;
}

}  // namespace detail

using namespace detail;

namespace {

// A field of one section written in another ("hardware.electricity_per_kwh") gets told where it belongs rather
// than only "unknown field".
void check_misplaced(const JsonView& v, const std::vector<std::string>& own, const char* other_name,
                     const std::vector<std::string>& other) {
  if (!v.is_object()) return;
  for (auto it = v.json().begin(); it != v.json().end(); ++it)
    if (!contains(own, it.key()) && contains(other, it.key()))
      throw ConfigError(v.child_path(it.key()), "belongs under " + std::string(other_name) + " (" + other_name + "." +
                                                    it.key() + "), not " + v.path());
}

constexpr double kMaxUsd = 1e15;           // ten times world GDP per year (USD): any larger amount is an input error
constexpr std::int64_t kMaxGpus = 10'000'000;

// A spec named by id or file, or given inline as an object (kept as its compact text, see is_inline_json()).
std::string spec_ref(const JsonView& v, std::string_view key, std::string fallback) {
  if (!v.has(key)) return fallback;
  const JsonView f = v[key];
  if (f.json().is_object()) return f.json().dump();
  return f.as_string();
}

Json spec_ref_json(const std::string& ref, const std::string& path) {
  return is_inline_json(ref) ? parse_json(ref, path) : Json(ref);
}

Deployment read_pool_fields(const JsonView& v, const std::vector<std::string>& keys) {
  v.allow_only(keys);
  Deployment d;
  d.gpu = spec_ref(v, "gpu", d.gpu);
  d.gpu_profile = spec_ref(v, "gpu_profile", "");
  d.parallel.tp = read_int(v, "tp", 1);
  d.parallel.pp = read_int(v, "pp", 1);
  d.parallel.tp_given = v.has("tp");
  d.parallel.pp_given = v.has("pp");
  // vLLM's VLLM_PP_LAYER_PARTITION: its text ("18,17") or the counts as an array; checked against the model in resolve.
  if (v.has("pp_layer_partition") && !v["pp_layer_partition"].json().is_null()) {
    const JsonView part = v["pp_layer_partition"];
    if (part.json().is_array()) {
      for (const auto& e : part.elements()) d.parallel.layer_partition.push_back(static_cast<int>(e.as_integer_in(-1000000, 1000000)));
    } else {
      d.parallel.layer_partition = parse_layer_partition(part.as_string(), part.path());
    }
  }
  d.replicas = read_int(v, "replicas", 1);
  if (v.has("router")) d.router = parse_router(v.string("router"), v.child_path("router"));
  if (v.has("price_per_gpu_hour")) d.price_per_gpu_hour = v.number("price_per_gpu_hour");
  if (v.has("purchase_price_per_gpu")) d.purchase_price_per_gpu = v.number("purchase_price_per_gpu");
  return d;
}

Json member_json(const Deployment& h) {  ///< a fleet member: hardware_json without the router
  Json hw{{"gpu", spec_ref_json(h.gpu, "hardware.gpu")},
          {"gpu_profile", spec_ref_json(h.gpu_profile, "hardware.gpu_profile")},
          {"replicas", h.replicas}};
  // tp / pp as given, or as a split other than the default: an unwritten 1 stays unwritten, so reading this back
  // does not turn the default into a given 1 that contradicts a "2x…" option (split_for).
  if (h.parallel.tp_given || h.parallel.tp != 1) hw["tp"] = h.parallel.tp;
  if (h.parallel.pp_given || h.parallel.pp != 1) hw["pp"] = h.parallel.pp;
  if (!h.parallel.layer_partition.empty()) hw["pp_layer_partition"] = h.parallel.layer_partition;
  if (h.price_per_gpu_hour) hw["price_per_gpu_hour"] = *h.price_per_gpu_hour;
  if (h.purchase_price_per_gpu) hw["purchase_price_per_gpu"] = *h.purchase_price_per_gpu;
  return hw;
}

CostSpec read_cost(const JsonView& v) {
  check_misplaced(v, kCostKeys, "hardware", kHardwareKeys);
  v.allow_only(kCostKeys);
  CostSpec c;
  c.storage_per_month = v.number_or("storage_per_month", c.storage_per_month);
  c.network_per_month = v.number_or("network_per_month", c.network_per_month);
  c.ops_overhead_fraction = v.number_or("ops_overhead_fraction", c.ops_overhead_fraction);
  c.spare_fraction = v.number_or("spare_fraction", c.spare_fraction);
  c.hours_per_month = v.number_or("hours_per_month", c.hours_per_month);
  c.target_qps = v.number_or("target_qps", c.target_qps);
  c.network_gbps = v.number_or("network_gbps", c.network_gbps);
  c.currency = v.string_or("currency", c.currency);
  if (v.has("electricity_per_kwh")) c.electricity_per_kwh = v.number("electricity_per_kwh");
  c.pue = v.number_or("pue", c.pue);
  c.depreciation_years = v.number_or("depreciation_years", c.depreciation_years);
  c.hosting_per_gpu_month = v.number_or("hosting_per_gpu_month", c.hosting_per_gpu_month);
  return c;
}

// The deployment's own monthly bill (the cost layer's formula bounded from above: no spare, no fleet sizing) must
// be a finite amount in range; a price of 1e308 $/h printed "$inf/month" before. Names the price that caused it.
void check_monthly_bill(const Scenario& s, double price) {
  const auto& c = s.cost;
  const double gpus = static_cast<double>(s.hardware.parallel.tp) * s.hardware.parallel.pp * s.hardware.replicas;
  const double monthly = price * gpus * (1 + c.ops_overhead_fraction) * c.hours_per_month + c.storage_per_month +
                         c.network_per_month;
  if (monthly <= kMaxUsd) return;
  const std::string field = s.hardware.price_per_gpu_hour ? "hardware.price_per_gpu_hour" : "hardware.gpu.price_per_hour";
  throw ConfigError(field, format_value(price) + " " + c.currency + " per GPU-hour makes the monthly bill of " +
                               std::to_string(static_cast<std::int64_t>(gpus)) + " GPU(s) " + format_value(monthly) +
                               " " + c.currency + ", more than " + format_value(kMaxUsd));
}

}  // namespace

namespace detail {

Deployment read_hardware(const JsonView& v) {
  check_misplaced(v, kHardwareKeys, "cost", kCostKeys);
  if (!v.has("fleet") || v["fleet"].json().is_null()) return read_pool_fields(v, kHardwareKeys);
  // A fleet: the section holds the members and the router; everything else is said per member.
  v.allow_only({"fleet", "router"});
  Deployment d;
  if (v.has("router")) d.router = parse_router(v.string("router"), v.child_path("router"));
  const JsonView f = v["fleet"];
  if (!f.json().is_array()) f.fail("must be a list of pools ({\"gpu\": ..., \"replicas\": ...}), got a " +
                                   std::string(f.json().type_name()));
  if (f.json().empty()) f.fail("must name at least one pool");
  for (const JsonView& m : f.elements()) {
    m.expect_object();
    // A member names its card: a Deployment's default card would stand in for it silently.
    if (!m.has("gpu"))
      throw ConfigError(m.child_path("gpu"),
                        "required: the card this pool runs on (a catalogue id such as 'rtx4090-24gb', a GPU option "
                        "such as '2xa100-80gb-sxm', or a GPU spec file; `llmsim catalog gpus` lists the ids)");
    FleetMember member;
    member.hardware = read_pool_fields(m, kFleetMemberKeys);
    member.hardware.router = d.router;
    if (m.has("engine") && !m["engine"].json().is_null()) member.engine = m["engine"].json();
    d.fleet.push_back(std::move(member));
  }
  return d;
}

Json hardware_json(const Deployment& d) {
  if (!d.fleet.empty()) {  // a fleet: its members and the router that spreads the load over them
    Json hw{{"fleet", Json::array()}, {"router", to_string(d.router)}};
    for (const auto& m : d.fleet) {
      Json mj = member_json(m.hardware);
      if (m.engine) mj["engine"] = *m.engine;
      hw["fleet"].push_back(std::move(mj));
    }
    return hw;
  }
  Json hw = member_json(d);
  hw["router"] = to_string(d.router);
  return hw;
}

}  // namespace detail

void CostSpec::validate(const std::string& path) const {
  Problems p;
  auto non_negative = [&](const char* f, double v) {
    if (!(v >= 0) || !std::isfinite(v)) p.add(path + "." + f, "must be >= 0, got " + format_given(v));
  };
  non_negative("storage_per_month", storage_per_month);
  non_negative("network_per_month", network_per_month);
  non_negative("ops_overhead_fraction", ops_overhead_fraction);
  non_negative("spare_fraction", spare_fraction);
  non_negative("target_qps", target_qps);
  // Upper bounds keep what is computed from these (monthly bills, fleet sizes) finite and in range; each is far
  // beyond any real deployment (the busiest public LLM services serve ~1e5 requests/s).
  auto at_most = [&](const char* f, double v, double hi, const char* why) {
    if (v > hi) p.add(path + "." + f, "must be <= " + format_value(hi) + " (" + why + "), got " + format_given(v));
  };
  at_most("storage_per_month", storage_per_month, kMaxUsd, "USD");
  at_most("network_per_month", network_per_month, kMaxUsd, "USD");
  at_most("ops_overhead_fraction", ops_overhead_fraction, 100, "+10000%");
  at_most("spare_fraction", spare_fraction, 100, "100 spare replicas per serving one");
  at_most("target_qps", target_qps, 1e9, "requests/s; the fleet size for it must fit in a count");
  if (!(hours_per_month > 0 && hours_per_month <= 744)) {
    p.add(path + ".hours_per_month", "must be in (0, 744], got " + format_given(hours_per_month));
  }
  if (!(network_gbps > 0) || !std::isfinite(network_gbps)) {
    p.add(path + ".network_gbps", "must be > 0, got " + format_given(network_gbps));
  }
  bool code = currency.size() == 3;
  for (char ch : currency) code = code && ch >= 'A' && ch <= 'Z';
  if (!code) p.add(path + ".currency", "must be an ISO 4217 code of three capital letters (USD, HKD, CNY), got '" +
                                           currency + "'");
  if (electricity_per_kwh) non_negative("electricity_per_kwh", *electricity_per_kwh);
  if (!(pue >= 1 && pue <= 5)) p.add(path + ".pue", "must be in [1, 5] (total facility power / IT power), got " +
                                                        format_value(pue));
  if (!(depreciation_years > 0 && depreciation_years <= 30))
    p.add(path + ".depreciation_years", "must be in (0, 30], got " + format_given(depreciation_years));
  non_negative("hosting_per_gpu_month", hosting_per_gpu_month);
  // Owned-cost inputs multiply into bills: bounded like the others (in any currency: 1e6 per kWh is ~1e5 USD in the
  // weakest currencies, far beyond any tariff), so a bill stays finite.
  if (electricity_per_kwh) at_most("electricity_per_kwh", *electricity_per_kwh, 1e6, "per kWh");
  at_most("hosting_per_gpu_month", hosting_per_gpu_month, 1e12, "per GPU-month");
  p.throw_if_any();
}

void Scenario::validate() const {
  Problems p;
  auto collect = [&](auto&& fn) { p.collect(fn); };
  if (model.empty()) p.add("model", "must name a model");
  collect([&] {
    if (to_lower(weights) != kAutoWeights) weight_format(weights, "quant.weights");
  });
  collect([&] { parse_kv_dtype(kv_cache, "quant.kv_cache"); });
  collect([&] { hardware.validate("hardware"); });
  collect([&] { engine.validate("engine"); });
  collect([&] { workload.validate("workload"); });
  collect([&] { slo.validate("slo"); });
  collect([&] { metrics.validate("metrics"); });
  collect([&] { cost.validate("cost"); });
  if (autoscaler) collect([&] { autoscaler->validate("autoscaler"); });
  collect([&] { failures.validate("failures"); });
  if (disaggregation) collect([&] { disaggregation->validate("disaggregation"); });
  // A warm cache is the prefix cache's content (engine/warm_cache.hpp): rules across sections.
  if (workload.warm_cache && !engine.prefix_caching())
    p.add("workload.warm_cache", "a warm cache is the prefix cache's content: it needs prefix caching "
                                 "(engine.enable_prefix_caching true; vLLM V1's default)");
  if (workload.warm_cache && disaggregation)
    p.add("workload.warm_cache", "a warm cache with disaggregation is not modelled");
  // Derived counts: each factor is bounded, their product too (an int product of tp, pp and replicas overflowed).
  const std::int64_t gpus = std::int64_t{hardware.parallel.tp} * hardware.parallel.pp * hardware.replicas;
  if (p.empty() && gpus > kMaxGpus)
    p.add("hardware.replicas", "tp x pp x replicas = " + std::to_string(gpus) + " GPUs, more than " +
                                   std::to_string(kMaxGpus) + ", got " + std::to_string(hardware.replicas) + " replicas");
  if (p.empty()) detail::check_timed_events(*this, p);
  p.throw_if_any();
}

Scenario scenario_from_json(const JsonView& in) {
  const Json doc = prepare_scenario_json(in);  // vLLM's names -> canonical, then merged onto the defaults
  const JsonView v(doc, in.path());
  v.allow_only(kTopKeys);
  Scenario s;
  s.name = v.string_or("name", "");
  s.model = spec_ref(v, "model", s.model);
  if (v.has("quant")) {
    auto q = v["quant"];
    q.allow_only(kQuantKeys);
    s.weights = q.string_or("weights", s.weights);
    s.kv_cache = q.string_or("kv_cache", s.kv_cache);
  }
  if (v.has("hardware")) s.hardware = read_hardware(v["hardware"]);
  // An absent section reads as an empty one: knobs left out take the policy's defaults at resolve().
  s.engine = read_engine(v.has("engine") ? v["engine"] : JsonView(kEmptyObject, v.child_path("engine")));
  if (v.has("workload")) s.workload = read_workload(v["workload"]);
  if (v.has("slo")) s.slo = read_slo(v["slo"]);
  if (v.has("metrics") && !v["metrics"].json().is_null()) s.metrics = metrics_from_json(v["metrics"]);
  if (v.has("cost")) s.cost = read_cost(v["cost"]);
  if (v.has("autoscaler") && !v["autoscaler"].json().is_null()) s.autoscaler = autoscaler_from_json(v["autoscaler"]);
  if (v.has("failures")) s.failures = failures_from_json(v["failures"]);
  if (v.has("disaggregation") && !v["disaggregation"].json().is_null())
    s.disaggregation = disaggregation_from_json(v["disaggregation"]);
  s.validate();
  return s;
}

Scenario scenario_from_text(std::string_view text, const std::string& source) {
  const Json doc = parse_json(text, source);
  return scenario_from_json(JsonView(doc, ""));
}

Json to_json(const Scenario& s) {
  Json j;
  j["name"] = s.name;
  j["model"] = spec_ref_json(s.model, "model");
  j["quant"] = {{"weights", s.weights}, {"kv_cache", s.kv_cache}};
  j["hardware"] = hardware_json(s.hardware);
  j["engine"] = engine_json(s.engine);
  j["workload"] = workload_json(s.workload);
  j["slo"] = slo_json(s.slo);
  if (!s.metrics.empty()) j["metrics"] = to_json(s.metrics);
  const auto& c = s.cost;
  j["cost"] = {{"storage_per_month", c.storage_per_month},
               {"network_per_month", c.network_per_month},
               {"ops_overhead_fraction", c.ops_overhead_fraction},
               {"spare_fraction", c.spare_fraction},
               {"hours_per_month", c.hours_per_month},
               {"target_qps", c.target_qps},
               {"network_gbps", c.network_gbps},
               {"currency", c.currency},
               {"pue", c.pue},
               {"depreciation_years", c.depreciation_years},
               {"hosting_per_gpu_month", c.hosting_per_gpu_month}};
  if (c.electricity_per_kwh) j["cost"]["electricity_per_kwh"] = *c.electricity_per_kwh;
  if (s.autoscaler) j["autoscaler"] = to_json(*s.autoscaler);
  if (!s.failures.empty() || s.failures.spares > 0) j["failures"] = to_json(s.failures);
  if (s.disaggregation) j["disaggregation"] = to_json(*s.disaggregation);
  return j;
}

int default_max_model_len(const ModelSpec& m, const EngineConfig& e) {
  // vLLM refuses max_num_batched_tokens < max_model_len without chunked prefill.
  return e.chunked_prefill() ? m.max_position_embeddings : std::min(m.max_position_embeddings, e.max_num_batched_tokens);
}

namespace {

// Each pool resolved as its own scenario; resolve()'s "hardware.tp" / "engine.max_num_seqs" become the pool's
// "disaggregation.decode.tp" / "disaggregation.decode.engine.max_num_seqs".
std::vector<ResolvedScenario> resolve_disaggregation(const Scenario& s, const Catalog& catalog) {
  std::vector<ResolvedScenario> pools;
  Problems p;
  for (const char* role : {"prefill", "decode"}) {
    const PoolSpec& pool = std::string(role) == "prefill" ? s.disaggregation->prefill : s.disaggregation->decode;
    const std::string at = std::string("disaggregation.") + role;
    try {
      pools.push_back(resolve_pool(s, pool.hardware, &pool.engine, catalog));
    } catch (const ConfigError& e) {
      for (auto x : e.problems()) {
        if (x.rfind("hardware.", 0) == 0) x = at + x.substr(8);
        else if (x.rfind("engine.", 0) == 0) x = at + "." + x;
        else if (x.rfind("hardware:", 0) == 0) x = at + x.substr(8);
        p.add("", x);
      }
    }
  }
  p.throw_if_any();
  return pools;
}

}  // namespace

ResolvedScenario resolve(const Scenario& s, const Catalog& catalog) {
  s.validate();
  if (!s.hardware.fleet.empty()) return resolve_fleet(s, catalog);
  ResolvedScenario r;
  r.scenario = s;
  Problems p;
  auto collect = [&](auto&& fn) { p.collect(fn); };
  collect([&] { r.model = catalog.model(s.model, "model"); });
  collect([&] {
    const GpuOption option = parse_gpu_option(s.hardware.gpu, "hardware.gpu");
    r.scenario.hardware.parallel = split_for(option, s.hardware.parallel, "hardware.tp");
    r.gpu = gpu_for(option, r.scenario.hardware.parallel.gpus(), catalog, "hardware.gpu");
    r.interconnect = interconnect(r.gpu, r.scenario.hardware.parallel.gpus(), option.nvlink_bridge);
    if (option.kv_offload_gb > 0) {  // "+offload<G>": the option's host KV tier (the engine field says the same)
      if (s.engine.kv_offload_gb > 0 && s.engine.kv_offload_gb != option.kv_offload_gb)
        throw ConfigError("hardware.gpu", "'" + s.hardware.gpu + "' gives a " + std::to_string(option.kv_offload_gb) +
                                              " GiB host KV tier but engine.kv_offload_gb is " +
                                              format_given(s.engine.kv_offload_gb) + " (give one of them)");
      r.scenario.engine.kv_offload_gb = option.kv_offload_gb;
      r.scenario.engine.validate();  // the tier needs prefix caching
    }
  });
  p.throw_if_any();
  r.notes = r.model.notes;
  const WeightFormat format = weight_format_for_model(r.model, s.weights, "quant.weights", r.notes);
  // The resolved scenario names the format it runs (an "auto" resolves to the checkpoint's), so resolving it again
  // gives the same plan and every output shows the format used.
  r.scenario.weights = format.id;
  r.quant.weights = format_for_gpu(format, r.gpu, "quant.weights");
  r.quant.kv_dtype = parse_kv_dtype(s.kv_cache, "quant.kv_cache");
  // A named release ("vllm==0.4.1") runs that release's quantised kernels (pre-Marlin AWQ/GPTQ, FP8 on Ada).
  r.quant.kernels = quant_kernels_for(s.engine.runtime_release, "engine.runtime");
  // An FP8/INT8/INT4 KV cache needs no tensor path: vLLM stores FP8 KV on Ampere too and dequantises it in
  // the attention kernel [quantization.md §7], so any GPU accepts any KV dtype.
  // Catalogue prices are USD; in another currency only the user's own figures can be used (no exchange rates).
  const bool usd = s.cost.currency == "USD";
  if (s.hardware.price_per_gpu_hour) {
    r.price_per_gpu_hour = *s.hardware.price_per_gpu_hour;
    r.price_is_placeholder = false;
  } else if (usd && !(r.gpu.price_per_hour > 0)) {
    // A GPU spec file without a price would be billed nothing and win every comparison on cost.
    p.add("hardware.price_per_gpu_hour", "the GPU spec of " + r.gpu.id +
                                             " has no price_per_hour: give the price per GPU-hour here (or --price / "
                                             "--prices), or add price_per_hour to the spec file (0 only when set here)");
  } else if (usd) {
    r.price_per_gpu_hour = r.gpu.price_per_hour;
    r.price_is_placeholder = r.gpu.price_is_placeholder;
  } else {
    p.add("hardware.price_per_gpu_hour",
          "cost.currency is " + s.cost.currency + " but the catalogue's price of " + r.gpu.id + " ($" +
              format_value(r.gpu.price_per_hour) + "/h) is in USD; give the price per GPU-hour in " + s.cost.currency +
              " (llmsim assumes no exchange rate)");
  }
  if (s.hardware.purchase_price_per_gpu) {
    r.purchase_price_per_gpu = s.hardware.purchase_price_per_gpu;
    r.purchase_price_is_placeholder = false;
  } else if (usd && r.gpu.purchase_price > 0) {
    r.purchase_price_per_gpu = r.gpu.purchase_price;
    r.purchase_price_is_placeholder = r.gpu.purchase_price_is_placeholder;
  }
  check_monthly_bill(r.scenario, r.price_per_gpu_hour);

  const auto& m = r.model;
  const int tp = r.scenario.hardware.parallel.tp, pp = r.scenario.hardware.parallel.pp;
  m.check_tensor_parallel(tp, p, "hardware.tp");
  // VLLM_PP_LAYER_PARTITION: one stage count per stage, each > 0, summing to the model's layers (get_pp_indices).
  check_layer_partition(r.scenario.hardware.parallel.layer_partition, pp, m.num_layers, "hardware.pp_layer_partition", p);
  // pp need not divide the layers: an uneven split is vLLM's (pp_stage_layers: get_pp_indices), priced at its
  // slowest stage and sized at its largest.
  // Knobs left unset take the defaults of the engine the policy models (vLLM V1: by GPU and entry point).
  {
    const double kv_offload_gb = r.scenario.engine.kv_offload_gb;  // the GPU option's "+offload<G>", if any
    r.scenario.engine = effective_engine(s.engine, r.gpu, offline_workload(s.workload), &r.model);
    r.scenario.engine.kv_offload_gb = kv_offload_gb;
    // SGLang's decode CUDA-graph limit: the release's default for this card and TP, or the scenario's own
    // (--cuda-graph-max-bs), as the release honours it (perf: larger decode batches run eagerly).
    if (r.scenario.engine.resolved_runtime() == Runtime::sglang)
      r.scenario.engine.cuda_graph_max_bs =
          sglang_cuda_graph_max_bs(r.gpu, s.engine.runtime_release, tp, s.engine.cuda_graph_max_bs);
    // An SGLang release's own mem_fraction_static, unless the scenario set the fraction (memory/engine_memory);
    // from 0.5.3 it follows the chunk and graph sizes resolved above.
    if (!s.engine.gpu_memory_utilization_given && r.scenario.engine.resolved_runtime() == Runtime::sglang) {
      if (const auto f = sglang_mem_fraction_static(r.gpu, s.engine.runtime_release, tp * pp,
                                                    s.engine.speculative.has_value(),
                                                    r.scenario.engine.max_num_batched_tokens,
                                                    r.scenario.engine.cuda_graph_max_bs.value_or(0)))
        r.scenario.engine.gpu_memory_utilization = *f;
    }
  }
  // A vLLM release before hybrid prefix caching turns it off for this model (spec::
  // vllm_release_without_hybrid_prefix_caching): the run has no hits, and says so.
  if (m.has_linear_attention() && r.scenario.engine.prefix_caching() &&
      r.scenario.engine.resolved_runtime() != Runtime::sglang) {
    if (const auto off = vllm_release_without_hybrid_prefix_caching(s.engine.runtime_release, m.linear_mamba2)) {
      r.scenario.engine.enable_prefix_caching = false;
      const std::string why = "vLLM " + off->release + " disables prefix caching for a hybrid model (from " +
                              off->first_with + " it has it)";
      if (r.scenario.engine.kv_offload_gb > 0)
        p.add("engine.kv_offload_gb", "a host KV tier holds prefix-cache blocks, and " + why);
      if (s.workload.warm_cache) p.add("workload.warm_cache", "a warm cache is the prefix cache's content, and " + why);
      r.prefix_caching_off = "prefix caching is off: vLLM " + off->release + " disables it for a hybrid (" +
                             (m.linear_mamba2 ? "Mamba-2" : "gated DeltaNet") + ") model; from vLLM " +
                             off->first_with + " it caches whole hybrid blocks";
      r.notes.push_back(r.prefix_caching_off);
    }
  }
  const auto& e = r.scenario.engine;
  (void)multi_step_for(e);  // --num-scheduler-steps on an engine without it: refused here, naming the field
  if (e.max_model_len > m.max_position_embeddings) {
    p.add("engine.max_model_len", "must be <= the model's max_position_embeddings (" +
                                      std::to_string(m.max_position_embeddings) + "), got " +
                                      std::to_string(e.max_model_len));
  }
  r.max_model_len = e.max_model_len > 0 ? e.max_model_len : default_max_model_len(m, e);
  r.max_model_len_auto = e.max_model_len_auto();
  r.max_model_len_wanted = r.max_model_len_auto ? r.max_model_len : 0;
  if (!e.chunked_prefill() && e.max_model_len > 0 && e.max_num_batched_tokens < e.max_model_len) {
    p.add("engine.max_num_batched_tokens",
          "must be >= max_model_len (" + std::to_string(e.max_model_len) + ") unless prefills are chunked (policy "
          "'vllm' or 'chunked'), got " +
              std::to_string(e.max_num_batched_tokens));
  }
  if (e.max_num_seqs > e.max_num_batched_tokens) {
    p.add("engine.max_num_seqs", "must be <= max_num_batched_tokens (" + std::to_string(e.max_num_batched_tokens) +
                                     ") so every running sequence can decode, got " + std::to_string(e.max_num_seqs));
  }
  // The adapters the requests name run in vLLM's LoRA slots: without slots they name nothing vLLM serves, and more
  // than the slots would be swapped in from host memory (max_cpu_loras), which llmsim does not model.
  if (const auto& a = s.workload.lora_adapters) {
    if (!e.enable_lora)
      p.add("workload.lora_adapters", "takes effect only with engine.enable_lora true (vLLM's --enable-lora); set it or "
                                      "leave this out");
    else if (*a > e.max_loras)
      p.add("workload.lora_adapters", "must be <= engine.max_loras (" + std::to_string(e.max_loras) +
                                          "): more adapters than GPU slots are swapped in from host memory "
                                          "(vLLM's max_cpu_loras), which llmsim does not model; got " +
                                          std::to_string(*a));
  }
  if (e.speculative) {
    collect([&] { r.speculation = resolve_speculation(*e.speculative, s.workload.speculative_acceptance_rate, m, catalog); });
    // Every decoder verifies k + 1 tokens per step; the engine runs all of them in every step (as without
    // speculation), so the token budget must hold them (vLLM would shorten some proposals instead).
    const std::int64_t need = static_cast<std::int64_t>(e.max_num_seqs) * (e.speculative->num_speculative_tokens + 1);
    if (need > e.max_num_batched_tokens)
      p.add("engine.speculative.num_speculative_tokens",
            "max_num_seqs (" + std::to_string(e.max_num_seqs) + ") x (k + 1) = " + std::to_string(need) +
                " verified tokens exceed max_num_batched_tokens (" + std::to_string(e.max_num_batched_tokens) +
                "); lower k or max_num_seqs, or raise max_num_batched_tokens");
  }
  // Lengths that can never fit the context.
  const auto classes = s.workload.effective_classes();
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& c = classes[i];
    const std::string cp = s.workload.classes.empty() ? "workload" : "workload.classes[" + std::to_string(i) + "]";
    auto min_len = [](const LengthDist& d) -> std::int64_t {
      if (auto* f = std::get_if<FixedLength>(&d)) return f->value;
      if (auto* u = std::get_if<UniformLength>(&d)) return u->min;
      if (auto* n = std::get_if<NormalLength>(&d)) return n->min;
      return 1;
    };
    const auto in_min = min_len(c.input_tokens), out_min = min_len(c.output_tokens);
    if (in_min >= r.max_model_len) {
      p.add(cp + ".input_tokens", "every prompt is at least " + std::to_string(in_min) +
                                      " tokens, leaving no room to generate within max_model_len " +
                                      std::to_string(r.max_model_len));
    } else if (in_min + out_min > r.max_model_len && s.workload.too_long == TooLongPolicy::reject) {
      p.add(cp + ".output_tokens", "every request needs at least " + std::to_string(in_min + out_min) +
                                       " tokens > max_model_len " + std::to_string(r.max_model_len) +
                                       " and workload.too_long is 'reject'");
    }
    if (c.prefix_tokens >= r.max_model_len) {
      p.add(cp + ".prefix_tokens", "must be < max_model_len (" + std::to_string(r.max_model_len) + "), got " +
                                       std::to_string(c.prefix_tokens));
    }
  }
  p.throw_if_any();
  if (s.disaggregation) r.disagg_pools = resolve_disaggregation(s, catalog);
  return r;
}

ResolvedScenario resolve_unbilled(Scenario s, const Catalog& catalog) {
  if (!s.hardware.price_per_gpu_hour) s.hardware.price_per_gpu_hour = 0.0;
  return resolve(s, catalog);
}

}  // namespace llmsim::spec
