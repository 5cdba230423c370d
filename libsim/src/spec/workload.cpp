#include "llmsim/spec/workload.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/overloaded.hpp"
#include "timed_events.hpp"
#include "workload_rate.hpp"

namespace llmsim::spec {

std::string to_string(Endpoint e) {
  return e == Endpoint::chat_completions ? "/v1/chat/completions" : "/v1/completions";
}

Endpoint parse_endpoint(const std::string& s, const std::string& path) {
  if (s == "/v1/completions" || s == "/completions") return Endpoint::completions;
  if (s == "/v1/chat/completions" || s == "/chat/completions") return Endpoint::chat_completions;
  throw ConfigError(path, unknown_name_message("endpoint", s, {"/v1/completions", "/v1/chat/completions"}));
}

// daily_profile.cpp
void check_daily_profile(const DailyProfile& p, int days, const std::string& path, Problems& problems);

namespace {

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }
bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0; }

void check_arrival(const ArrivalSpec& a, const std::string& path, Problems& p) {
  auto positive = [&](const char* f, double v) {
    if (!finite_positive(v)) p.add(path + "." + f, "must be > 0, got " + format_given(v));
  };
  auto non_negative = [&](const char* f, double v) {
    if (!finite_non_negative(v)) p.add(path + "." + f, "must be >= 0, got " + format_given(v));
  };
  // A time the scenario sets directly must lie within the clock's precise range (kMaxSimulatedSeconds).
  auto seconds = [&](const char* f, double v, double lo) {
    if (!(v >= lo && v <= kMaxSimulatedSeconds)) {
      p.add(path + "." + f, "must be in [" + format_value(lo) + ", 1e9] s, got " + format_given(v));
    }
  };
  std::visit(Overloaded{
                 [&](const PoissonArrivals& x) { positive("rate", x.rate); },
                 [&](const GammaArrivals& x) {
                   positive("rate", x.rate);
                   // Gaps are Gamma(1/cv², cv²/rate): beyond these bounds the shape under- or overflows and the
                   // draws degenerate (all zero, or NaN).
                   if (!(x.cv >= 1e-3 && x.cv <= 100)) p.add(path + ".cv", "must be in [0.001, 100], got " + format_given(x.cv));
                 },
                 [&](const ConstantArrivals& x) { positive("rate", x.rate); },
                 [&](const OnOffArrivals& x) {
                   positive("rate_on", x.rate_on);
                   seconds("on_s", x.on_s, 1e-6);
                   seconds("off_s", x.off_s, 0);
                   non_negative("rate_off", x.rate_off);
                 },
                 [&](const ClosedLoop& x) {
                   if (x.concurrency < 1 || x.concurrency > kMaxUsers) {
                     p.add(path + ".concurrency", "must be in 1.." + std::to_string(kMaxUsers) + ", got " +
                                                      std::to_string(x.concurrency));
                   }
                   seconds("think_time_s", x.think_time_s, 0);
                   if (x.start_offsets_s.size() > static_cast<std::size_t>(std::max(1, x.concurrency))) {
                     p.add(path + ".start_offsets_s", "names " + std::to_string(x.start_offsets_s.size()) +
                                                          " clients, more than the loop's " +
                                                          std::to_string(x.concurrency) + " users (concurrency)");
                   }
                   for (std::size_t g = 0; g < x.start_offsets_s.size(); ++g)
                     seconds(("start_offsets_s[" + std::to_string(g) + "]").c_str(), x.start_offsets_s[g], 0);
                 },
                 [&](const TraceReplay& x) {
                   if (x.path.empty() && x.requests.empty()) p.add(path + ".path", "must name a CSV trace file");
                   positive("time_scale", x.time_scale);
                   seconds("start_s", x.start_s, 0);
                   seconds("duration_s", x.duration_s, 0);
                   if (x.start_row < 0) p.add(path + ".start_row", "must be >= 0, got " + std::to_string(x.start_row));
                   if (x.max_rows < 0) p.add(path + ".max_rows", "must be >= 0 (0 = all), got " + std::to_string(x.max_rows));
                   if (x.hash_block_tokens < 1 || x.hash_block_tokens > 1'000'000)
                     p.add(path + ".hash_block_tokens", "must be in 1..1e6, got " + std::to_string(x.hash_block_tokens));
                   if ((!x.model.empty() || !x.log_type.empty() || x.keep_failed) && x.format != "auto" && x.format != "burstgpt")
                     p.add(path + ".format", "model, log_type and failed filter BurstGPT traces, got format " + x.format);
                   if (!x.requests.empty() && (x.format != "auto" || !x.model.empty() || !x.log_type.empty()))
                     p.add(path + ".format", "inline requests have no file format or filters");
                   for (std::size_t i = 0; i < x.requests.size(); ++i) {
                     const auto& q = x.requests[i];
                     const std::string at = path + ".requests[" + std::to_string(i) + "]";
                     if (!(q.arrival_s >= 0) || !std::isfinite(q.arrival_s)) p.add(at, "arrival must be >= 0 s, got " + format_given(q.arrival_s));
                     if (q.input_tokens < 1 || q.input_tokens > 1'000'000'000) p.add(at, "input tokens must be in 1..1e9, got " + std::to_string(q.input_tokens));
                     if (q.output_tokens < 0 || q.output_tokens > 1'000'000'000) p.add(at, "output tokens must be in 0..1e9, got " + std::to_string(q.output_tokens));
                   }
                 },
                 [&](const OfflineArrivals& x) { positive("weight", x.weight); },
                 [&](const PiecewiseArrivals& x) {
                   if (x.rates.empty()) {
                     p.add(path + ".rates", "must list at least one [from_s, rate] pair, e.g. [[0, 4], [60, 12], [120, 4]]");
                     return;
                   }
                   bool any_positive = false;
                   for (std::size_t i = 0; i < x.rates.size(); ++i) {
                     const auto [t, r] = x.rates[i];
                     const std::string at = path + ".rates[" + std::to_string(i) + "]";
                     if (i == 0 && t != 0) p.add(at + "[0]", "the schedule must start at 0 s, got " + format_given(t));
                     if (!(t >= 0 && t <= kMaxSimulatedSeconds)) p.add(at + "[0]", "must be in [0, 1e9] s, got " + format_given(t));
                     if (i > 0 && !(t > x.rates[i - 1].first)) {
                       p.add(at + "[0]", "times must increase, got " + format_given(t) + " after " +
                                             format_value(x.rates[i - 1].first));
                     }
                     if (!finite_non_negative(r)) p.add(at + "[1]", "rate must be >= 0, got " + format_given(r));
                     any_positive = any_positive || r > 0;
                   }
                   if (!any_positive) p.add(path + ".rates", "every rate is 0: no request would ever arrive");
                   // A repeated period (a compiled daily profile): its breakpoints lie inside it.
                   if (x.period_s > 0 && (x.rates.back().first >= x.period_s || x.periods < 1))
                     throw InternalError("a repeated arrival schedule with a breakpoint outside its period");
                 },
             },
             a);
}

const char* rate_field(const ArrivalSpec& a) {
  if (std::holds_alternative<OnOffArrivals>(a)) return "rate_on";
  if (std::holds_alternative<PiecewiseArrivals>(a)) return "rates";
  return "rate";
}

}  // namespace

// Shared with sessions.cpp (declared there).
void check_length(const LengthDist& d, const std::string& path, Problems& p, const char* unit) {
  const std::string u = std::string(" ") + unit;  // tokens, turns or ms: the message names what is counted
  // Token counts are bounded above as the CSV readers bound them: sums such as prompt + output must stay far from
  // int64 overflow (a 2^63-1-token output passed validation and broke the engine's step accounting).
  constexpr std::int64_t kMaxTokens = 1'000'000'000;
  auto at_least_one = [&](const char* f, std::int64_t v) {
    if (v < 1 || v > kMaxTokens) p.add(path + "." + f, "must be in 1..1e9" + u + ", got " + std::to_string(v));
  };
  std::visit(Overloaded{
                 [&](const FixedLength& x) { at_least_one("value", x.value); },
                 [&](const UniformLength& x) {
                   at_least_one("min", x.min);
                   if (x.max < x.min) {
                     p.add(path + ".max", "must be >= min (" + std::to_string(x.min) + "), got " + std::to_string(x.max));
                   } else {
                     at_least_one("max", x.max);
                   }
                 },
                 [&](const NormalLength& x) {
                   if (!finite_positive(x.mean)) p.add(path + ".mean", "must be > 0, got " + format_given(x.mean));
                   if (!finite_non_negative(x.stddev)) {
                     p.add(path + ".stddev", "must be >= 0, got " + format_given(x.stddev));
                   }
                   at_least_one("min", x.min);
                   if (x.max > kMaxTokens) p.add(path + ".max", "must be at most 1e9" + u + ", got " + std::to_string(x.max));
                   if (x.mean > kMaxTokens) p.add(path + ".mean", "must be at most 1e9" + u + ", got " + format_given(x.mean));
                   if (x.max != 0 && x.max < x.min) {
                     p.add(path + ".max", "must be 0 (model limit) or >= min (" + std::to_string(x.min) + "), got " +
                                              std::to_string(x.max));
                   }
                 },
                 [&](const LogNormalLength& x) {
                   if (!finite_positive(x.mean) || x.mean < 1 || x.mean > kMaxTokens) {
                     p.add(path + ".mean", "must be in [1, 1e9]" + u + ", got " + format_given(x.mean));
                   }
                   if (!finite_non_negative(x.sigma) || x.sigma > kMaxLogNormalSigma) {
                     p.add(path + ".sigma", "must be in [0, " + format_value(kMaxLogNormalSigma) + "], got " + format_given(x.sigma));
                   }
                 },
                 [&](const EmpiricalLength& x) {
                   if (x.values.empty() && x.path.empty()) {
                     p.add(path, "empirical lengths need 'values' or a 'path' to a CSV file");
                   }
                   if (!x.values.empty() && !x.path.empty()) p.add(path, "give either 'values' or 'path', not both");
                   for (std::size_t i = 0; i < x.values.size(); ++i) {
                     if (x.values[i] < 1 || x.values[i] > kMaxTokens) {
                       p.add(path + ".values[" + std::to_string(i) + "]",
                             "must be in 1..1e9" + u + ", got " + std::to_string(x.values[i]));
                       break;
                     }
                   }
                 },
             },
             d);
}


std::vector<TenantClass> Workload::effective_classes() const {
  std::vector<TenantClass> out = classes;
  if (out.empty()) {
    TenantClass c;
    c.name = "default";
    c.arrival = arrival;
    c.input_tokens = input_tokens;
    c.output_tokens = output_tokens;
    c.prefix_tokens = prefix_tokens;
    c.prefix_groups = prefix_groups;
    if (dataset) apply_dataset(c, *dataset, "workload.dataset");
    out.push_back(std::move(c));
  }
  // The daily curve scales each Poisson class's base rate hour by hour (validation refuses other processes).
  if (!daily_profile.empty())
    for (auto& c : out)
      if (const auto* p = std::get_if<PoissonArrivals>(&c.arrival))
        c.arrival = compile_daily_profile(daily_profile, days, p->rate);
  return out;
}

void Workload::validate(const std::string& path) const {
  Problems p;
  auto check_class = [&](const ArrivalSpec& a, const LengthDist& in, const LengthDist& out, std::int64_t prefix,
                         int groups, const std::string& cp) {
    check_arrival(a, cp + (cp.empty() ? "" : ".") + "arrival", p);
    check_length(in, cp + (cp.empty() ? "" : ".") + "input_tokens", p, "tokens");
    check_length(out, cp + (cp.empty() ? "" : ".") + "output_tokens", p, "tokens");
    if (prefix < 0) p.add(cp + ".prefix_tokens", "must be >= 0, got " + std::to_string(prefix));
    if (groups < 0) p.add(cp + ".prefix_groups", "must be >= 0, got " + std::to_string(groups));
  };
  if (classes.size() > static_cast<std::size_t>(kMaxClasses)) {
    // Checked first: per-class checks below and per-class state in the engine scale with the count.
    throw ConfigError(path + ".classes",
                      "at most " + std::to_string(kMaxClasses) + " tenant classes, got " + std::to_string(classes.size()));
  }
  if (classes.empty()) {
    check_class(arrival, input_tokens, output_tokens, prefix_tokens, prefix_groups, path);
  } else {
    int trace = 0;
    std::set<std::string> names;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      const auto& c = classes[i];
      const std::string cp = path + ".classes[" + std::to_string(i) + "]";
      if (c.name.empty()) p.add(cp + ".name", "must not be empty");
      if (!names.insert(c.name).second) p.add(cp + ".name", "duplicate class name '" + c.name + "'");
      check_class(c.arrival, c.input_tokens, c.output_tokens, c.prefix_tokens, c.prefix_groups, cp);
      if (c.slo) {
        try {
          c.slo->validate(cp + ".slo");
        } catch (const ConfigError& e) {
          for (const auto& s : e.problems()) p.add("", s);
        }
      }
      trace += std::holds_alternative<TraceReplay>(c.arrival);
    }
    if (trace > 0 && classes.size() > 1) p.add(path + ".classes", "a trace replay must be the only class");
  }
  if (sessions) {
    p.collect([&] { sessions->validate(path + ".sessions"); });
    if (!classes.empty()) p.add(path + ".classes", "sessions are one class of traffic; remove classes or sessions");
    if (std::holds_alternative<ClosedLoop>(arrival) || std::holds_alternative<TraceReplay>(arrival) ||
        std::holds_alternative<OfflineArrivals>(arrival))
      p.add(path + ".arrival.process", "sessions arrive by an open-loop process (poisson, gamma, constant, onoff, "
                                       "piecewise; sessions/s); each session's turns are its closed loop");
    if (prefix_tokens != 0 || prefix_groups != 0)
      p.add(path + ".prefix_tokens", "sessions share their system prompts (sessions.system_prompts); prefix_tokens and "
                                     "prefix_groups must be 0");
  }
  if (prompt_pool) {
    p.collect([&] { prompt_pool->validate(path + ".prompt_pool"); });
    if (!classes.empty()) p.add(path + ".classes", "a prompt pool is one class of traffic; remove classes or prompt_pool");
    if (sessions) p.add(path + ".prompt_pool", "sessions and a prompt pool are two workloads; keep one");
    if (prefix_tokens != 0 || prefix_groups != 0)
      p.add(path + ".prefix_tokens", "the prompt pool sets the shared system prompts (prompt_pool.groups, "
                                     "prompt_pool.system_tokens); prefix_tokens and prefix_groups must be 0");
  }
  check_dataset(*this, path, p);
  if (num_requests < 1 || num_requests > 10'000'000'000LL) {
    p.add(path + ".num_requests", "must be in 1..1e10, got " + std::to_string(num_requests));
  }
  if (warmup_requests < 0) p.add(path + ".warmup_requests", "must be >= 0, got " + std::to_string(warmup_requests));
  if (num_requests >= 1 && warmup_requests >= num_requests) {
    // Say what to do (issue 29): a file's explicit warm-up outlives a smaller --num-requests / num_requests= override,
    // which is not rescaled behind the user's back; the default (unset) is the one that scales.
    p.add(path + ".warmup_requests",
          "must be < num_requests (" + std::to_string(num_requests) + "), got " + std::to_string(warmup_requests) +
              ": no request would be measured. Set warmup_requests below " + std::to_string(num_requests) +
              " (e.g. --set workload.warmup_requests=" + std::to_string(default_warmup_requests(num_requests)) +
              ", in Python workload__warmup_requests=" + std::to_string(default_warmup_requests(num_requests)) +
              "), or remove it from the scenario to take the default, which scales with num_requests (min(100, "
              "num_requests / 10): " + std::to_string(default_warmup_requests(num_requests)) + " here)");
  }
  if (lora_adapters && !(*lora_adapters >= 1 && *lora_adapters <= 1024)) {
    p.add(path + ".lora_adapters", "must be in 1..1024 adapters (vLLM's max_loras bound), got " +
                                       std::to_string(*lora_adapters));
  }
  if (speculative_acceptance_rate && !(*speculative_acceptance_rate >= 0 && *speculative_acceptance_rate <= 1)) {
    p.add(path + ".speculative_acceptance_rate",
          "must be a probability in [0, 1], got " + format_given(*speculative_acceptance_rate));
  }
  if (!(horizon_s >= 0 && horizon_s <= kMaxSimulatedSeconds)) {
    p.add(path + ".horizon_s", "must be in [0, 1e9] s (0 = no limit), got " + format_given(horizon_s));
  }
  if (!(timeout_s >= 0 && timeout_s <= kMaxSimulatedSeconds)) {
    p.add(path + ".timeout_s", "must be in [0, 1e9] s (0 = no client timeout), got " + format_given(timeout_s));
  }
  if (warm_cache) {
    const bool replay = classes.empty() && !sessions && std::holds_alternative<TraceReplay>(arrival);
    if (!replay)
      p.add(path + ".warm_cache", "a warm cache holds the prompts of an earlier run of the same requests: it needs "
                                  "one class replaying a trace (arrival.process \"trace\"), no sessions");
  }
  if (!daily_profile.empty()) {
    check_daily_profile(daily_profile, days, path + ".daily_profile", p);
    const auto one = [&](const ArrivalSpec& a, const std::string& ap) {
      if (!std::holds_alternative<PoissonArrivals>(a))
        p.add(ap + ".process", "a daily_profile scales a Poisson base rate; use process \"poisson\"");
    };
    if (classes.empty()) one(arrival, path + ".arrival");
    for (std::size_t i = 0; i < classes.size(); ++i)
      one(classes[i].arrival, path + ".classes[" + std::to_string(i) + "].arrival");
  } else if (days != 1) {
    p.add(path + ".days", "repeats a daily_profile; without one it must be 1, got " + std::to_string(days));
  }
  p.throw_if_any();
  check_derived(path);
}

