// The workload section of the scenario JSON: arrival processes, length distributions, tenant classes, SLOs.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/overloaded.hpp"
#include "scenario_json.hpp"

namespace llmsim::spec::detail {

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
    ClosedLoop c{read_int(v, "concurrency", ClosedLoop{}.concurrency), v.number_or("think_time_s", 0), {}};
    if (v.has("start_offsets_s"))
      for (const auto& e : v["start_offsets_s"].elements()) c.start_offsets_s.push_back(e.as_number());
    return c;
  }
  if (process == "offline") return OfflineArrivals{v.number_or("weight", 1.0)};
  if (process == "piecewise") {
    PiecewiseArrivals a;
    a.rates.clear();
    for (const auto& e : v["rates"].elements()) {
      const auto pair = e.elements();
      if (pair.size() != 2) e.fail("expected [from_s, rate] (seconds, requests/s), got " + e.json().dump());
      a.rates.emplace_back(pair[0].as_number(), pair[1].as_number());
    }
    return a;
  }
  TraceReplay t;
  t.path = v.has("requests") ? v.string_or("path", "") : v.string("path");
  t.time_scale = v.number_or("time_scale", 1.0);
  t.format = v.string_or("format", t.format);
  if (std::find(kTraceFormats.begin(), kTraceFormats.end(), t.format) == kTraceFormats.end())
    throw ConfigError(v.child_path("format"), unknown_name_message("trace format", t.format, kTraceFormats));
  t.model = v.string_or("model", "");
  t.log_type = v.string_or("log_type", "");
  if (v.has("failed")) {
    const std::string f = v.string("failed");
    if (f != "drop" && f != "keep")
      throw ConfigError(v.child_path("failed"), unknown_name_message("failed-row policy", f, {"drop", "keep"}));
    t.keep_failed = f == "keep";
  }
  t.start_s = v.number_or("start_s", 0);
  t.duration_s = v.number_or("duration_s", 0);
  t.start_row = v.integer_or("start_row", 0);
  t.max_rows = v.integer_or("max_rows", 0);
  t.hash_block_tokens = read_int(v, "hash_block_tokens", t.hash_block_tokens);
  if (v.has("requests")) {
    for (const auto& r : v["requests"].elements()) {
      const auto cols = r.elements();
      if (cols.size() != 3) r.fail("expected [arrival_s, input_tokens, output_tokens], got " + std::to_string(cols.size()) + " values");
      t.requests.push_back({cols[0].as_number(), cols[1].as_integer(), cols[2].as_integer()});
    }
  }
  return t;
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
      // Percentile keys are written "p50", "p95", "p99.9" (not "p0x5f", which a number parser reads as 95).
      const std::optional<double> key_pct = parse_percentile_key(key);
      if (!key_pct) throw ConfigError(kp, "expected a percentile key such as p50, p95 or p99.9");
      const double pct = *key_pct;
      if (!(pct > 0 && pct <= 100)) throw ConfigError(kp, "percentile must be in (0, 100], got " + format_given(pct));
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

