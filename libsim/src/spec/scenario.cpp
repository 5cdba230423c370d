// A scenario read from and written as JSON: the top level, the hardware (or fleet) and cost sections; the
// workload's and engine's sections are workload_json.cpp's and engine_json.cpp's. The scenario's rules across
// sections are scenario_validate.cpp's, its resolution against the catalogue scenario_resolve.cpp's.
#include "llmsim/spec/scenario.hpp"

#include <map>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/scenario_prepass.hpp"
#include "scenario_json.hpp"

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
// With disaggregation the pools are the deployment and `hardware` is not used (docs/disaggregation.md): a field
// written there would be dropped without a word (the pools ran on the default card at its price). Each one is an
// error naming the pool fields that say it, as a fleet refuses them and --gpu / --price / --set do.
void refuse_hardware_beside_pools(const JsonView& hw) {
  if (!hw.json().is_object()) hw.fail("must be an object; with disaggregation leave it out (the pools are the deployment)");
  Problems p;
  for (auto it = hw.json().begin(); it != hw.json().end(); ++it) {
    const std::string field = it.key();
    const bool pool_field = field != "fleet";
    p.add(hw.child_path(field),
          "not used with disaggregation: each pool is its own deployment" +
              (pool_field ? " (write it as disaggregation.prefill." + field + " and disaggregation.decode." + field + ")"
                          : std::string(" (a fleet and disaggregation are not modelled together)")));
  }
  p.throw_if_any();
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
  if (v.has("disaggregation") && !v["disaggregation"].json().is_null()) {
    if (v.has("hardware")) refuse_hardware_beside_pools(v["hardware"]);
    s.disaggregation = disaggregation_from_json(v["disaggregation"]);
  }
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
  // With disaggregation the pools are the deployment: `hardware` is not written (reading it back would refuse it).
  if (!s.disaggregation) j["hardware"] = hardware_json(s.hardware);
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

}  // namespace llmsim::spec
