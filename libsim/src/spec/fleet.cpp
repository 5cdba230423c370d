#include "llmsim/spec/fleet.hpp"

#include "llmsim/core/error.hpp"
#include "llmsim/spec/pool.hpp"

namespace llmsim::spec {

ResolvedScenario resolve_fleet(const Scenario& s, const Catalog& catalog) {
  Problems p;
  if (s.hardware.fleet.empty()) p.add("hardware.fleet", "must name at least one pool");
  if (s.autoscaler) p.add("autoscaler", "cannot scale a heterogeneous fleet (hardware.fleet): not modelled");
  if (!s.failures.empty() || s.failures.spares > 0)
    p.add("failures", "replica failures of a heterogeneous fleet (hardware.fleet) are not modelled. To size spares, "
                      "simulate each pool alone with these failures (its gpu, tp and replicas under hardware), add "
                      "the spares it needs to hardware.fleet[i].replicas, and run the fleet without failures");
  if (s.engine.synthetic_service) p.add("engine.synthetic_service", "has no replicas to form a fleet (hardware.fleet)");
  p.throw_if_any();
  Scenario base = s;
  base.hardware = Deployment{};
  std::vector<ResolvedScenario> members;
  for (std::size_t i = 0; i < s.hardware.fleet.size(); ++i) {
    const auto& m = s.hardware.fleet[i];
    const std::string at = "hardware.fleet[" + std::to_string(i) + "]";
    try {
      members.push_back(resolve_pool(base, m.hardware, m.engine ? &*m.engine : nullptr, catalog));
    } catch (const ConfigError& e) {
      // The member's own fields by their place in the file ("hardware.gpu: unknown GPU ..." is
      // "hardware.fleet[1].gpu: ..."); other problems under the member's name.
      const std::string hw = "hardware.";
      for (const auto& x : e.problems())
        x.compare(0, hw.size(), hw) == 0 ? p.add("", at + "." + x.substr(hw.size())) : p.add(at, x);
    }
  }
  // Sessions and prompt pools key each engine block of a request once, and a shared prefix is counted in blocks,
  // at the first pool's block size (the workload's): a member with other blocks would look up keys of another size
  // (an internal check failed) or share a prefix of another length (hits overstated).
  bool shared_prefix = false;
  for (const auto& c : s.workload.effective_classes()) shared_prefix = shared_prefix || (c.prefix_tokens > 0 && c.prefix_groups > 0);
  const std::string keyed = s.workload.sessions      ? "sessions"
                            : s.workload.prompt_pool ? "a prompt pool"
                            : shared_prefix          ? "a shared prefix (prefix_tokens)"
                                                     : "";
  if (!keyed.empty())
    for (std::size_t i = 1; i < members.size(); ++i)
      if (members[i].scenario.engine.block_size != members.front().scenario.engine.block_size)
        p.add("hardware.fleet[" + std::to_string(i) + "].engine.block_size",
              "a fleet serving " + keyed + " needs one block size in every pool (hardware.fleet[0] has " +
                  std::to_string(members.front().scenario.engine.block_size) + "): not modelled, got " +
                  std::to_string(members[i].scenario.engine.block_size));
  p.throw_if_any();
  ResolvedScenario r = members.front();
  r.scenario.hardware = s.hardware;
  double rent = 0;
  int gpus = 0;
  r.price_is_placeholder = false;
  for (const auto& m : members) {
    rent += m.price_per_gpu_hour * m.scenario.hardware.gpus_total();
    gpus += m.scenario.hardware.gpus_total();
    r.price_is_placeholder = r.price_is_placeholder || m.price_is_placeholder;
    // A fleet's resolved members are its hardware as run (counts from "2x…" options applied).
    r.scenario.hardware.fleet[static_cast<std::size_t>(&m - members.data())].hardware = m.scenario.hardware;
  }
  r.price_per_gpu_hour = rent / gpus;
  r.purchase_price_per_gpu.reset();  // no one card price: owning is priced per member (analysis/row.cpp)
  r.fleet = std::move(members);
  return r;
}

int total_gpus(const ResolvedScenario& s) {
  // A heterogeneous fleet's members, or a disaggregated deployment's prefill and decode pools.
  const auto& parts = !s.fleet.empty() ? s.fleet : s.disagg_pools;
  if (parts.empty()) return s.scenario.hardware.gpus_total();
  int n = 0;
  for (const auto& m : parts) n += m.scenario.hardware.gpus_total();
  return n;
}

}  // namespace llmsim::spec
