// search's JSON: candidates and evaluations as a Dask worker receives and returns them, the result, the options.
#include <cmath>
#include <limits>

#include "llmsim/analysis/search.hpp"

namespace llmsim::analysis {

Json to_json(const SearchCandidate& c) {
  Json point = Json::array();
  for (const auto& [path, value] : c.point) point.push_back(Json{{"path", path}, {"value", value}});
  return Json{{"index", c.index},
              {"point", point},
              {"scenario", c.scenario},
              {"name", c.name},
              {"gpus_per_replica", c.gpus_per_replica},
              {"price_per_gpu_hour", c.price_per_gpu_hour},
              // +infinity (no bound: a disaggregated deployment) as null
              {"qps_bound_per_replica", std::isfinite(c.qps_bound_per_replica) ? Json(c.qps_bound_per_replica) : Json(nullptr)},
              {"min_replicas", c.min_replicas},
              {"monthly_lower_bound", c.monthly_lower_bound}};
}

SearchCandidate candidate_from_json(const JsonView& v) {
  SearchCandidate c;
  c.index = v.integer("index");
  for (const auto& p : v["point"].elements()) c.point.emplace_back(p.string("path"), p["value"].json());
  c.scenario = v["scenario"].json();
  c.name = v.string("name");
  c.gpus_per_replica = static_cast<int>(v.integer("gpus_per_replica"));
  c.price_per_gpu_hour = v.number("price_per_gpu_hour");
  c.qps_bound_per_replica = v["qps_bound_per_replica"].json().is_null() ? std::numeric_limits<double>::infinity()
                                                                        : v.number("qps_bound_per_replica");
  c.min_replicas = static_cast<int>(v.integer("min_replicas"));
  c.monthly_lower_bound = v.number("monthly_lower_bound");
  return c;
}

Json to_json(const SearchEvaluation& e) {
  return Json{{"index", e.index},
              {"fits", e.fits},
              {"meets_slo", e.meets_slo},
              {"screened", e.screened},
              {"reason", e.reason},
              {"capacity_qps", e.capacity_qps},
              {"replicas", e.replicas},
              {"monthly_cost", e.monthly_cost},
              {"ttft_p95_ms", e.ttft_p95_ms},
              {"tpot_p95_ms", e.tpot_p95_ms},
              {"cost_per_mtok_output", e.cost_per_mtok_output ? Json(*e.cost_per_mtok_output) : Json(nullptr)},
              {"quality_caveat", e.quality_caveat},
              {"slo_headroom_note", e.slo_headroom_note}};
}

SearchEvaluation evaluation_from_json(const JsonView& v) {
  SearchEvaluation e;
  e.index = v.integer("index");
  e.fits = v.boolean("fits");
  e.meets_slo = v.boolean("meets_slo");
  e.screened = v.boolean_or("screened", false);
  e.reason = v.string("reason");
  e.capacity_qps = v.number("capacity_qps");
  e.replicas = static_cast<int>(v.integer("replicas"));
  e.monthly_cost = v.number("monthly_cost");
  e.ttft_p95_ms = v.number("ttft_p95_ms");
  e.tpot_p95_ms = v.number("tpot_p95_ms");
  if (v.has("cost_per_mtok_output") && !v["cost_per_mtok_output"].json().is_null())
    e.cost_per_mtok_output = v.number("cost_per_mtok_output");
  if (v.has("quality_caveat")) e.quality_caveat = v.string("quality_caveat");
  if (v.has("slo_headroom_note")) e.slo_headroom_note = v.string("slo_headroom_note");
  return e;
}

Json to_json(const SearchResult& r) {
  auto member = [](const SearchFrontMember& m) {
    Json point = Json::object();
    for (const auto& [path, value] : m.candidate.point) point[path] = value;
    const auto& e = m.evaluation;
    return Json{{"name", m.candidate.name},
                {"point", point},
                {"gpus_per_replica", m.candidate.gpus_per_replica},
                {"replicas", e.replicas},
                {"num_gpus", e.replicas * m.candidate.gpus_per_replica},
                {"price_per_gpu_hour", m.candidate.price_per_gpu_hour},
                {"monthly_cost", e.monthly_cost},
                {"capacity_qps_per_replica", e.capacity_qps},
                {"ttft_p95_ms", e.ttft_p95_ms},
                {"tpot_p95_ms", e.tpot_p95_ms},
                {"cost_per_mtok_output", e.cost_per_mtok_output ? Json(*e.cost_per_mtok_output) : Json(nullptr)},
                {"monthly_lower_bound", m.candidate.monthly_lower_bound},
                {"quality_caveat", e.quality_caveat},
                {"slo_headroom_note", e.slo_headroom_note}};
  };
  Json front = Json::array();
  for (const auto& m : r.front) front.push_back(member(m));
  Json tied = Json::array();  // the names of the members tied with the winner (it included); empty without a tie
  for (std::size_t i : r.tied) tied.push_back(r.front[i].candidate.name);
  return Json{{"target_qps", r.target_qps},
              {"budget_per_month", r.budget_per_month ? Json(*r.budget_per_month) : Json(nullptr)},
              {"currency", r.currency},
              {"counts",
               {{"enumerated", r.enumerated},
                {"invalid", r.invalid},
                {"pruned_memory", r.pruned_memory},
                {"pruned_budget", r.pruned_budget},
                {"pruned_bound", r.pruned_bound},
                {"simulated", r.simulated},
                {"screened", r.screened},
                {"feasible", r.feasible},
                {"rechecked", r.rechecked}}},
              {"front", front},
              {"winner", r.winner ? member(r.front[*r.winner]) : Json(nullptr)},
              {"tied", tied},
              {"tie_note", r.tie_note},
              {"reasons", r.reasons}};
}

Json to_json(const std::vector<SearchAxis>& axes) {
  Json out = Json::array();
  for (const auto& a : axes) out.push_back(Json::array({a.path, a.values}));
  return out;
}

SearchOptions search_options_from_json(const JsonView& v) {
  v.allow_only({"target_qps", "budget_per_month", "axes", "jobs", "wave", "front_cost_ratio", "screen", "final_check"});
  SearchOptions o;
  o.target_qps = v.number_or("target_qps", 0);
  if (v.has("budget_per_month") && !v["budget_per_month"].json().is_null()) o.budget_per_month = v.number("budget_per_month");
  if (v.has("axes")) {  // [[path, [values]], ...] in enumeration order (an object would sort its keys)
    for (const auto& a : v["axes"].elements()) {
      const auto pair = a.elements();
      if (pair.size() != 2 || !pair[1].json().is_array()) a.fail("must be [path, [values]]");
      o.axes.push_back({pair[0].as_string(), std::vector<Json>(pair[1].json().begin(), pair[1].json().end())});
    }
  }
  o.jobs = static_cast<int>(v.integer_or("jobs", 1));
  o.wave = static_cast<int>(v.integer_or("wave", o.wave));
  o.front_cost_ratio = v.number_or("front_cost_ratio", o.front_cost_ratio);
  auto cap = [](const JsonView& c, CapacityOptions& x) {
    c.allow_only({"num_requests", "warmup_requests", "replications", "rel_tol"});
    x.num_requests = c.integer_or("num_requests", x.num_requests);
    if (c.has("warmup_requests")) x.warmup_requests = c.integer_or("warmup_requests", x.warmup());
    x.replications = static_cast<int>(c.integer_or("replications", x.replications));
    x.rel_tol = c.number_or("rel_tol", x.rel_tol);
  };
  if (v.has("screen")) cap(v["screen"], o.screen);
  if (v.has("final_check")) cap(v["final_check"], o.final_check);
  return o;
}

}  // namespace llmsim::analysis
