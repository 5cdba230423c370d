// An SLO's headroom over one request's unloaded latency, and the note sizing prints when it is within the model's
// typical error (slo_headroom.hpp).
#include "llmsim/analysis/slo_headroom.hpp"

#include <cmath>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"

namespace llmsim::analysis {

namespace {

MetricFamily band_family(spec::SloMetric m) {
  return m == spec::SloMetric::ttft ? MetricFamily::ttft : MetricFamily::latency;
}

std::string share_text(double fraction) { return format_fixed(100 * fraction, fraction < 0.1 ? 1 : 0) + " %"; }

}  // namespace

std::optional<SloHeadroom> tightest_slo_headroom(const spec::ResolvedScenario& rs, const metrics::Summary& alone) {
  if (!alone.fits || alone.unstable || alone.completed_requests == 0) return std::nullopt;
  const spec::Scenario& sc = rs.scenario;
  std::optional<SloHeadroom> best;
  const auto classes = sc.workload.effective_classes();
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const spec::SloSpec& slo = classes[i].slo ? *classes[i].slo : sc.slo;
    const metrics::ClassSummary* c = classes.size() > 1 && i < alone.classes.size() ? &alone.classes[i] : nullptr;
    for (const auto& t : slo.targets) {
      const auto v = slo_target_value(t, alone, c);
      if (!v || !(*v > 0) || *v > t.max_ms) continue;  // missed alone: unloaded_slo_miss says that
      const double headroom = t.max_ms / *v - 1;
      if (best && best->headroom <= headroom) continue;
      SloHeadroom h;
      h.target = (c ? "class " + c->name + ": " : std::string()) + spec::to_string(t.metric) + ".p" +
                 format_value(t.percentile);
      h.limit_ms = t.max_ms;
      h.unloaded_ms = *v;
      h.headroom = headroom;
      h.percentile = t.percentile;
      h.band = profile_error_band(rs).value_or(error_band(regime_of(rs, band_family(t.metric), 1)));
      best = std::move(h);
    }
  }
  return best;
}

void loosen_slo(spec::Scenario& sc, double factor) {
  for (auto& t : sc.slo.targets) t.max_ms *= factor;
  for (auto& c : sc.workload.classes)
    if (c.slo)
      for (auto& t : c.slo->targets) t.max_ms *= factor;
}

bool on_knee(const LooserSlo& l) {
  if (l.from_serving < 2 || l.serving < 1 || !(l.factor > 1)) return false;
  return static_cast<double>(l.from_serving - l.serving) / l.from_serving > l.factor - 1;
}

std::optional<std::string> slo_headroom_note(const spec::ResolvedScenario& rs, const metrics::Summary& alone,
                                             int serving, double busy_fraction, double monthly_cost,
                                             const LooserSlo* looser) {
  const auto h = tightest_slo_headroom(rs, alone);
  if (!h) return std::nullopt;
  // Three signs, each its own bound from what is already known (no new constant):
  // * the margin is within the model's typical error in the regime: whether the SLO holds at all is inside it;
  // * a fleet of several replicas each busy no more than the share of requests the percentile lets miss (5 % for a
  //   p95): by PASTA that is how often a request finds another in service, so the fleet was grown until collisions,
  //   each a miss, are rarer than the misses allowed — queueing noise, not load;
  // * the knee: the fleet shrinks by a larger fraction than the SLO loosens (on_knee).
  const bool in_error = h->band.known() && h->headroom <= h->band.typical;
  const double allowed_misses = 1 - h->percentile / 100;
  const bool idle_fleet = serving > 1 && busy_fraction >= 0 && busy_fraction <= allowed_misses;
  const bool knee = looser && on_knee(*looser);
  if (!in_error && !idle_fleet && !knee) return std::nullopt;
  const bool unit = !rs.fleet.empty() || !rs.disagg_pools.empty();
  const std::string what = unit ? " unit(s)" : " replica(s)";
  std::string out = "the SLO leaves requests almost no room to queue: " + h->target + " <= " + format_value(h->limit_ms) +
                    " ms is " + share_text(h->headroom) + " above the " + format_fixed(h->unloaded_ms, 1) +
                    " ms one request takes alone on one " + (unit ? "unit" : "replica") + " (no queueing)";
  if (in_error) out += ", inside the " + h->band.describe() + ", so whether it holds at all is inside the model's error";
  out += ". The fleet sized (" + std::to_string(serving) + what +
         (busy_fraction >= 0 ? ", each busy " + share_text(busy_fraction) + " of the time" : std::string()) +
         (idle_fleet ? ", no more than the " + share_text(allowed_misses) + " of requests the p" +
                           format_value(h->percentile) + " lets miss"
                     : std::string()) +
         ") is set by queueing noise — a request that waits behind another misses — not by the load";
  if (looser && looser->serving > 0) {
    const std::string cur = rs.scenario.cost.currency;
    out += std::string(knee ? "; the SLO sits on the knee" : "") + ": with every latency target " +
           share_text(looser->factor - 1) + " looser (" + h->target + " <= " +
           format_value(std::round(h->limit_ms * looser->factor * 10) / 10) + " ms) " + std::to_string(looser->serving) +
           what + " meet it at the same load";
    if (!looser->from_met)
      out += " (the SLO as set is not met by up to " + std::to_string(looser->from_serving) + what + "), " +
             format_fixed(looser->monthly_cost, 0) + " " + cur + "/month held fixed";
    else if (monthly_cost > 0 && looser->monthly_cost > 0)
      out += ", " + format_fixed(looser->monthly_cost, 0) + " " + cur + "/month instead of " +
             format_fixed(monthly_cost, 0) + " held fixed";
    out += knee ? " (the fleet falls faster than the SLO loosens)" : "";
  }
  out += ": relax the SLO";
  if (in_error && h->band.known())
    out += " (above ~" + format_fixed(h->unloaded_ms * (1 + h->band.typical), 0) + " ms the margin exceeds the typical error)";
  return out + " or pick a faster card, a lighter format or more tensor parallel";
}

}  // namespace llmsim::analysis
