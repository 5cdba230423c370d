#include "llmsim/spec/scenario.hpp"

#include <cmath>
#include <map>

#include "llmsim/core/error.hpp"
#include "llmsim/core/overloaded.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/catalog.hpp"

namespace llmsim::spec {

namespace {

int read_int(const JsonView& v, std::string_view key, int fallback) {
  if (!v.has(key)) return fallback;
  const auto x = v.integer(key);
  if (x < -(std::int64_t{1} << 31) + 1 || x > (std::int64_t{1} << 31) - 1) v[key].fail("out of range: " + std::to_string(x));
  return static_cast<int>(x);
}

// ---- field lists: the parsers, writers and set_json_path share them ----
const std::vector<std::string> kTopKeys{"name", "model", "quant", "hardware", "engine", "workload", "slo", "cost"};
const std::vector<std::string> kQuantKeys{"weights", "kv_cache"};
const std::vector<std::string> kHardwareKeys{"gpu", "gpu_profile", "tp", "pp", "replicas", "router", "price_per_gpu_hour"};
const std::vector<std::string> kEngineKeys{"policy", "max_num_seqs", "max_num_batched_tokens", "block_size",
                                           "gpu_memory_utilization", "preemption", "max_model_len", "watermark",
                                           "swap_space_gb", "enable_prefix_caching", "cuda_graphs", "max_concurrent_batches", "cpu_offload_gb",
                                           "synthetic_service"};
const std::vector<std::string> kSyntheticKeys{"kind", "mean_s", "cv"};
const std::vector<std::string> kWorkloadKeys{"arrival", "input_tokens", "output_tokens", "prefix_tokens", "prefix_groups",
                                             "classes", "num_requests", "warmup_requests", "horizon_s", "seed", "too_long"};
const std::vector<std::string> kClassKeys{"name", "arrival", "input_tokens", "output_tokens", "slo", "prefix_tokens",
                                          "prefix_groups"};
const std::vector<std::string> kCostKeys{"storage_per_month", "network_per_month", "ops_overhead_fraction", "spare_fraction",
                                         "hours_per_month", "target_qps", "network_gbps"};
const std::vector<std::string> kSloMetrics{"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"};
const std::map<std::string, std::vector<std::string>> kArrivalKeys{
    {"poisson", {"process", "rate"}},
    {"gamma", {"process", "rate", "cv"}},
    {"constant", {"process", "rate"}},
    {"onoff", {"process", "rate_on", "on_s", "off_s", "rate_off"}},
    {"closed", {"process", "concurrency", "think_time_s"}},
    {"trace", {"process", "path", "time_scale"}}};
const std::map<std::string, std::vector<std::string>> kLengthKeys{
    {"fixed", {"dist", "value"}},
    {"uniform", {"dist", "min", "max"}},
    {"normal", {"dist", "mean", "stddev", "min", "max"}},
    {"lognormal", {"dist", "mean", "sigma"}},
    {"empirical", {"dist", "values", "path", "column"}}};

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

// ---- readers ----
ArrivalSpec read_arrival(const JsonView& v) {
  const std::string process = v.string("process");
  auto it = kArrivalKeys.find(process);
  if (it == kArrivalKeys.end()) {
    throw ConfigError(v.child_path("process"), unknown_name_message("arrival process", process, keys_of(kArrivalKeys)));
  }
  v.allow_only(it->second);
  if (process == "poisson") return PoissonArrivals{v.number("rate")};
  if (process == "gamma") return GammaArrivals{v.number("rate"), v.number_or("cv", GammaArrivals{}.cv)};
  if (process == "constant") return ConstantArrivals{v.number("rate")};
  if (process == "onoff") {
    OnOffArrivals d;
    return OnOffArrivals{v.number("rate_on"), v.number_or("on_s", d.on_s), v.number_or("off_s", d.off_s),
                         v.number_or("rate_off", d.rate_off)};
  }
  if (process == "closed") {
    return ClosedLoop{read_int(v, "concurrency", ClosedLoop{}.concurrency), v.number_or("think_time_s", 0)};
  }
  return TraceReplay{v.string("path"), v.number_or("time_scale", 1.0)};
}

LengthDist read_length(const JsonView& v) {
  const std::string dist = v.string("dist");
  auto it = kLengthKeys.find(dist);
  if (it == kLengthKeys.end()) {
    throw ConfigError(v.child_path("dist"), unknown_name_message("length distribution", dist, keys_of(kLengthKeys)));
  }
  v.allow_only(it->second);
  if (dist == "fixed") return FixedLength{v.integer("value")};
  if (dist == "uniform") return UniformLength{v.integer("min"), v.integer("max")};
  if (dist == "normal") {
    NormalLength d;
    return NormalLength{v.number("mean"), v.number("stddev"), v.integer_or("min", d.min), v.integer_or("max", d.max)};
  }
  if (dist == "lognormal") return LogNormalLength{v.number("mean"), v.number_or("sigma", LogNormalLength{}.sigma)};
  EmpiricalLength e;
  if (v.has("values")) {
    for (const auto& x : v["values"].elements()) e.values.push_back(x.as_integer());
  }
  e.path = v.string_or("path", "");
  e.column = v.string_or("column", "");
  return e;
}

SloSpec read_slo(const JsonView& v) {
  std::vector<std::string> allowed = kSloMetrics;
  allowed.push_back("min_attainment");
  v.allow_only(allowed);
  SloSpec s;
  for (std::size_t mi = 0; mi < kSloMetrics.size(); ++mi) {
    if (!v.has(kSloMetrics[mi])) continue;
    auto m = v[kSloMetrics[mi]];
    m.expect_object();
    for (auto it = m.json().begin(); it != m.json().end(); ++it) {
      const std::string& key = it.key();
      const std::string kp = m.child_path(key);
      // Percentile keys are written "p50", "p95", "p99.9".
      double pct = 0;
      bool ok = key.size() > 1 && key[0] == 'p';
      if (ok) {
        std::size_t used = 0;
        try {
          pct = std::stod(key.substr(1), &used);
        } catch (const std::exception&) {
          ok = false;
        }
        ok = ok && used == key.size() - 1 && std::isfinite(pct);
      }
      if (!ok) throw ConfigError(kp, "expected a percentile key such as p50, p95 or p99.9");
      if (!(pct > 0 && pct <= 100)) throw ConfigError(kp, "percentile must be in (0, 100], got " + format_value(pct));
      SloTarget t;
      t.metric = static_cast<SloMetric>(mi);
      t.percentile = pct;
      t.max_ms = JsonView(*it, kp).as_number();
      s.targets.push_back(t);
    }
  }
  if (v.has("min_attainment")) s.min_attainment = v.number("min_attainment");
  return s;
}

TenantClass read_class(const JsonView& v, std::size_t index) {
  v.allow_only(kClassKeys);
  TenantClass c;
  c.name = v.string_or("name", "class" + std::to_string(index));
  if (v.has("arrival")) c.arrival = read_arrival(v["arrival"]);
  if (v.has("input_tokens")) c.input_tokens = read_length(v["input_tokens"]);
  if (v.has("output_tokens")) c.output_tokens = read_length(v["output_tokens"]);
  if (v.has("slo")) c.slo = read_slo(v["slo"]);
  c.prefix_tokens = v.integer_or("prefix_tokens", 0);
  c.prefix_groups = read_int(v, "prefix_groups", 0);
  return c;
}

Workload read_workload(const JsonView& v) {
  v.allow_only(kWorkloadKeys);
  Workload w;
  if (v.has("arrival")) w.arrival = read_arrival(v["arrival"]);
  if (v.has("input_tokens")) w.input_tokens = read_length(v["input_tokens"]);
  if (v.has("output_tokens")) w.output_tokens = read_length(v["output_tokens"]);
  w.prefix_tokens = v.integer_or("prefix_tokens", w.prefix_tokens);
  w.prefix_groups = read_int(v, "prefix_groups", w.prefix_groups);
  if (v.has("classes")) {
    auto elems = v["classes"].elements();
    for (std::size_t i = 0; i < elems.size(); ++i) w.classes.push_back(read_class(elems[i], i));
  }
  w.num_requests = v.integer_or("num_requests", w.num_requests);
  w.warmup_requests = v.integer_or("warmup_requests", w.warmup_requests);
  w.horizon_s = v.number_or("horizon_s", w.horizon_s);
  if (v.has("seed")) {
    const auto& j = v["seed"].json();
    if (j.is_number_unsigned()) {
      w.seed = j.get<std::uint64_t>();
    } else {
      const auto s = v.integer("seed");
      if (s < 0) v["seed"].fail("must be >= 0, got " + std::to_string(s));
      w.seed = static_cast<std::uint64_t>(s);
    }
  }
  if (v.has("too_long")) {
    const std::string t = v.string("too_long");
    if (t == "clip") {
      w.too_long = TooLongPolicy::clip;
    } else if (t == "reject") {
      w.too_long = TooLongPolicy::reject;
    } else {
      throw ConfigError(v.child_path("too_long"), unknown_name_message("too-long policy", t, {"clip", "reject"}));
    }
  }
  return w;
}

EngineConfig read_engine(const JsonView& v) {
  v.allow_only(kEngineKeys);
  EngineConfig e;
  if (v.has("policy")) e.policy = parse_policy(v.string("policy"), v.child_path("policy"));
  e.max_num_seqs = read_int(v, "max_num_seqs", e.max_num_seqs);
  e.max_num_batched_tokens = read_int(v, "max_num_batched_tokens", e.max_num_batched_tokens);
  e.block_size = read_int(v, "block_size", e.block_size);
  e.gpu_memory_utilization = v.number_or("gpu_memory_utilization", e.gpu_memory_utilization);
  if (v.has("preemption")) e.preemption = parse_preemption(v.string("preemption"), v.child_path("preemption"));
  e.max_model_len = read_int(v, "max_model_len", e.max_model_len);
  e.watermark = v.number_or("watermark", e.watermark);
  e.swap_space_gb = v.number_or("swap_space_gb", e.swap_space_gb);
  e.enable_prefix_caching = v.boolean_or("enable_prefix_caching", e.enable_prefix_caching);
  e.cuda_graphs = v.boolean_or("cuda_graphs", e.cuda_graphs);
  e.max_concurrent_batches = read_int(v, "max_concurrent_batches", e.max_concurrent_batches);
  e.cpu_offload_gb = v.number_or("cpu_offload_gb", e.cpu_offload_gb);
  if (v.has("synthetic_service")) {
    auto s = v["synthetic_service"];
    s.allow_only(kSyntheticKeys);
    SyntheticService ss;
    if (s.has("kind")) {
      const std::string k = s.string("kind");
      if (k == "fixed") {
        ss.kind = SyntheticService::Kind::fixed;
      } else if (k == "exponential") {
        ss.kind = SyntheticService::Kind::exponential;
      } else if (k == "lognormal") {
        ss.kind = SyntheticService::Kind::lognormal;
      } else {
        throw ConfigError(s.child_path("kind"),
                          unknown_name_message("service distribution", k, {"fixed", "exponential", "lognormal"}));
      }
    }
    ss.mean_s = s.number_or("mean_s", ss.mean_s);
    ss.cv = s.number_or("cv", ss.cv);
    e.synthetic_service = ss;
  }
  return e;
}

Deployment read_hardware(const JsonView& v) {
  v.allow_only(kHardwareKeys);
  Deployment d;
  d.gpu = v.string_or("gpu", d.gpu);
  d.gpu_profile = v.string_or("gpu_profile", "");
  d.parallel.tp = read_int(v, "tp", 1);
  d.parallel.pp = read_int(v, "pp", 1);
  d.replicas = read_int(v, "replicas", 1);
  if (v.has("router")) d.router = parse_router(v.string("router"), v.child_path("router"));
  if (v.has("price_per_gpu_hour")) d.price_per_gpu_hour = v.number("price_per_gpu_hour");
  return d;
}

CostSpec read_cost(const JsonView& v) {
  v.allow_only(kCostKeys);
  CostSpec c;
  c.storage_per_month = v.number_or("storage_per_month", c.storage_per_month);
  c.network_per_month = v.number_or("network_per_month", c.network_per_month);
  c.ops_overhead_fraction = v.number_or("ops_overhead_fraction", c.ops_overhead_fraction);
  c.spare_fraction = v.number_or("spare_fraction", c.spare_fraction);
  c.hours_per_month = v.number_or("hours_per_month", c.hours_per_month);
  c.target_qps = v.number_or("target_qps", c.target_qps);
  c.network_gbps = v.number_or("network_gbps", c.network_gbps);
  return c;
}

// ---- writers (full form: every field, so the output documents the defaults too) ----
Json arrival_json(const ArrivalSpec& a) {
  return std::visit(
      Overloaded{
          [](const PoissonArrivals& x) { return Json{{"process", "poisson"}, {"rate", x.rate}}; },
          [](const GammaArrivals& x) { return Json{{"process", "gamma"}, {"rate", x.rate}, {"cv", x.cv}}; },
          [](const ConstantArrivals& x) { return Json{{"process", "constant"}, {"rate", x.rate}}; },
          [](const OnOffArrivals& x) {
            return Json{{"process", "onoff"}, {"rate_on", x.rate_on}, {"on_s", x.on_s}, {"off_s", x.off_s},
                        {"rate_off", x.rate_off}};
          },
          [](const ClosedLoop& x) {
            return Json{{"process", "closed"}, {"concurrency", x.concurrency}, {"think_time_s", x.think_time_s}};
          },
          [](const TraceReplay& x) { return Json{{"process", "trace"}, {"path", x.path}, {"time_scale", x.time_scale}}; },
      },
      a);
}

Json length_json(const LengthDist& d) {
  return std::visit(
      Overloaded{
          [](const FixedLength& x) { return Json{{"dist", "fixed"}, {"value", x.value}}; },
          [](const UniformLength& x) { return Json{{"dist", "uniform"}, {"min", x.min}, {"max", x.max}}; },
          [](const NormalLength& x) {
            return Json{{"dist", "normal"}, {"mean", x.mean}, {"stddev", x.stddev}, {"min", x.min}, {"max", x.max}};
          },
          [](const LogNormalLength& x) { return Json{{"dist", "lognormal"}, {"mean", x.mean}, {"sigma", x.sigma}}; },
          [](const EmpiricalLength& x) {
            Json j{{"dist", "empirical"}};
            if (!x.path.empty()) {
              j["path"] = x.path;
              if (!x.column.empty()) j["column"] = x.column;
            } else {
              j["values"] = x.values;
            }
            return j;
          },
      },
      d);
}

Json slo_json(const SloSpec& s) {
  Json j = Json::object();
  for (const auto& t : s.targets) {
    // %.17g keeps any percentile exact; format_value would round to 6 digits.
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", t.percentile);
    std::string key = "p" + format_value(t.percentile);
    if (std::stod(key.substr(1)) != t.percentile) key = std::string("p") + buf;
    j[to_string(t.metric)][key] = t.max_ms;
  }
  if (s.min_attainment) j["min_attainment"] = *s.min_attainment;
  return j;
}

const char* synthetic_kind(SyntheticService::Kind k) {
  switch (k) {
    case SyntheticService::Kind::fixed: return "fixed";
    case SyntheticService::Kind::exponential: return "exponential";
    case SyntheticService::Kind::lognormal: return "lognormal";
  }
  return "exponential";
}

void check_path_component(const std::string& comp, const std::vector<std::string>& valid, const std::string& so_far) {
  for (const auto& v : valid) {
    if (v == comp) return;
  }
  throw ConfigError(so_far.empty() ? comp : so_far + "." + comp, unknown_name_message("scenario field", comp, valid));
}

}  // namespace

void CostSpec::validate(const std::string& path) const {
  Problems p;
  auto non_negative = [&](const char* f, double v) {
    if (!(v >= 0) || !std::isfinite(v)) p.add(path + "." + f, "must be >= 0, got " + format_value(v));
  };
  non_negative("storage_per_month", storage_per_month);
  non_negative("network_per_month", network_per_month);
  non_negative("ops_overhead_fraction", ops_overhead_fraction);
  non_negative("spare_fraction", spare_fraction);
  non_negative("target_qps", target_qps);
  if (!(hours_per_month > 0 && hours_per_month <= 744)) {
    p.add(path + ".hours_per_month", "must be in (0, 744], got " + format_value(hours_per_month));
  }
  if (!(network_gbps > 0) || !std::isfinite(network_gbps)) {
    p.add(path + ".network_gbps", "must be > 0, got " + format_value(network_gbps));
  }
  p.throw_if_any();
}

void Scenario::validate() const {
  Problems p;
  auto collect = [&](auto&& fn) {
    try {
      fn();
    } catch (const ConfigError& e) {
      for (const auto& s : e.problems()) p.add("", s);
    }
  };
  if (model.empty()) p.add("model", "must name a model");
  collect([&] { weight_format(weights, "quant.weights"); });
  collect([&] { parse_kv_dtype(kv_cache, "quant.kv_cache"); });
  collect([&] { hardware.validate("hardware"); });
  collect([&] { engine.validate("engine"); });
  collect([&] { workload.validate("workload"); });
  collect([&] { slo.validate("slo"); });
  collect([&] { cost.validate("cost"); });
  p.throw_if_any();
}

Scenario scenario_from_json(const JsonView& v) {
  v.allow_only(kTopKeys);
  Scenario s;
  s.name = v.string_or("name", "");
  s.model = v.string_or("model", s.model);
  if (v.has("quant")) {
    auto q = v["quant"];
    q.allow_only(kQuantKeys);
    s.weights = q.string_or("weights", s.weights);
    s.kv_cache = q.string_or("kv_cache", s.kv_cache);
  }
  if (v.has("hardware")) s.hardware = read_hardware(v["hardware"]);
  if (v.has("engine")) s.engine = read_engine(v["engine"]);
  if (v.has("workload")) s.workload = read_workload(v["workload"]);
  if (v.has("slo")) s.slo = read_slo(v["slo"]);
  if (v.has("cost")) s.cost = read_cost(v["cost"]);
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
  j["model"] = s.model;
  j["quant"] = {{"weights", s.weights}, {"kv_cache", s.kv_cache}};
  Json hw{{"gpu", s.hardware.gpu},
          {"gpu_profile", s.hardware.gpu_profile},
          {"tp", s.hardware.parallel.tp},
          {"pp", s.hardware.parallel.pp},
          {"replicas", s.hardware.replicas},
          {"router", to_string(s.hardware.router)}};
  if (s.hardware.price_per_gpu_hour) hw["price_per_gpu_hour"] = *s.hardware.price_per_gpu_hour;
  j["hardware"] = hw;
  const auto& e = s.engine;
  Json ej{{"policy", to_string(e.policy)},
          {"max_num_seqs", e.max_num_seqs},
          {"max_num_batched_tokens", e.max_num_batched_tokens},
          {"block_size", e.block_size},
          {"gpu_memory_utilization", e.gpu_memory_utilization},
          {"preemption", to_string(e.preemption)},
          {"max_model_len", e.max_model_len},
          {"watermark", e.watermark},
          {"swap_space_gb", e.swap_space_gb},
          {"enable_prefix_caching", e.enable_prefix_caching},
          {"cuda_graphs", e.cuda_graphs},
          {"max_concurrent_batches", e.max_concurrent_batches},
          {"cpu_offload_gb", e.cpu_offload_gb}};
  if (e.synthetic_service) {
    ej["synthetic_service"] = {{"kind", synthetic_kind(e.synthetic_service->kind)},
                               {"mean_s", e.synthetic_service->mean_s},
                               {"cv", e.synthetic_service->cv}};
  }
  j["engine"] = ej;
  const auto& w = s.workload;
  Json wj{{"arrival", arrival_json(w.arrival)},
          {"input_tokens", length_json(w.input_tokens)},
          {"output_tokens", length_json(w.output_tokens)},
          {"prefix_tokens", w.prefix_tokens},
          {"prefix_groups", w.prefix_groups},
          {"num_requests", w.num_requests},
          {"warmup_requests", w.warmup_requests},
          {"horizon_s", w.horizon_s},
          {"seed", w.seed},
          {"too_long", w.too_long == TooLongPolicy::clip ? "clip" : "reject"}};
  if (!w.classes.empty()) {
    wj["classes"] = Json::array();
    for (const auto& c : w.classes) {
      Json cj{{"name", c.name},
              {"arrival", arrival_json(c.arrival)},
              {"input_tokens", length_json(c.input_tokens)},
              {"output_tokens", length_json(c.output_tokens)},
              {"prefix_tokens", c.prefix_tokens},
              {"prefix_groups", c.prefix_groups}};
      if (c.slo) cj["slo"] = slo_json(*c.slo);
      wj["classes"].push_back(cj);
    }
  }
  j["workload"] = wj;
  j["slo"] = slo_json(s.slo);
  const auto& c = s.cost;
  j["cost"] = {{"storage_per_month", c.storage_per_month},
               {"network_per_month", c.network_per_month},
               {"ops_overhead_fraction", c.ops_overhead_fraction},
               {"spare_fraction", c.spare_fraction},
               {"hours_per_month", c.hours_per_month},
               {"target_qps", c.target_qps},
               {"network_gbps", c.network_gbps}};
  return j;
}

void set_json_path(Json& scenario, const std::string& dotted_path, const Json& value) {
  if (!scenario.is_object()) throw ConfigError("scenario", "expected a JSON object");
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted_path.find('.', start);
    parts.push_back(dotted_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& p : parts) {
    if (p.empty()) throw ConfigError(dotted_path, "not a field path (empty component)");
  }
  // Check the path against the scenario's schema before touching the document.
  check_path_component(parts[0], kTopKeys, "");
  const std::string& top = parts[0];
  auto need_depth = [&](std::size_t n) {
    if (parts.size() > n) {
      std::string so_far;
      for (std::size_t i = 0; i < n; ++i) so_far += (i ? "." : "") + parts[i];
      throw ConfigError(dotted_path, "'" + so_far + "' has no sub-field '" + parts[n] + "'");
    }
  };
  if (top == "name" || top == "model") {
    need_depth(1);
  } else if (top == "quant" || top == "hardware" || top == "cost") {
    if (parts.size() > 1) {
      check_path_component(parts[1], top == "quant" ? kQuantKeys : top == "hardware" ? kHardwareKeys : kCostKeys, top);
    }
    need_depth(2);
  } else if (top == "engine") {
    if (parts.size() > 1) check_path_component(parts[1], kEngineKeys, top);
    if (parts.size() > 2) {
      if (parts[1] != "synthetic_service") need_depth(2);
      check_path_component(parts[2], kSyntheticKeys, "engine.synthetic_service");
    }
    need_depth(3);
  } else if (top == "slo") {
    std::vector<std::string> allowed = kSloMetrics;
    allowed.push_back("min_attainment");
    if (parts.size() > 1) check_path_component(parts[1], allowed, top);
    if (parts.size() > 2 && (parts[1] == "min_attainment" || parts[2].empty() || parts[2][0] != 'p')) {
      throw ConfigError(dotted_path, "expected a percentile key such as slo.ttft_ms.p95");
    }
    need_depth(3);
  } else if (top == "workload") {
    if (parts.size() > 1) check_path_component(parts[1], kWorkloadKeys, top);
    if (parts.size() > 2) {
      const std::string& sec = parts[1];
      if (sec == "arrival") {
        check_path_component(parts[2], union_of(kArrivalKeys), "workload.arrival");
      } else if (sec == "input_tokens" || sec == "output_tokens") {
        check_path_component(parts[2], union_of(kLengthKeys), "workload." + sec);
      } else {
        need_depth(2);
      }
    }
    need_depth(3);
  }
  Json* node = &scenario;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    Json& child = (*node)[parts[i]];
    if (child.is_null()) child = Json::object();
    if (!child.is_object()) {
      throw ConfigError(dotted_path, "'" + parts[i] + "' is a " + std::string(child.type_name()) + ", not an object");
    }
    node = &child;
  }
  (*node)[parts.back()] = value;
}

