#pragma once
// How a model is deployed: which GPU, how many, tensor/pipeline parallel, replicas, price.
#include <optional>
#include <string>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"

namespace llmsim::spec {

struct ParallelConfig {
  int tp = 1;  ///< tensor_parallel_size
  int pp = 1;  ///< pipeline_parallel_size
  /// Whether the user wrote tp / pp (a scenario's hardware.tp, --tp, --set, -tp in --vllm-args, Python's tp=), so
  /// an explicit 1 is told from the default: split_for() holds a given 1 against a "2x…" GPU option (issue 29).
  bool tp_given = false;
  bool pp_given = false;
  /// vLLM's VLLM_PP_LAYER_PARTITION ("18,17": the layers of each pipeline stage, first to last; JSON
  /// "hardware.pp_layer_partition", or the variable itself in a scenario or before `vllm serve` in --vllm-args).
  /// Empty = vLLM's default split (pp_stage_layers). spec::resolve checks it against the model: pp entries, each > 0,
  /// summing to num_layers (vllm/distributed/utils.py get_pp_indices raises on the count and the sum).
  std::vector<int> layer_partition{};
  int gpus() const noexcept { return tp * pp; }
};

/// The layers of each pipeline stage, first to last, as vLLM splits `num_layers` over `pp` stages
/// (vllm/distributed/utils.py get_pp_indices, VLLM_PP_LAYER_PARTITION unset): num_layers / pp each, and the
/// remainder one more each to the stages before the last, from the second-to-last backwards (the last stage also runs
/// the final norm and the LM head): 35 layers over 2 stages are [18, 17], 22 over 4 [5, 6, 6, 5]. The engine prices
/// each stage's share of an iteration by its layers (the slowest stage paces the pipeline) and the memory plan sizes
/// the largest stage. pp < 1 reads as 1; a stage may be empty when pp > num_layers (the cost model refuses that).
std::vector<int> pp_stage_layers(int num_layers, int pp);
/// The layers of each stage as the deployment runs them: its layer_partition when it has one entry per stage
/// (VLLM_PP_LAYER_PARTITION), else vLLM's default split above.
std::vector<int> pp_stage_layers(int num_layers, const ParallelConfig& parallel);
/// The layers of the largest stage of pp_stage_layers (num_layers / pp rounded up).
int largest_pp_stage(int num_layers, int pp);
/// The layers of the largest stage of the deployment's split (its layer_partition, if any).
int largest_pp_stage(int num_layers, const ParallelConfig& parallel);
/// VLLM_PP_LAYER_PARTITION's text ("18,17", spaces allowed) as layer counts; ConfigError at `path` naming the text
/// when an entry is not an integer (vLLM: "Invalid partition string").
std::vector<int> parse_layer_partition(const std::string& text, const std::string& path);
/// Problems of a layer partition against the model (at `path`): not one entry per stage, an entry < 1, or a sum other
/// than num_layers. Nothing for an empty partition.
void check_layer_partition(const std::vector<int>& partition, int pp, int num_layers, const std::string& path,
                           Problems& problems);

/// How a request picks a deployment replica. The speed-aware ones (weighted_least_outstanding,
/// shortest_expected_delay) matter in a heterogeneous fleet (hardware.fleet); with equal replicas
/// weighted_least_outstanding is least_outstanding. See docs/fleets.md.
/// session_affinity: a session's turns stick to the replica of its previous turn (least_outstanding picks the first
/// one and every request that is not a session turn); a turn falls back to least_outstanding, and the session moves
/// there, when its replica is not ready (failed, stopped) or holds max_num_seqs or more unfinished requests per
/// engine while another ready replica holds fewer (engine/router.hpp).
/// power_of_two: two distinct ready replicas drawn at random (the scenario seed's "router" stream), the one with
/// fewer unfinished requests taken (the first drawn on a tie) — Ray Serve's default request router
/// (PowerOfTwoChoicesRequestRouter; Mitzenmacher 2001). Unlike least_outstanding it is random, so equal closed-loop
/// clients do not stay in lockstep across replicas.
enum class RouterPolicy { round_robin, least_outstanding, least_kv, weighted_least_outstanding, shortest_expected_delay,
                          session_affinity, power_of_two };
std::string to_string(RouterPolicy r);
RouterPolicy parse_router(const std::string& s, const std::string& path = "hardware.router");

struct FleetMember;

struct Deployment {
  /// A GPU option (spec/gpu_option.hpp): catalogue id, "<id>:mig-…" or path to a GPU spec file, with an optional
  /// count and split ("2xrtx4090-24gb", "2xrtx4090-24gb@pp", "2xa100-80gb-pcie+nvlink"); resolve() turns the count
  /// into tp × pp.
  std::string gpu = "a100-80gb-sxm";
  std::string gpu_profile;                ///< optional calibrated HardwareProfile file ("" = default profile)
  ParallelConfig parallel;
  int replicas = 1;
  RouterPolicy router = RouterPolicy::least_outstanding;
  std::optional<double> price_per_gpu_hour;      ///< overrides the catalogue placeholder (in cost.currency)
  std::optional<double> purchase_price_per_gpu;  ///< to buy one card (cost.currency); overrides the catalogue's
  /// GPUs of the deployment as written; resolve() may raise tp × pp from a count prefix ("2x…"), so use the
  /// resolved scenario's value.
  int gpus_total() const noexcept { return parallel.gpus() * replicas; }
  /// A heterogeneous fleet (JSON "hardware": {"fleet": [<pool>, ...], "router": ...}): each member is a pool of
  /// replicas of its own card type and layout; empty = `gpu` × `replicas` as above. With a fleet, the other keys
  /// of this section (gpu, tp, ...) are not given: they belong to the members.
  std::vector<FleetMember> fleet;
  void validate(const std::string& path = "hardware") const;
};

/// One pool of a fleet: written exactly like the hardware section (without fleet/router), plus an optional
/// `engine` object merged onto the scenario's engine section (RFC 7386 merge patch) for this pool only.
struct FleetMember {
  Deployment hardware;
  std::optional<Json> engine;
};

}  // namespace llmsim::spec
