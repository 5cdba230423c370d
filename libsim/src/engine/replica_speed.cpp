#include "llmsim/engine/replica_speed.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/overloaded.hpp"

namespace llmsim::engine {

namespace {

double nominal_mean(const spec::LengthDist& d) {
  return std::visit(Overloaded{[](const spec::FixedLength& x) { return static_cast<double>(x.value); },
                               [](const spec::UniformLength& x) { return 0.5 * static_cast<double>(x.min + x.max); },
                               [](const spec::NormalLength& x) { return x.mean; },
                               [](const spec::LogNormalLength& x) { return x.mean; },
                               [](const spec::EmpiricalLength& x) {
                                 if (x.values.empty()) return 512.0;
                                 double s = 0;
                                 for (const auto v : x.values) s += static_cast<double>(v);
                                 return s / static_cast<double>(x.values.size());
                               }},
                    d);
}

double decode_time(const perf::CostModel& cost, std::int64_t batch, double context) {
  perf::BatchShape b;
  b.decode_seqs = batch;
  b.decode_context = static_cast<std::int64_t>(std::llround(static_cast<double>(batch) * std::max(1.0, context)));
  return cost.iteration_time(b);
}

}  // namespace

MeanLengths mean_lengths(const spec::Workload& w) {
  const auto classes = w.effective_classes();
  double in = 0, out = 0, weight = 0;
  for (const auto& c : classes) {
    spec::Workload one;
    one.arrival = c.arrival;
    one.input_tokens = c.input_tokens;
    one.output_tokens = c.output_tokens;
    double k = 1;
    try {
      k = spec::offered_rate(one).value_or(1.0);
    } catch (const ConfigError&) {
      k = 1;  // a rate that cannot be summarised alone (trace, piecewise): equal weight
    }
    if (!(k > 0)) k = 1;
    in += k * nominal_mean(c.input_tokens);
    out += k * nominal_mean(c.output_tokens);
    weight += k;
  }
  if (weight > 0) in /= weight, out /= weight;
  return {std::max(1.0, in), std::max(1.0, out)};
}

ReplicaSpeed replica_speed(const perf::CostModel& cost, const memory::MemoryPlan& plan,
                           const spec::EngineConfig& engine, const MeanLengths& len) {
  ReplicaSpeed s;
  const double kv = static_cast<double>(std::max<std::int64_t>(1, plan.kv_capacity_tokens));
  const std::int64_t seqs = std::max(1, engine.max_num_seqs);
  s.reference_batch = static_cast<int>(std::clamp<double>(std::floor(kv / (len.input + len.output)), 1.0,
                                                          static_cast<double>(seqs)));
  s.decode_tokens_per_s = s.reference_batch / decode_time(cost, s.reference_batch, len.input + len.output / 2);
  const std::int64_t chunk = std::clamp<std::int64_t>(engine.max_num_batched_tokens, 1, 8192);
  perf::BatchShape p;
  p.add_prefill(chunk, 0, true);
  s.prefill_tokens_per_s = static_cast<double>(chunk) / cost.iteration_time(p);
  s.requests_per_s = 1.0 / (len.input / s.prefill_tokens_per_s + len.output / s.decode_tokens_per_s);
  // The bound: the best decode rate over batch sizes up to what the KV pool holds at the mean prompt length.
  const auto max_batch = static_cast<std::int64_t>(std::clamp<double>(std::floor(kv / len.input), 1.0,
                                                                      static_cast<double>(seqs)));
  double best_decode = 0;
  for (std::int64_t b = 1;; b = std::min(max_batch, b * 2)) {
    best_decode = std::max(best_decode, static_cast<double>(b) / decode_time(cost, b, len.input));
    if (b == max_batch) break;
  }
  const double per_request_s = std::max(len.output / best_decode, len.input / s.prefill_tokens_per_s);
  s.requests_per_s_bound = 1.5 / per_request_s;
  return s;
}

}  // namespace llmsim::engine
