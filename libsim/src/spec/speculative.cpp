// Speculative decoding's configuration and its resolution against the target model
// (docs/speculative-decoding.md has the mechanism and the sources of the default acceptance rates).
#include "llmsim/spec/speculative.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/catalog.hpp"

namespace llmsim::spec {

namespace {
constexpr SpeculativeMethod kMethods[] = {SpeculativeMethod::draft, SpeculativeMethod::ngram, SpeculativeMethod::eagle,
                                          SpeculativeMethod::mtp};
constexpr int kMaxSpeculativeTokens = 32;

/// One decoder layer of the target's shape (EAGLE's head, DeepSeek's MTP module): the target's widths, vocabulary
/// and context; `moe` keeps the target's experts (an MTP layer is a layer of the target's kind).
ModelSpec one_layer_of(const ModelSpec& target, bool moe, const std::string& id) {
  ModelSpec m = target;
  m.id = id;
  m.num_layers = 1;
  m.sliding_layers = 0;
  m.sliding_window = 0;
  m.full_head_dim = 0;  // Gemma-4's full-layer shape: the layer keeps the target's head_dim and KV heads
  m.full_kv_heads = 0;
  m.full_k_eq_v = false;
  m.mtp_layers = 0;
  m.mtp_params = 0;
  m.vision_params = 0;
  m.audio_params = 0;
  m.per_layer_input_size = 0;  // Gemma-4 E2B/E4B: no PLE, no KV sharing, no double-wide MLP in the draft layer
  m.per_layer_input_vocab = 0;
  m.kv_shared_layers = 0;
  m.kv_shared_full_layers = 0;
  m.double_wide_mlp_layers = 0;
  m.notes.clear();
  m.source = Json();
  if (moe && target.is_moe()) {
    m.dense_layers = 0;
  } else {
    m.num_experts = 0;
    m.experts_per_token = 0;
    m.shared_expert_intermediate_size = 0;
    m.dense_layers = 0;
  }
  return m;
}
}  // namespace

std::string to_string(SpeculativeMethod m) {
  switch (m) {
    case SpeculativeMethod::draft: return "draft";
    case SpeculativeMethod::ngram: return "ngram";
    case SpeculativeMethod::eagle: return "eagle";
    case SpeculativeMethod::mtp: return "mtp";
  }
  throw InternalError("unknown SpeculativeMethod " + std::to_string(static_cast<int>(m)));
}

SpeculativeMethod parse_speculative_method(const std::string& s, const std::string& path) {
  for (auto m : kMethods)
    if (s == to_string(m)) return m;
  throw ConfigError(path, unknown_name_message("speculative method", s, {"draft", "ngram", "eagle", "mtp"}));
}

void SpeculativeConfig::validate(const std::string& path) const {
  Problems p;
  if (num_speculative_tokens < 1 || num_speculative_tokens > kMaxSpeculativeTokens)
    p.add(path + ".num_speculative_tokens", "must be in 1.." + std::to_string(kMaxSpeculativeTokens) + ", got " +
                                                std::to_string(num_speculative_tokens));
  if (method == SpeculativeMethod::draft && draft_model.empty())
    p.add(path + ".draft_model", "method 'draft' needs a draft model (catalogue id or HF config.json path)");
  if (method != SpeculativeMethod::draft && !draft_model.empty())
    p.add(path + ".draft_model", "only method 'draft' takes a draft model; method '" + to_string(method) +
                                     "' proposes without one, got '" + draft_model + "'");
  p.throw_if_any();
}

std::optional<double> default_acceptance_rate(SpeculativeMethod m) {
  switch (m) {
    case SpeculativeMethod::eagle: return 0.8;   // EAGLE (Li et al., ICML 2024): ~0.8 per drafted token, MT-bench
    case SpeculativeMethod::mtp: return 0.85;    // DeepSeek-V3 report §5.4.3: 85-90% for the second token
    case SpeculativeMethod::draft: return 0.6;   // Leviathan et al. 2023 Table 3: alpha ~0.5-0.8 for small drafts
    case SpeculativeMethod::ngram: return std::nullopt;  // the workload's own repetition decides
  }
  return std::nullopt;
}

double expected_tokens_per_step(double alpha, int k) {
  if (alpha >= 1.0) return k + 1.0;
  return (1.0 - std::pow(alpha, k + 1)) / (1.0 - alpha);
}

ResolvedSpeculation resolve_speculation(const SpeculativeConfig& cfg, std::optional<double> acceptance,
                                        const ModelSpec& target, const Catalog& catalog) {
  cfg.validate("engine.speculative");
  Problems p;
  ResolvedSpeculation r;
  r.config = cfg;
  const std::string apath = "workload.speculative_acceptance_rate";
  if (acceptance) {
    if (!(*acceptance >= 0 && *acceptance <= 1))
      p.add(apath, "must be a probability in [0, 1], got " + format_given(*acceptance));
    r.acceptance_rate = *acceptance;
    r.acceptance_is_default = false;
  } else if (auto d = default_acceptance_rate(cfg.method)) {
    r.acceptance_rate = *d;
  } else {
    p.add(apath, "method '" + to_string(cfg.method) + "' has no default: n-gram acceptance is the repetition in "
                 "your own outputs (code edits, RAG quotes: high; open chat: low); give it");
  }
  const double h = target.hidden_size;
  switch (cfg.method) {
    case SpeculativeMethod::draft: {
      ModelSpec d;
      try {
        d = catalog.model(cfg.draft_model, "engine.speculative.draft_model");
      } catch (const ConfigError& e) {
        for (const auto& x : e.problems()) p.add("", x);
        p.throw_if_any();
      }
      if (d.param_count() >= target.param_count())
        p.add("engine.speculative.draft_model",
              "draft model '" + d.id + "' (" + format_value(d.param_count() / 1e9) + " B parameters) must be smaller than the "
              "target '" + target.id + "' (" + format_value(target.param_count() / 1e9) + " B)");
      if (d.vocab_size != target.vocab_size)
        p.add("engine.speculative.draft_model", "draft model '" + d.id + "' has vocab_size " +
                                                    std::to_string(d.vocab_size) + " but the target '" + target.id +
                                                    "' has " + std::to_string(target.vocab_size) +
                                                    "; a draft must share the target's tokenizer");
      r.proposer_params = d.param_count();
      r.proposer = std::move(d);
      break;
    }
    case SpeculativeMethod::ngram: break;
    case SpeculativeMethod::eagle: {
      // EAGLE's draft: one LlamaDecoderLayer + fc (2h -> h) over [embedding; target hidden state]; the embedding
      // and LM head are the target's (vllm/model_executor/models/llama_eagle.py).
      r.proposer = one_layer_of(target, false, target.id + ":eagle-head");
      const auto& m = *r.proposer;
      r.proposer_params = m.attention_params_per_layer() + m.dense_mlp_params() + m.norm_params_per_layer() +
                          static_cast<std::int64_t>(2 * h * h);
      break;
    }
    case SpeculativeMethod::mtp: {
      if (target.mtp_layers < 1) {
        p.add("engine.speculative.method", "method 'mtp' needs a model with multi-token-prediction layers "
                                           "(num_nextn_predict_layers > 0); '" + target.id + "' has none");
        break;
      }
      // DeepSeek's MTP module: one layer of the model's own kind (MoE for V3) + eh_proj (2h -> h) and its norms;
      // embedding and output head shared with the main model (DeepSeek-V3 report §2.2).
      r.proposer = one_layer_of(target, true, target.id + ":mtp");
      const auto& m = *r.proposer;
      r.proposer_params = m.attention_params_per_layer() + m.mlp_params_per_layer() + m.norm_params_per_layer() +
                          static_cast<std::int64_t>(2 * h * h);
      r.proposer_shares_target_format = true;
      break;
    }
  }
  p.throw_if_any();
  r.expected_tokens = expected_tokens_per_step(r.acceptance_rate, cfg.num_speculative_tokens);
  return r;
}

}  // namespace llmsim::spec
