#include "llmsim/spec/disaggregation.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "scenario_json.hpp"

namespace llmsim::spec {

namespace {

struct KindName {
  LinkKind kind;
  const char* name;
  double latency_us;  // default, docs/disaggregation.md "Link latency"
};
// Latencies: one small message on the fabric. NVLink and PCIe P2P: NCCL's intra-node latency of a few µs
// (nccl-tests); PCIe without P2P stages through pinned host memory (two copies, ~10 µs); InfiniBand: ib_write_lat
// ~2-5 µs; Ethernet: RoCE/TCP round trips of tens of µs.
constexpr KindName kKinds[] = {{LinkKind::nvlink, "nvlink", 5},
                               {LinkKind::pcie, "pcie", 5},
                               {LinkKind::pcie_no_p2p, "pcie-no-p2p", 10},
                               {LinkKind::ethernet, "ethernet", 20},
                               {LinkKind::infiniband, "infiniband", 5}};

std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (const auto& k : kKinds) out.emplace_back(k.name);
  return out;
}

PoolSpec read_pool(const JsonView& v) {
  v.expect_object();
  std::vector<std::string> keys = detail::kHardwareKeys;
  keys.emplace_back("engine");
  v.allow_only(keys);
  Json hw = v.json();
  hw.erase("engine");
  PoolSpec p;
  p.hardware = detail::read_hardware(JsonView(hw, v.path()));
  if (v.has("engine") && !v["engine"].json().is_null()) {
    const JsonView e = v["engine"];
    e.expect_object();
    e.allow_only(detail::kEngineKeys);
    p.engine = e.json();
  }
  return p;
}

Json pool_json(const PoolSpec& p) {
  Json j = detail::hardware_json(p.hardware);
  if (!p.engine.is_null()) j["engine"] = p.engine;
  return j;
}

}  // namespace

std::string to_string(LinkKind k) {
  for (const auto& x : kKinds)
    if (x.kind == k) return x.name;
  return "?";
}

LinkKind parse_link_kind(const std::string& s, const std::string& path) {
  for (const auto& x : kKinds)
    if (s == x.name) return x.kind;
  throw ConfigError(path, unknown_name_message("link kind", s, kind_names()));
}

std::string to_string(KvTransferMode m) { return m == KvTransferMode::layerwise ? "layerwise" : "after_prefill"; }

double default_latency_us(LinkKind k) {
  for (const auto& x : kKinds)
    if (x.kind == k) return x.latency_us;
  return 0;
}

double KvLink::latency_s() const { return latency_us.value_or(default_latency_us(kind)) * 1e-6; }

const std::vector<std::string>& disaggregation_keys() {
  static const std::vector<std::string> k{"prefill", "decode", "link", "transfer"};
  return k;
}

const std::vector<std::string>& link_keys() {
  static const std::vector<std::string> k{"kind", "bandwidth_gbps", "latency_us", "shared"};
  return k;
}

void DisaggregationSpec::validate(const std::string& path) const {
  Problems p;
  auto collect = [&](auto&& fn) { p.collect(fn); };
  collect([&] { prefill.hardware.validate(path + ".prefill"); });
  collect([&] { decode.hardware.validate(path + ".decode"); });
  // 1e6 Gbit/s is ~100x NVLink 5; anything above is an input error, as is a link that moves (almost) nothing:
  // below 1 Mbit/s one request's KV takes hours and the run only measures the link.
  if (!(link.bandwidth_gbps >= 1e-3) || !std::isfinite(link.bandwidth_gbps) || link.bandwidth_gbps > 1e6)
    p.add(path + ".link.bandwidth_gbps", "must be in [0.001, 1e6] Gbit/s (the rate one prefill replica sends KV at), got " +
                                             format_value(link.bandwidth_gbps));
  if (link.latency_us && (!(*link.latency_us >= 0) || *link.latency_us > 1e9))
    p.add(path + ".link.latency_us", "must be in [0, 1e9] µs, got " + format_given(*link.latency_us));
  p.throw_if_any();
}

DisaggregationSpec disaggregation_from_json(const JsonView& v) {
  v.expect_object();
  v.allow_only(disaggregation_keys());
  DisaggregationSpec d;
  d.prefill = read_pool(v["prefill"]);
  d.decode = read_pool(v["decode"]);
  const JsonView l = v["link"];
  l.expect_object();
  l.allow_only(link_keys());
  if (l.has("kind")) d.link.kind = parse_link_kind(l.string("kind"), l.child_path("kind"));
  if (!l.has("bandwidth_gbps") || l["bandwidth_gbps"].json().is_null())
    throw ConfigError(l.child_path("bandwidth_gbps"),
                      "missing: the link's bandwidth in Gbit/s (e.g. 100 for 100 Gb Ethernet; measure it with "
                      "nccl-tests or nixlbench)");
  d.link.bandwidth_gbps = l.number("bandwidth_gbps");
  if (l.has("latency_us") && !l["latency_us"].json().is_null()) d.link.latency_us = l.number("latency_us");
  if (l.has("shared")) d.link.shared = l.boolean("shared");
  if (v.has("transfer")) {
    const std::string t = v.string("transfer");
    if (t == "after_prefill") d.transfer = KvTransferMode::after_prefill;
    else if (t == "layerwise") d.transfer = KvTransferMode::layerwise;
    else throw ConfigError(v.child_path("transfer"), unknown_name_message("transfer mode", t, {"after_prefill", "layerwise"}));
  }
  d.validate(v.path());
  return d;
}

Json to_json(const DisaggregationSpec& d) {
  Json link{{"kind", to_string(d.link.kind)}, {"bandwidth_gbps", d.link.bandwidth_gbps}};
  if (d.link.latency_us) link["latency_us"] = *d.link.latency_us;
  if (d.link.shared) link["shared"] = true;
  return Json{{"prefill", pool_json(d.prefill)},
              {"decode", pool_json(d.decode)},
              {"link", link},
              {"transfer", to_string(d.transfer)}};
}

}  // namespace llmsim::spec