int default_max_model_len(const ModelSpec& m, const EngineConfig& e) {
  // vLLM refuses max_num_batched_tokens < max_model_len without chunked prefill.
  return e.chunked_prefill() ? m.max_position_embeddings : std::min(m.max_position_embeddings, e.max_num_batched_tokens);
}

ResolvedScenario resolve(const Scenario& s, const Catalog& catalog) {
  s.validate();
  ResolvedScenario r;
  r.scenario = s;
  Problems p;
  auto collect = [&](auto&& fn) {
    try {
      fn();
    } catch (const ConfigError& e) {
      for (const auto& x : e.problems()) p.add("", x);
    }
  };
  collect([&] { r.model = catalog.model(s.model, "model"); });
  collect([&] { r.gpu = catalog.gpu(s.hardware.gpu, "hardware.gpu"); });
  p.throw_if_any();
  r.quant.weights = format_for_gpu(weight_format(s.weights, "quant.weights"), r.gpu, "quant.weights");
  r.quant.kv_dtype = parse_kv_dtype(s.kv_cache, "quant.kv_cache");
  // An FP8/INT8/INT4 KV cache needs no tensor path: vLLM stores FP8 KV on Ampere too and dequantises it in
  // the attention kernel [quantization.md §7], so any GPU accepts any KV dtype.
  r.price_per_gpu_hour = s.hardware.price_per_gpu_hour ? *s.hardware.price_per_gpu_hour : r.gpu.price_per_hour;

  const auto& m = r.model;
  const int tp = s.hardware.parallel.tp, pp = s.hardware.parallel.pp;
  if (m.num_heads % tp != 0) {
    p.add("hardware.tp", "must divide the model's num_attention_heads (" + std::to_string(m.num_heads) + "), got " +
                             std::to_string(tp));
  } else if (m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0) {
    // vLLM shards KV heads over tp, or replicates them when tp is a multiple of their count.
    p.add("hardware.tp", "must divide the model's num_key_value_heads (" + std::to_string(m.num_kv_heads) +
                             ") or be a multiple of it, got " + std::to_string(tp));
  }
  if (m.num_layers % pp != 0) {
    p.add("hardware.pp", "must divide the model's num_hidden_layers (" + std::to_string(m.num_layers) + "), got " +
                             std::to_string(pp));
  }
  if (m.intermediate_size % tp != 0) {
    p.add("hardware.tp", "must divide the model's intermediate_size (" + std::to_string(m.intermediate_size) +
                             "), got " + std::to_string(tp));
  }
  const auto& e = s.engine;
  if (e.max_model_len > m.max_position_embeddings) {
    p.add("engine.max_model_len", "must be <= the model's max_position_embeddings (" +
                                      std::to_string(m.max_position_embeddings) + "), got " +
                                      std::to_string(e.max_model_len));
  }
  r.max_model_len = e.max_model_len > 0 ? e.max_model_len : default_max_model_len(m, e);
  if (e.policy != SchedulerPolicy::chunked && e.max_model_len > 0 && e.max_num_batched_tokens < e.max_model_len) {
    p.add("engine.max_num_batched_tokens",
          "must be >= max_model_len (" + std::to_string(e.max_model_len) + ") unless policy is 'chunked', got " +
              std::to_string(e.max_num_batched_tokens));
  }
  if (e.max_num_seqs > e.max_num_batched_tokens) {
    p.add("engine.max_num_seqs", "must be <= max_num_batched_tokens (" + std::to_string(e.max_num_batched_tokens) +
                                     ") so every running sequence can decode, got " + std::to_string(e.max_num_seqs));
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
  return r;
}

}  // namespace llmsim::spec
