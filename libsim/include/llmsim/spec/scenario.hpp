#pragma once
// The one input: model, quantization, hardware, engine knobs, workload, SLO and cost extras.
// JSON form documented in the README and ../shared/DESIGN.md; unknown keys are rejected with the valid ones.
#include <optional>
#include <string>
#include <vector>

#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/autoscaler.hpp"
#include "llmsim/spec/deployment.hpp"
#include "llmsim/spec/disaggregation.hpp"
#include "llmsim/spec/failures.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/metrics.hpp"
#include "llmsim/spec/model_spec.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/slo.hpp"
#include "llmsim/spec/speculative.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::spec {

class Catalog;

/// Money beyond the GPUs, what the monthly bill and cold start assume, and what owning the cards costs.
struct CostSpec {
  double storage_per_month = 0;      ///< USD
  double network_per_month = 0;      ///< USD
  double ops_overhead_fraction = 0;  ///< added on top of GPU cost (e.g. 0.1 = +10%)
  double spare_fraction = 0;         ///< extra replicas kept for failover, as a fraction
  double hours_per_month = 730;
  double target_qps = 0;             ///< load the monthly bill is sized for (0 = the offered load)
  double network_gbps = 1.0;         ///< weight download speed for the cold-start estimate (Gbit/s)
  /// Labels every money figure (ISO 4217 code). The catalogue's prices are USD and no exchange rate is assumed, so
  /// with another currency every price used must be given (resolve() says which is missing).
  std::string currency = "USD";
  // Owned hardware (analysis/ownership.hpp): computed only when electricity_per_kwh is given.
  std::optional<double> electricity_per_kwh;  ///< energy price, currency per kWh
  double pue = 1.0;                  ///< facility power usage effectiveness (>= 1; 1 counts no cooling overhead)
  double depreciation_years = 3;     ///< purchase price spread straight-line over this many years
  double hosting_per_gpu_month = 0;  ///< rack space / colocation per GPU per month, currency
  void validate(const std::string& path = "cost") const;
};

struct Scenario {
  std::string name;                  ///< optional label
  std::string model = "llama-3.1-8b";  ///< catalogue id or path to a HF config.json
  std::string weights = kAutoWeights;  ///< quant.weights; "auto" = the checkpoint's quantization_config, else fp16
  std::string kv_cache = "fp16";     ///< quant.kv_cache ("auto" = fp16)
  Deployment hardware;
  EngineConfig engine;
  Workload workload;
  SloSpec slo;
  MetricsSpec metrics;               ///< extra percentiles to report (metrics.percentiles)
  CostSpec cost;
  std::optional<AutoscalerSpec> autoscaler;  ///< absent = a fixed fleet of hardware.replicas
  FailureSpec failures;              ///< empty = replicas never fail
  /// Separate prefill and decode pools joined by a KV link (docs/disaggregation.md); absent = colocated. When
  /// present the pools serve the load and `hardware` is not used.
  std::optional<DisaggregationSpec> disaggregation;
  void validate() const;             ///< all sections; one ConfigError with every problem
};

/// Parses a scenario object (defaults for everything omitted); ConfigError with dotted paths.
Scenario scenario_from_json(const JsonView& v);
/// Parses scenario text (file contents).
Scenario scenario_from_text(std::string_view text, const std::string& source);
Json to_json(const Scenario& s);     ///< round-trips through scenario_from_json

/// Sets a dotted path ("hardware.gpu", "workload.arrival.rate") in a scenario JSON object, creating
/// intermediate objects; ConfigError when the path is not a scenario field.
void set_json_path(Json& scenario, const std::string& dotted_path, const Json& value);
/// How a sweep grid axis, a search axis and a grid's per-point override apply a value (`--set` and Python's keyword
/// overrides replace, through set_json_path): an object value over a field that holds an object in `scenario` (a
/// section such as "engine", or "workload.arrival") is merged into it field by field, recursively — a field the value
/// gives replaces the base's, a field it gives as null is cleared (back to its default), a field it leaves out is
/// kept. A GPU spec ("gpu", "gpu_profile"), the model and arrays are values, replaced whole, as is any value that is
/// not an object. Each field goes through set_json_path (its schema check, vLLM's names, a counted GPU option's
/// split). ConfigError at the field when the value changes a variant's kind (workload.arrival.process,
/// input_tokens.dist, engine.speculative.method, synthetic_service.kind) and leaves base fields it does not name: a
/// merge cannot tell whether they carry over to the new kind (write them to keep them, null to clear them).
void merge_json_path(Json& scenario, const std::string& dotted_path, const Json& value);
/// The scenario fields merge_json_path(·, dotted_path, value) writes or clears: an object value's fields, recursively
/// (each as json_path_fields names it), else json_path_fields(dotted_path, value). What a sweep's --set and a
/// search's settings are checked against (an axis engine=[{"max_num_seqs": 64}] writes engine.max_num_seqs only).
std::vector<std::string> merged_json_fields(const std::string& dotted_path, const Json& value);
/// The scenario fields set_json_path(·, dotted_path, value) writes: the path itself, or for a vLLM name
/// ("max_num_seqs", "engine.tensor_parallel_size") the llmsim fields it stands for. ConfigError for an empty component.
std::vector<std::string> json_path_fields(const std::string& dotted_path, const Json& value);
/// The scenario sections `doc` has at its top level (model, hardware, workload, ...; not `name`, which a grid file
/// has too): what a reader expecting another document (a sweep's grid) names to say it was given a scenario.
std::vector<std::string> scenario_sections_in(const Json& doc);
/// The one rule for hardware's card fields (gpu, tp, pp, replicas, price_per_gpu_hour, ...) on a scenario whose
/// cards are elsewhere (disaggregation pools, hardware.fleet), where they would change nothing: ConfigError at
/// `where` saying where the cards are. set_json_path, analysis::set_gpu and the CLI's --gpu/--price share it.
void refuse_hardware_card_field(const std::string& field, bool disaggregated, bool fleet, const std::string& where);

