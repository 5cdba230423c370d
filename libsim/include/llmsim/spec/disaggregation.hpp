#pragma once
// Disaggregated prefill/decode (docs/disaggregation.md): the scenario's top-level "disaggregation" section. A
// prefill pool computes each prompt, the request's KV cache crosses a link to a decode pool, which generates the
// output. Absent = colocated (every replica runs both phases, as `hardware` says).
//
//   "disaggregation": {"prefill": <pool>, "decode": <pool>,
//                      "link": {"kind": "ethernet", "bandwidth_gbps": 100, "latency_us": 20},
//                      "transfer": "after_prefill" | "layerwise"}
//
// A pool is written like `hardware` (gpu option, tp, pp, replicas, router, prices) plus an optional "engine" object
// merged onto the scenario's engine (spec/pool.hpp).
#include <optional>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/deployment.hpp"

namespace llmsim::spec {

/// What carries the KV cache from a prefill to a decode replica. The kind sets the default latency and labels the
/// output; the bandwidth is always the user's (there is no honest default between 25 Gb Ethernet and NVLink).
enum class LinkKind { nvlink, pcie, pcie_no_p2p, ethernet, infiniband };
std::string to_string(LinkKind k);
LinkKind parse_link_kind(const std::string& s, const std::string& path);

/// after_prefill: the KV moves once the prompt is computed (vLLM's NixlConnector reads the finished blocks);
/// layerwise: each layer's KV is sent as soon as that layer is computed, overlapping the prefill (Splitwise,
/// Mooncake, LMCache's layerwise mode), so only the last layer's share and the latency remain after it.
enum class KvTransferMode { after_prefill, layerwise };
std::string to_string(KvTransferMode m);

struct KvLink {
  LinkKind kind = LinkKind::ethernet;
  double bandwidth_gbps = 0;          ///< Gbit/s one prefill replica can send at (required, > 0)
  std::optional<double> latency_us;   ///< per transfer; absent = default_latency_us(kind)
  /// false: each prefill replica has its own link at bandwidth_gbps (a NIC per node); true: all prefill replicas
  /// share one link at bandwidth_gbps (one NIC or uplink), their transfers queued on it first come first served.
  bool shared = false;
  double latency_s() const;
  double bytes_per_s() const noexcept { return bandwidth_gbps * 1e9 / 8; }
};

/// Per-transfer latency assumed when latency_us is not given (µs): an order of magnitude of one message on that
/// fabric (docs/disaggregation.md lists the sources), not the request's control path through a proxy.
double default_latency_us(LinkKind k);

/// One pool: its deployment and its engine overrides (a JSON merge patch onto the scenario's engine; null = none).
struct PoolSpec {
  Deployment hardware;
  Json engine;
};

struct DisaggregationSpec {
  PoolSpec prefill, decode;
  KvLink link;
  KvTransferMode transfer = KvTransferMode::after_prefill;
  /// ConfigError naming every problem under `path` ("disaggregation.link.bandwidth_gbps: must be > 0 Gbit/s").
  void validate(const std::string& path = "disaggregation") const;
};

/// Field names, for the parser, the writer and set_json_path.
const std::vector<std::string>& disaggregation_keys();
const std::vector<std::string>& link_keys();

DisaggregationSpec disaggregation_from_json(const JsonView& v);
Json to_json(const DisaggregationSpec& d);

}  // namespace llmsim::spec
