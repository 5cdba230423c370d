#pragma once
// Speculative decoding (docs/speculative-decoding.md): JSON `engine.speculative` ({"method", "draft_model",
// "num_speculative_tokens"}, vLLM's speculative_config names) and `workload.speculative_acceptance_rate`.
#include <optional>
#include <string>

#include "llmsim/spec/model_spec.hpp"

namespace llmsim::spec {

class Catalog;

enum class SpeculativeMethod {
  draft,  ///< "draft": a smaller model of the same vocabulary proposes k tokens (Leviathan et al. 2023)
  ngram,  ///< "ngram": prompt lookup on the CPU, no GPU work and no weights (vLLM's NgramProposer)
  eagle,  ///< "eagle": a one-layer head on the target's hidden states, sharing its embedding and LM head
  mtp,    ///< "mtp": the checkpoint's own multi-token-prediction module (DeepSeek-V3 num_nextn_predict_layers)
};
std::string to_string(SpeculativeMethod m);  ///< "draft" | "ngram" | "eagle" | "mtp"
/// ConfigError at `path` listing the valid names.
SpeculativeMethod parse_speculative_method(const std::string& s, const std::string& path);

struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::eagle;
  std::string draft_model;         ///< method draft only: catalogue id or HF config.json path
  int num_speculative_tokens = 1;  ///< k: tokens proposed (and verified) per sequence per step, 1..32
  /// Method rules on their own (k range, draft_model given iff method draft); ConfigError with every problem.
  void validate(const std::string& path = "engine.speculative") const;
};

/// Acceptance probability per proposed token when workload.speculative_acceptance_rate is omitted: eagle 0.8
/// (EAGLE, Li et al. 2024), mtp 0.85 (DeepSeek-V3 report §5.4.3), draft 0.6 (Leviathan et al. 2023, Table 3);
/// nullopt for ngram, whose acceptance is the workload's repetition (the user must give it).
std::optional<double> default_acceptance_rate(SpeculativeMethod m);

/// Expected tokens one sequence emits per verification step when each of k proposals is accepted with
/// probability `alpha` until the first rejection, plus the target's own token: (1 − α^{k+1}) / (1 − α)
/// (Leviathan et al. 2023, eq. 1); k + 1 at α = 1.
double expected_tokens_per_step(double alpha, int k);

/// Speculation as resolved against the target model.
struct ResolvedSpeculation {
  SpeculativeConfig config;
  double acceptance_rate = 0;        ///< workload's, else the method's default
  bool acceptance_is_default = true;
  double expected_tokens = 1;        ///< expected_tokens_per_step(acceptance_rate, k)
  /// What runs on the GPU to propose: the draft model, or a one-layer model of the target's shape (EAGLE head,
  /// MTP module) whose LM head is the target's. Absent for ngram.
  std::optional<ModelSpec> proposer;
  /// Parameters the proposer adds to GPU memory (the draft model whole; the EAGLE/MTP layer and its 2h→h
  /// projection: embedding and LM head are shared with the target). 0 for ngram.
  std::int64_t proposer_params = 0;
  bool proposer_shares_target_format = false;  ///< MTP: stored in the target's weight format; others 16-bit
};

/// Resolves `cfg` for `target`: loads the draft model (catalogue id or path) and checks it is smaller than the
/// target and shares its vocabulary; MTP needs a model with MTP layers. `acceptance` is
/// workload.speculative_acceptance_rate. ConfigError naming engine.speculative.* / workload.speculative_acceptance_rate.
ResolvedSpeculation resolve_speculation(const SpeculativeConfig& cfg, std::optional<double> acceptance,
                                        const ModelSpec& target, const Catalog& catalog);

}  // namespace llmsim::spec
