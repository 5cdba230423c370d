#include "llmsim/spec/workload.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/overloaded.hpp"

namespace llmsim::spec {

namespace {

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }
bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0; }

void check_arrival(const ArrivalSpec& a, const std::string& path, Problems& p) {
  auto positive = [&](const char* f, double v) {
    if (!finite_positive(v)) p.add(path + "." + f, "must be > 0, got " + format_value(v));
  };
  auto non_negative = [&](const char* f, double v) {
    if (!finite_non_negative(v)) p.add(path + "." + f, "must be >= 0, got " + format_value(v));
  };
  std::visit(Overloaded{
                 [&](const PoissonArrivals& x) { positive("rate", x.rate); },
                 [&](const GammaArrivals& x) {
                   positive("rate", x.rate);
                   positive("cv", x.cv);
                 },
                 [&](const ConstantArrivals& x) { positive("rate", x.rate); },
                 [&](const OnOffArrivals& x) {
                   positive("rate_on", x.rate_on);
                   positive("on_s", x.on_s);
                   non_negative("off_s", x.off_s);
                   non_negative("rate_off", x.rate_off);
                 },
                 [&](const ClosedLoop& x) {
                   if (x.concurrency < 1 || x.concurrency > 10'000'000) {
                     p.add(path + ".concurrency", "must be in 1..10000000, got " + std::to_string(x.concurrency));
                   }
                   non_negative("think_time_s", x.think_time_s);
                 },
                 [&](const TraceReplay& x) {
                   if (x.path.empty()) p.add(path + ".path", "must name a CSV trace file");
                   positive("time_scale", x.time_scale);
                 },
             },
             a);
}

void check_length(const LengthDist& d, const std::string& path, Problems& p) {
  // Token counts are bounded above as the CSV readers bound them: sums such as prompt + output must stay far from
  // int64 overflow (a 2^63-1-token output passed validation and broke the engine's step accounting).
  constexpr std::int64_t kMaxTokens = 1'000'000'000;
  auto at_least_one = [&](const char* f, std::int64_t v) {
    if (v < 1 || v > kMaxTokens) p.add(path + "." + f, "must be in 1..1e9 tokens, got " + std::to_string(v));
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
                   if (!finite_positive(x.mean)) p.add(path + ".mean", "must be > 0, got " + format_value(x.mean));
                   if (!finite_non_negative(x.stddev)) {
                     p.add(path + ".stddev", "must be >= 0, got " + format_value(x.stddev));
                   }
                   at_least_one("min", x.min);
                   if (x.max > kMaxTokens) p.add(path + ".max", "must be at most 1e9 tokens, got " + std::to_string(x.max));
                   if (x.mean > kMaxTokens) p.add(path + ".mean", "must be at most 1e9 tokens, got " + format_value(x.mean));
                   if (x.max != 0 && x.max < x.min) {
                     p.add(path + ".max", "must be 0 (model limit) or >= min (" + std::to_string(x.min) + "), got " +
                                              std::to_string(x.max));
                   }
                 },
                 [&](const LogNormalLength& x) {
                   if (!finite_positive(x.mean) || x.mean < 1 || x.mean > kMaxTokens) {
                     p.add(path + ".mean", "must be in [1, 1e9] tokens, got " + format_value(x.mean));
                   }
                   if (!finite_non_negative(x.sigma) || x.sigma > 10) {
                     p.add(path + ".sigma", "must be in [0, 10], got " + format_value(x.sigma));
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
                             "must be in 1..1e9 tokens, got " + std::to_string(x.values[i]));
                       break;
                     }
                   }
                 },
             },
             d);
}

std::optional<double> class_rate(const ArrivalSpec& a) {
  return std::visit(Overloaded{
                        [](const PoissonArrivals& x) -> std::optional<double> { return x.rate; },
                        [](const GammaArrivals& x) -> std::optional<double> { return x.rate; },
                        [](const ConstantArrivals& x) -> std::optional<double> { return x.rate; },
                        [](const OnOffArrivals& x) -> std::optional<double> {
                          return (x.rate_on * x.on_s + x.rate_off * x.off_s) / (x.on_s + x.off_s);
                        },
                        [](const ClosedLoop&) -> std::optional<double> { return std::nullopt; },
                        [](const TraceReplay&) -> std::optional<double> { return std::nullopt; },
                    },
                    a);
}

void scale_arrival(ArrivalSpec& a, double factor) {
  std::visit(Overloaded{
                 [&](PoissonArrivals& x) { x.rate *= factor; },
                 [&](GammaArrivals& x) { x.rate *= factor; },
                 [&](ConstantArrivals& x) { x.rate *= factor; },
                 [&](OnOffArrivals& x) {
                   x.rate_on *= factor;
                   x.rate_off *= factor;
                 },
                 [](ClosedLoop&) {},
                 [](TraceReplay&) {},
             },
             a);
}

}  // namespace

