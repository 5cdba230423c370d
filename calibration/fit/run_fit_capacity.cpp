// The capacity guard of a run fit (run_fit_capacity.hpp).
#include "run_fit_capacity.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"

namespace llmsim::calibration::detail {

namespace {

bool is_serve(const analysis::BenchRun& r) { return r.serve.has_value(); }

/// Whether the run measured the server at its capacity (see kKeptUpFraction).
bool reaches_capacity(const analysis::BenchRun& r) {
  if (r.kind == spec::BenchKind::vllm_throughput) return true;  // every request at once
  if (!is_serve(r)) return false;
  const auto& s = *r.serve;
  if (!s.request_rate) return !s.max_concurrency;  // sent at once (a client's concurrency cap sets its own load)
  if (s.max_concurrency) return false;
  if (!(s.duration_s > 0) || s.completed <= 0) return false;  // a summary without its duration: no evidence
  return static_cast<double>(s.completed) / s.duration_s < kKeptUpFraction * *s.request_rate;
}

}  // namespace

std::unique_ptr<CapacityGuard> CapacityGuard::of(const std::vector<analysis::BenchRun>& runs,
                                                 std::vector<std::string>& notes) {
  const analysis::BenchRun* heaviest = nullptr;
  for (const auto& r : runs) {
    if (reaches_capacity(r)) return nullptr;
    if (!is_serve(r) || !r.serve->request_rate) continue;
    if (!heaviest || *r.serve->request_rate > *heaviest->serve->request_rate) heaviest = &r;
  }
  if (!heaviest) return nullptr;
  bool has_throughput = false;
  for (const auto& v : heaviest->serve->scalars) has_throughput = has_throughput || v.key == "output_throughput";
  if (!has_throughput) return nullptr;
  analysis::BenchRun probe = *heaviest;
  probe.name = heaviest->name + " sent at once";
  probe.serve->request_rate.reset();
  probe.serve->arrivals_s.clear();
  probe.measured = {{"output_throughput", 1.0}};
  notes.push_back("capacity guard: every serving run ran below the server's capacity (completed >= " +
                  format_fixed(100 * kKeptUpFraction, 0) + " % of its request rate), so none says where capacity is; "
                  "the fit may move the predicted capacity (" + probe.name + ": output tokens/s) by at most " +
                  format_fixed(100 * kCapacityGuard, 0) + " % from the base profile's");
  return std::unique_ptr<CapacityGuard>(new CapacityGuard(std::move(probe)));
}

CapacityGuard::CapacityGuard(analysis::BenchRun run) : run_(std::move(run)) {
  pred_ = std::make_unique<analysis::BenchPredictor>(run_);
}

double CapacityGuard::capacity(const perf::HardwareProfile& profile, std::size_t key) {
  const auto hit = seen_.find(key);
  if (hit != seen_.end()) return hit->second;
  double c = std::nan("");
  try {
    c = pred_->predict(profile).at(0);
  } catch (const ConfigError&) {
  }
  seen_.emplace(key, c);
  return c;
}

void CapacityGuard::set_base(const perf::HardwareProfile& profile, std::size_t key) {
  if (base_ > 0) return;
  base_ = capacity(profile, key);
}

bool CapacityGuard::allows(const perf::HardwareProfile& profile, std::size_t key) {
  if (!(base_ > 0) || !std::isfinite(base_)) return true;  // the base cannot price the probe: nothing to hold
  const double c = capacity(profile, key);
  const bool ok = std::isfinite(c) && c > 0 && std::abs(std::log(c / base_)) <= std::log1p(kCapacityGuard);
  if (!ok) ++refused_;
  return ok;
}

}  // namespace llmsim::calibration::detail