void Workload::check_derived(const std::string& path) const {
  // Quantities computed from several fields: every time the run will reach stays in the clock's precise
  // range, the users fit the state allocated for them, and the offline form is not mixed with others.
  Problems p;
  const auto cls = effective_classes();
  auto class_path = [&](std::size_t i) {
    return classes.empty() ? path + ".arrival" : path + ".classes[" + std::to_string(i) + "].arrival";
  };
  std::int64_t users = 0;
  std::size_t offline = 0;
  for (std::size_t i = 0; i < cls.size(); ++i) {
    if (const auto* cl = std::get_if<ClosedLoop>(&cls[i].arrival)) {
      users += cl->concurrency;
      // Each user sends about num_requests / users requests, each after its think time.
      const double rounds = std::ceil(static_cast<double>(num_requests) / std::max(1, cl->concurrency));
      if (cl->think_time_s * rounds > kMaxSimulatedSeconds && horizon_s <= 0) {
        p.add(class_path(i) + ".think_time_s",
              format_value(cl->think_time_s) + " s of think time over " + format_value(rounds) + " rounds spans " +
                  format_value(cl->think_time_s * rounds) + " s of simulated time, beyond the 1e9 s the clock "
                  "resolves to 0.2 µs: lower it or workload.num_requests");
      }
    }
    offline += std::holds_alternative<OfflineArrivals>(cls[i].arrival);
  }
  if (users > kMaxUsers) {
    p.add(path + ".classes", "the closed-loop users of all classes must total <= " + std::to_string(kMaxUsers) +
                                 ", got " + std::to_string(users));
  }
  if (offline > 0 && offline < cls.size()) {
    p.add(path + ".classes", "an offline class (every request at t = 0) cannot be mixed with other arrival processes");
  }
  // A horizon bounds the simulated time by itself (arrivals after it are never issued).
  if (const auto span = detail::workload_span(cls, static_cast<double>(num_requests)); span && horizon_s <= 0) {
    if (!(*span <= kMaxSimulatedSeconds)) {
      const std::string where = cls.size() == 1 ? class_path(0) + "." + rate_field(cls[0].arrival) : path + ".classes";
      p.add(where, std::to_string(num_requests) + " requests at " + format_value(static_cast<double>(num_requests) / *span) +
                       " req/s take " + format_value(*span) + " s of simulated time, beyond the 1e9 s (about 32 years) "
                       "the clock resolves to 0.2 µs: raise the rate or lower workload.num_requests");
    }
  }
  p.throw_if_any();
}

void validate_arrival(const ArrivalSpec& a, const std::string& path) {
  Problems p;
  check_arrival(a, path, p);
  p.throw_if_any();
}

bool offline_workload(const Workload& w) {
  for (const auto& c : w.effective_classes())
    if (!std::holds_alternative<OfflineArrivals>(c.arrival)) return false;
  return true;
}

}  // namespace llmsim::spec