/// A scenario with its ids looked up: the model, GPU and quantization as value types.
struct ResolvedScenario {
  Scenario scenario;
  ModelSpec model;
  GpuSpec gpu;
  Quantization quant;
  double price_per_gpu_hour = 0;     ///< scenario override or catalogue placeholder
  bool price_is_placeholder = true;  ///< the catalogue's rough market figure, not a price the user gave
  /// Price of one card: hardware.purchase_price_per_gpu, else the catalogue's; nullopt when neither is known.
  std::optional<double> purchase_price_per_gpu;
  bool purchase_price_is_placeholder = true;
  std::string interconnect;          ///< what one replica's GPUs talk over (spec::interconnect); "" for one GPU
  /// The context the engine runs: engine.max_model_len as set, else (auto) default_max_model_len until
  /// memory::fit_context lowers it to the largest whose KV fits (what the simulator runs).
  int max_model_len = 0;
  bool max_model_len_auto = false;   ///< engine.max_model_len unset or "auto"
  int max_model_len_wanted = 0;      ///< what auto aims for: default_max_model_len (0 when set by the user)
  /// What resolving assumed that the user should know: the model's own notes (hf_config) and a quant.weights that
  /// overrides the checkpoint's quantization_config.
  std::vector<std::string> notes;
  /// Why resolving turned prefix caching off (a vLLM release before hybrid prefix caching on a hybrid model:
  /// spec::vllm_release_without_hybrid_prefix_caching), also in `notes`; the run warns it. "" otherwise.
  std::string prefix_caching_off;
  /// engine.speculative resolved: its proposer model and acceptance rate (absent = no speculative decoding).
  std::optional<ResolvedSpeculation> speculation;
  /// With scenario.disaggregation: the prefill pool [0] and the decode pool [1], each resolved by resolve_pool()
  /// (the scenario on that pool's hardware and engine); empty otherwise.
  std::vector<ResolvedScenario> disagg_pools;
  /// A heterogeneous fleet's members, each resolved on its own (spec/fleet.hpp); empty for hardware.gpu ×
  /// hardware.replicas. With a fleet, model/gpu/quant/engine above are the first member's and
  /// price_per_gpu_hour the GPU-weighted mean over the members.
  std::vector<ResolvedScenario> fleet;
};

/// GPUs of the whole deployment: tp × pp × replicas, or summed over a fleet's members.
int total_gpus(const ResolvedScenario& s);

/// The context limit when engine.max_model_len is 0: the model's limit, capped at max_num_batched_tokens
/// unless prefill is chunked (without chunking a whole prompt must fit one iteration's token budget).
int default_max_model_len(const ModelSpec& m, const EngineConfig& e);

/// Looks up model/GPU/quant in `catalog` (or loads the files named), validates everything, checks
/// cross-field rules (tp divides heads, lengths within max_model_len, ...). A GPU option's count becomes the
/// resolved hardware.parallel (hardware.gpu keeps the text, so resolving again gives the same result), "+nvlink"
/// the resolved GPU's NVLink bandwidth. With a cost.currency other than USD, a catalogue price (USD) cannot be
/// used: hardware.price_per_gpu_hour must be given. Throws ConfigError.
ResolvedScenario resolve(const Scenario& s, const Catalog& catalog);

/// resolve for the commands that bill nothing (`llmsim memory`, `llmsim step` and Python's memory() / step()): a GPU
/// spec without a price, or a catalogue price in another currency, is no problem there. With no
/// hardware.price_per_gpu_hour the hourly price is taken as 0; nothing these commands print reads it.
ResolvedScenario resolve_unbilled(Scenario s, const Catalog& catalog);

}  // namespace llmsim::spec