namespace {

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

SessionSpec read_sessions(const JsonView& v) {
  v.allow_only(kSessionKeys);
  // A preset first, then each key given overrides its value.
  SessionSpec s = v.has("preset") ? session_preset(v.string("preset"), v.child_path("preset")) : SessionSpec{};
  if (v.has("turns")) s.turns = read_length(v["turns"]);
  if (v.has("system_tokens")) s.system_tokens = read_length(v["system_tokens"]);
  s.system_prompts = v.integer_or("system_prompts", s.system_prompts);
  if (v.has("user_tokens")) s.user_tokens = read_length(v["user_tokens"]);
  if (v.has("output_tokens")) s.output_tokens = read_length(v["output_tokens"]);
  if (v.has("think_time_ms")) s.think_time_ms = read_length(v["think_time_ms"]);
  s.max_output_tokens = v.integer_or("max_output_tokens", s.max_output_tokens);
  return s;
}

PromptPool read_prompt_pool(const JsonView& v) {
  v.allow_only(kPromptPoolKeys);
  PromptPool pp;
  pp.groups = v.integer_or("groups", pp.groups);
  pp.prompts_per_group = v.integer_or("prompts_per_group", pp.prompts_per_group);
  pp.system_tokens = v.integer_or("system_tokens", pp.system_tokens);
  if (v.has("shuffle")) pp.shuffle = v.boolean("shuffle");
  return pp;
}

/// workload.dataset: a name ("sharegpt") or {"name", "input_mean", "output_mean"} (means 0 or absent = the
/// dataset's default).
DatasetSpec read_dataset(const JsonView& v) {
  DatasetSpec d;
  if (v.json().is_string()) {
    d.name = v.as_string();
  } else {
    v.allow_only(kDatasetKeys);
    d.name = v.string_or("name", d.name);
    d.input_mean = v.number_or("input_mean", 0);
    d.output_mean = v.number_or("output_mean", 0);
  }
  if (std::find(kDatasets.begin(), kDatasets.end(), d.name) == kDatasets.end())
    throw ConfigError(v.json().is_string() ? v.path() : v.child_path("name"),
                      unknown_name_message("dataset", d.name, kDatasets));
  return d;
}

}  // namespace

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
  w.timeout_s = v.number_or("timeout_s", w.timeout_s);
  if (v.has("warm_cache")) w.warm_cache = v.boolean("warm_cache");
  if (v.has("ignore_eos")) w.ignore_eos = v.boolean("ignore_eos");
  if (v.has("endpoint")) w.endpoint = parse_endpoint(v.string("endpoint"), v.child_path("endpoint"));
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
  if (v.has("daily_profile")) {
    const auto dp = v["daily_profile"];
    if (dp.json().is_array() && !dp.json().empty() && dp.json().front().is_array()) {
      for (const auto& e : dp.elements()) {  // [time_s, multiplier] pairs (what workload_json writes for points)
        const auto pair = e.elements();
        if (pair.size() != 2) e.fail("expected [time_s, multiplier], got " + e.json().dump());
        w.daily_profile.points.emplace_back(pair[0].as_number(), pair[1].as_number());
      }
    } else if (dp.json().is_array()) {
      for (const auto& x : dp.elements()) w.daily_profile.hourly.push_back(x.as_number());
      if (w.daily_profile.hourly.size() != 24)
        dp.fail("expected 24 hourly multipliers of the base rate, got " + std::to_string(w.daily_profile.hourly.size()));
    } else {
      dp.allow_only({"csv"});
      w.daily_profile = read_daily_profile_csv(dp.string("csv"), dp.child_path("csv"));
    }
  }
  w.days = read_int(v, "days", w.days);
  if (v.has("speculative_acceptance_rate")) w.speculative_acceptance_rate = v.number("speculative_acceptance_rate");
  if (v.has("lora_adapters")) w.lora_adapters = read_int(v, "lora_adapters", 1);
  if (v.has("sessions")) w.sessions = read_sessions(v["sessions"]);
  if (v.has("prompt_pool")) w.prompt_pool = read_prompt_pool(v["prompt_pool"]);
  if (v.has("dataset")) w.dataset = read_dataset(v["dataset"]);
  // A day's run ends with its last day (the schedule's rate drops to 0), not at the default request count.
  if (!w.daily_profile.empty() && !v.has("num_requests")) w.num_requests = kDailyProfileRequests;
  // Unset, the warm-up scales with the run: min(100, num_requests / 10), so a short scenario is not refused for a
  // warm-up longer than itself (100 of a 100-request run). `vllm bench throughput` measures every request: an offline
  // run has no warm-up unless one is asked for.
  if (!v.has("warmup_requests")) w.warmup_requests = default_warmup_requests(w.num_requests);
  w.warmup_default = !v.has("warmup_requests");  // a trace's rows lower it in the engine (Simulation::build)
  if (!v.has("warmup_requests") && offline_workload(w)) w.warmup_requests = 0;
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
            Json j{{"process", "closed"}, {"concurrency", x.concurrency}, {"think_time_s", x.think_time_s}};
            if (!x.start_offsets_s.empty()) j["start_offsets_s"] = x.start_offsets_s;
            return j;
          },
          [](const TraceReplay& x) {
            Json j{{"process", "trace"}, {"path", x.path}, {"time_scale", x.time_scale}};
            // The selection keys only when set, so a plain trace writes what it always wrote.
            const TraceReplay d;
            if (x.format != d.format) j["format"] = x.format;
            if (!x.model.empty()) j["model"] = x.model;
            if (!x.log_type.empty()) j["log_type"] = x.log_type;
            if (x.keep_failed) j["failed"] = "keep";
            if (x.start_s != d.start_s) j["start_s"] = x.start_s;
            if (x.duration_s != d.duration_s) j["duration_s"] = x.duration_s;
            if (x.start_row != d.start_row) j["start_row"] = x.start_row;
            if (x.max_rows != d.max_rows) j["max_rows"] = x.max_rows;
            if (x.hash_block_tokens != d.hash_block_tokens) j["hash_block_tokens"] = x.hash_block_tokens;
            if (!x.requests.empty()) {
              j["requests"] = Json::array();
              for (const auto& q : x.requests) j["requests"].push_back({q.arrival_s, q.input_tokens, q.output_tokens});
            }
            return j;
          },
          [](const OfflineArrivals& x) { return Json{{"process", "offline"}, {"weight", x.weight}}; },
          [](const PiecewiseArrivals& x) {
            Json rates = Json::array();
            for (const auto& [t, r] : x.rates) rates.push_back(Json::array({t, r}));
            return Json{{"process", "piecewise"}, {"rates", rates}};
          },
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

