// The capacity guard of a run fit (run_fit_capacity.hpp).
#include "run_fit_capacity.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/number.hpp"

namespace llmsim::calibration {

CapacityGuardMode capacity_guard_mode(const std::string& text, const std::string& field) {
  const std::string t = to_lower(text);
  if (t == "auto") return CapacityGuardMode::automatic;
  if (t == "on") return CapacityGuardMode::on;
  if (t == "off") return CapacityGuardMode::off;
  throw ConfigError(field, "expected auto, on or off, got '" + text + "'");
}

std::string to_string(CapacityGuardMode m) {
  switch (m) {
    case CapacityGuardMode::on: return "on";
    case CapacityGuardMode::off: return "off";
    case CapacityGuardMode::automatic: break;
  }
  return "auto";
}

}  // namespace llmsim::calibration

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
                                                 std::vector<std::string>& notes, CapacityGuardMode mode) {
  if (mode == CapacityGuardMode::off) return nullptr;
  auto has_throughput = [](const analysis::BenchRun& r) {
    bool has = false;
    for (const auto& v : r.serve->scalars) has = has || v.key == "output_throughput";
    return has;
  };
  const analysis::BenchRun* heaviest = nullptr;
  if (mode == CapacityGuardMode::on) {
    // Asked for: the heaviest serving run that states an output throughput, whatever the runs reached (a run sent
    // at once is the heaviest).
    auto rate = [](const analysis::BenchRun& r) { return r.serve->request_rate ? *r.serve->request_rate : INFINITY; };
    std::string reached;
    for (const auto& r : runs) {
      if (reaches_capacity(r) && reached.empty()) reached = r.name;
      if (!is_serve(r) || !has_throughput(r)) continue;
      if (!heaviest || rate(r) > rate(*heaviest)) heaviest = &r;
    }
    if (!heaviest)
      throw ConfigError("--capacity-guard (Python capacity_guard=)",
                        "on: no run is a serving run (vllm bench serve, SGLang bench_serving) whose file states an "
                        "output throughput, so there is no capacity to hold; give 'auto' or 'off'");
    if (!reached.empty())
      notes.push_back("capacity guard on (asked for) although " + reached + " measured the server at its capacity");
  } else {
    for (const auto& r : runs) {
      if (reaches_capacity(r)) return nullptr;
      if (!is_serve(r) || !r.serve->request_rate) continue;
      if (!heaviest || *r.serve->request_rate > *heaviest->serve->request_rate) heaviest = &r;
    }
    if (!heaviest || !has_throughput(*heaviest)) return nullptr;
  }
  analysis::BenchRun probe = *heaviest;
  probe.name = heaviest->name + " sent at once";
  probe.serve->request_rate.reset();
  probe.serve->max_concurrency.reset();  // sent at once: no client cap either
  probe.serve->arrivals_s.clear();
  probe.measured = {{"output_throughput", 1.0}};
  notes.push_back(std::string("capacity guard: ") +
                  (mode == CapacityGuardMode::on
                       ? "on (--capacity-guard on)"
                       : "every serving run ran below the server's capacity (completed >= " +
                             format_fixed(100 * kKeptUpFraction, 0) +
                             " % of its request rate), so none says where capacity is") +
                  "; the fit may move the predicted capacity (" + probe.name + ": output tokens/s) by at most " +
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
