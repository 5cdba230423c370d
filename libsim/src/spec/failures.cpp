// The scenario's failures section: JSON and validation (the mechanism is engine/failures.cpp).
#include "llmsim/spec/failures.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/workload.hpp"
#include "scenario_json.hpp"

namespace llmsim::spec {

void FailureSpec::validate(const std::string& path) const {
  Problems p;
  const double max_h = kMaxSimulatedSeconds / 3600;
  if (!(mtbf_h >= 0 && mtbf_h <= max_h))
    p.add(path + ".mtbf_h", "must be in [0, " + format_value(max_h) + "] hours (0 = no random failures), got " + format_given(mtbf_h));
  if (!(mttr_h > 0 && mttr_h <= max_h))
    p.add(path + ".mttr_h", "must be in (0, " + format_value(max_h) + "] hours, got " + format_given(mttr_h));
  if (max_retries < 0 || max_retries > 1'000'000)
    p.add(path + ".max_retries", "must be in 0..1000000, got " + std::to_string(max_retries));
  if (spares < 0 || spares > 10'000) p.add(path + ".spares", "must be in 0..10000, got " + std::to_string(spares));
  for (std::size_t i = 0; i < outages.size(); ++i) {
    const auto& o = outages[i];
    const std::string at = path + ".outages[" + std::to_string(i) + "]";
    if (!(o.start_s >= 0 && o.start_s <= kMaxSimulatedSeconds)) p.add(at + "[0]", "start must be in [0, 1e9] s, got " + format_given(o.start_s));
    if (!(o.duration_s > 0 && o.duration_s <= kMaxSimulatedSeconds)) p.add(at + "[1]", "duration must be in (0, 1e9] s, got " + format_given(o.duration_s));
    if (o.replica < 0) p.add(at + "[2]", "replica must be >= 0, got " + std::to_string(o.replica));
  }
  p.throw_if_any();
}

FailureSpec failures_from_json(const JsonView& v) {
  v.allow_only(detail::kFailureKeys);
  FailureSpec f;
  f.mtbf_h = v.number_or("mtbf_h", f.mtbf_h);
  f.mttr_h = v.number_or("mttr_h", f.mttr_h);
  if (v.has("outages")) {
    for (const auto& e : v["outages"].elements()) {
      const auto x = e.elements();
      if (x.size() != 2 && x.size() != 3) e.fail("expected [start_s, duration_s] or [start_s, duration_s, replica], got " + e.json().dump());
      Outage o{x[0].as_number(), x[1].as_number(), 0};
      if (x.size() == 3) o.replica = static_cast<int>(x[2].as_integer_in(-1'000'000, 1'000'000));
      f.outages.push_back(o);
    }
  }
  if (v.has("on_failure")) {
    const std::string s = v.string("on_failure");
    if (s == "requeue") f.on_failure = OnFailure::requeue;
    else if (s == "fail") f.on_failure = OnFailure::fail;
    else throw ConfigError(v.child_path("on_failure"), unknown_name_message("failure policy", s, {"requeue", "fail"}));
  }
  if (v.has("max_retries")) f.max_retries = static_cast<int>(v["max_retries"].as_integer_in(-1'000'000'000, 1'000'000'000));
  if (v.has("spares")) f.spares = static_cast<int>(v["spares"].as_integer_in(-1'000'000, 1'000'000));
  return f;
}

Json to_json(const FailureSpec& f) {
  Json outages = Json::array();
  for (const auto& o : f.outages) outages.push_back(Json::array({o.start_s, o.duration_s, o.replica}));
  return Json{{"mtbf_h", f.mtbf_h}, {"mttr_h", f.mttr_h}, {"outages", outages},
              {"on_failure", f.on_failure == OnFailure::requeue ? "requeue" : "fail"}, {"max_retries", f.max_retries}, {"spares", f.spares}};
}

}  // namespace llmsim::spec