Json workload_json(const Workload& w) {
  Json wj{{"arrival", arrival_json(w.arrival)},
          {"input_tokens", length_json(w.input_tokens)},
          {"output_tokens", length_json(w.output_tokens)},
          {"prefix_tokens", w.prefix_tokens},
          {"prefix_groups", w.prefix_groups},
          {"num_requests", w.num_requests},
          {"warmup_requests", w.warmup_requests},
          {"horizon_s", w.horizon_s},
          {"timeout_s", w.timeout_s},
          {"seed", w.seed},
          {"too_long", w.too_long == TooLongPolicy::clip ? "clip" : "reject"},
          {"days", w.days}};
  // An unset warm-up of a trace replay stays unset: read back, the engine scales it to the trace's rows again.
  bool trace = std::holds_alternative<TraceReplay>(w.arrival) && w.classes.empty();
  for (const auto& c : w.classes) trace = trace || std::holds_alternative<TraceReplay>(c.arrival);
  if (w.warmup_default && trace) wj.erase("warmup_requests");
  if (w.warm_cache) wj["warm_cache"] = true;
  if (w.ignore_eos) wj["ignore_eos"] = true;
  if (w.endpoint != Endpoint::completions) wj["endpoint"] = to_string(w.endpoint);
  if (w.speculative_acceptance_rate) wj["speculative_acceptance_rate"] = *w.speculative_acceptance_rate;
  if (w.lora_adapters) wj["lora_adapters"] = *w.lora_adapters;
  if (!w.daily_profile.hourly.empty()) wj["daily_profile"] = w.daily_profile.hourly;
  else if (!w.daily_profile.csv.empty()) wj["daily_profile"] = Json{{"csv", w.daily_profile.csv}};
  else if (!w.daily_profile.points.empty()) {
    wj["daily_profile"] = Json::array();  // points given in code: written as inline [time_s, multiplier] pairs
    for (const auto& [t, m] : w.daily_profile.points) wj["daily_profile"].push_back(Json::array({t, m}));
  }
  if (w.sessions) {
    const auto& ss = *w.sessions;
    Json sj{{"turns", length_json(ss.turns)},
            {"system_tokens", length_json(ss.system_tokens)},
            {"system_prompts", ss.system_prompts},
            {"user_tokens", length_json(ss.user_tokens)},
            {"output_tokens", length_json(ss.output_tokens)},
            {"think_time_ms", length_json(ss.think_time_ms)},
            {"max_output_tokens", ss.max_output_tokens}};
    if (!ss.preset.empty()) sj["preset"] = ss.preset;
    wj["sessions"] = sj;
  }
  if (w.prompt_pool) {
    const auto& pp = *w.prompt_pool;
    wj["prompt_pool"] = Json{{"groups", pp.groups}, {"prompts_per_group", pp.prompts_per_group},
                             {"system_tokens", pp.system_tokens}, {"shuffle", pp.shuffle}};
  }
  if (w.dataset)
    wj["dataset"] = Json{{"name", w.dataset->name}, {"input_mean", w.dataset->input_mean},
                         {"output_mean", w.dataset->output_mean}};
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
  return wj;
}

}  // namespace llmsim::spec::detail