std::vector<TenantClass> Workload::effective_classes() const {
  if (!classes.empty()) return classes;
  TenantClass c;
  c.name = "default";
  c.arrival = arrival;
  c.input_tokens = input_tokens;
  c.output_tokens = output_tokens;
  c.prefix_tokens = prefix_tokens;
  c.prefix_groups = prefix_groups;
  return {c};
}

void Workload::validate(const std::string& path) const {
  Problems p;
  auto check_class = [&](const ArrivalSpec& a, const LengthDist& in, const LengthDist& out, std::int64_t prefix,
                         int groups, const std::string& cp) {
    check_arrival(a, cp + (cp.empty() ? "" : ".") + "arrival", p);
    check_length(in, cp + (cp.empty() ? "" : ".") + "input_tokens", p);
    check_length(out, cp + (cp.empty() ? "" : ".") + "output_tokens", p);
    if (prefix < 0) p.add(cp + ".prefix_tokens", "must be >= 0, got " + std::to_string(prefix));
    if (groups < 0) p.add(cp + ".prefix_groups", "must be >= 0, got " + std::to_string(groups));
  };
  if (classes.empty()) {
    check_class(arrival, input_tokens, output_tokens, prefix_tokens, prefix_groups, path);
  } else {
    int trace = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      const auto& c = classes[i];
      const std::string cp = path + ".classes[" + std::to_string(i) + "]";
      if (c.name.empty()) p.add(cp + ".name", "must not be empty");
      for (std::size_t j = 0; j < i; ++j) {
        if (classes[j].name == c.name) p.add(cp + ".name", "duplicate class name '" + c.name + "'");
      }
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
  if (num_requests < 1) p.add(path + ".num_requests", "must be >= 1, got " + std::to_string(num_requests));
  if (warmup_requests < 0) p.add(path + ".warmup_requests", "must be >= 0, got " + std::to_string(warmup_requests));
  if (num_requests >= 1 && warmup_requests >= num_requests) {
    p.add(path + ".warmup_requests", "must be < num_requests (" + std::to_string(num_requests) + "), got " +
                                         std::to_string(warmup_requests));
  }
  if (!finite_non_negative(horizon_s)) p.add(path + ".horizon_s", "must be >= 0, got " + format_value(horizon_s));
  p.throw_if_any();
}

std::optional<double> offered_rate(const Workload& w) {
  double total = 0;
  for (const auto& c : w.effective_classes()) {
    auto r = class_rate(c.arrival);
    if (!r) return std::nullopt;
    total += *r;
  }
  return total;
}

Workload with_rate(const Workload& w, double rate) {
  if (!finite_positive(rate)) throw ConfigError("workload.arrival.rate", "must be > 0, got " + format_value(rate));
  Workload out = w;
  auto classes = w.effective_classes();
  bool any_trace = false, all_closed = true, any_closed = false;
  for (const auto& c : classes) {
    any_trace = any_trace || std::holds_alternative<TraceReplay>(c.arrival);
    const bool closed = std::holds_alternative<ClosedLoop>(c.arrival);
    all_closed = all_closed && closed;
    any_closed = any_closed || closed;
  }
  if (any_trace) throw ConfigError("workload.arrival", "a trace replay has its own arrival times; its rate cannot be set");
  if (any_closed && !all_closed) {
    throw ConfigError("workload.classes", "cannot set one rate for a mix of open- and closed-loop classes");
  }
  auto apply = [&](ArrivalSpec& a, double share) {
    if (auto* cl = std::get_if<ClosedLoop>(&a)) {
      cl->concurrency = std::max(1, static_cast<int>(std::lround(std::min(rate * share, 1e7))));
    } else {
      const double current = *class_rate(a);
      scale_arrival(a, rate * share / current);
    }
  };
  // Shares keep the class mix: by offered rate (open loop) or by concurrency (closed loop).
  double total = 0;
  std::vector<double> weight;
  for (const auto& c : classes) {
    const double x = all_closed ? std::get<ClosedLoop>(c.arrival).concurrency : *class_rate(c.arrival);
    weight.push_back(x);
    total += x;
  }
  if (w.classes.empty()) {
    apply(out.arrival, 1.0);
  } else {
    for (std::size_t i = 0; i < out.classes.size(); ++i) apply(out.classes[i].arrival, weight[i] / total);
  }
  return out;
}

}  // namespace llmsim::spec
