// Reading a Hugging Face config.json into a ModelSpec, family by family. Each family has an allow-list of the keys
// llmsim understands; any other key — one that may change the model's size in a way llmsim does not know — and any
// other architecture is a ConfigError naming it, never a silently wrong size. Layer layouts follow vLLM's model code
// (vllm/model_executor/models/*.py, cited per family); docs/cost-model.md, "Model families", has the table.
#include <algorithm>
#include <cmath>
#include <set>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/model_spec.hpp"
#include "llmsim/spec/quantization.hpp"
#include "hf_config_families.hpp"
#include "hf_config_parts.hpp"

namespace llmsim::spec {

namespace {
using i64 = std::int64_t;
using namespace hf;

struct Reader {
  const JsonView& v;
  const Family* f;
  ModelSpec& m;
  bool nested_defaults = false;  // gemma3_text inside gemma3: transformers wrote only what differs from its defaults

  int key(std::string_view k, int gemma3_default) { return size_key(v, k, nested_defaults ? gemma3_default : 0); }

  void text_decoder() {
    m.hidden_size = key("hidden_size", 2304);
    m.num_layers = key("num_hidden_layers", 26);
    m.num_heads = key("num_attention_heads", 8);
    // Gemma4TextConfig's class defaults (num_key_value_heads 4, head_dim 256) fill what a gemma4_text config omits,
    // not Llama's num_attention_heads and hidden_size / heads.
    const bool gemma4 = f && f->kind == Kind::gemma4_text;
    const bool has_kv = v.has("num_key_value_heads") && !v.json().at("num_key_value_heads").is_null();
    m.num_kv_heads = has_kv ? read_positive_int(v, "num_key_value_heads") : (nested_defaults || gemma4 ? 4 : m.num_heads);
    if (gemma4 && !has_kv) m.notes.push_back("num_key_value_heads absent: Gemma4TextConfig's default 4");
    if (v.has("head_dim") && !v.json().at("head_dim").is_null()) {
      m.head_dim = read_positive_int(v, "head_dim");
    } else if (nested_defaults || gemma4) {
      if (gemma4) m.notes.push_back("head_dim absent: Gemma4TextConfig's default 256");
      m.head_dim = 256;
    } else if (f && f->kind == Kind::deepseek) {
      m.head_dim = 0;  // MLA: qk_nope_head_dim + qk_rope_head_dim, read_deepseek (GLM-4.7-Flash: 20 heads of 2048)
    } else {
      if (m.hidden_size % m.num_heads != 0) {
        v["num_attention_heads"].fail("must divide hidden_size (" + std::to_string(m.hidden_size) +
                                      ") when head_dim is absent, got " + std::to_string(m.num_heads));
      }
      m.head_dim = m.hidden_size / m.num_heads;
    }
    // Qwen3.5-MoE's text config has no intermediate_size: every layer is a MoE (checked in read_qwen3_5_text). It
    // stands in as the (unused) dense width so the spec stays well-formed.
    const bool no_dense_width = f && std::string_view(f->model_type) == "qwen3_5_moe_text" &&
                                (!v.has("intermediate_size") || v.json().at("intermediate_size").is_null());
    m.intermediate_size =
        no_dense_width ? read_positive_int(v, "moe_intermediate_size") : key("intermediate_size", 9216);
    m.vocab_size = key("vocab_size", 262208);
    m.max_position_embeddings = key("max_position_embeddings", 131072);
    const Kind k = f ? f->kind : Kind::generic;
    const bool gemma = k == Kind::gemma || k == Kind::gemma2 || k == Kind::gemma3_text || k == Kind::gemma4_text;
    // transformers' Gemma configs default tie_word_embeddings to true (and so omit it); vLLM's Gemma models always
    // share the embedding as the LM head.
    m.tie_word_embeddings = gemma || v.boolean_or("tie_word_embeddings", false);
    // Qwen2 (and Qwen2-MoE) have q/k/v biases but their config.json carries no attention_bias key.
    const bool qwen2 = k == Kind::qwen2 || k == Kind::qwen2_moe;
    m.attention_bias = qwen2 || v.boolean_or("attention_bias", false) || v.boolean_or("bias", false);
    if (m.attention_bias && (k == Kind::llama || k == Kind::mistral))
      m.bias_params_per_layer += m.hidden_size;  // LlamaAttention's bias is on o_proj too
    if (v.boolean_or("mlp_bias", false)) m.bias_params_per_layer += 2 * i64{m.intermediate_size} + m.hidden_size;
    m.qk_norm = k == Kind::qwen3 || k == Kind::qwen3_moe || k == Kind::gemma3_text;
    m.norms_per_layer = (k == Kind::gemma2 || k == Kind::gemma3_text || k == Kind::gemma4_text) ? 4 : 2;
  }

  // A MoE layer is sparse unless listed in mlp_only_layers, and only every decoder_sparse_step-th layer is
  // (Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer).
  void qwen_moe() {
    // transformers' Qwen2-MoE / Qwen3-MoE / Qwen3-Next configs map num_local_experts onto num_experts
    // (attribute_map): a config saved under either name holds the same expert count.
    m.num_experts = read_non_negative_int(v, "num_experts", 0);
    const int local = read_non_negative_int(v, "num_local_experts", -1);
    if (local >= 0 && v.has("num_experts") && !v.json().at("num_experts").is_null() && local != m.num_experts)
      v["num_local_experts"].fail("is " + std::to_string(local) + " but num_experts is " +
                                  std::to_string(m.num_experts) + ": the two names are one count in transformers");
    if (local >= 0) m.num_experts = local;
    if (m.num_experts == 0) return;
    m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
    m.moe_intermediate_size = read_positive_int(v, "moe_intermediate_size");
    const int step = positive_or(v, "decoder_sparse_step", 1);
    std::set<i64> mlp_only;
    if (v.has("mlp_only_layers") && !v.json().at("mlp_only_layers").is_null()) {
      for (const auto& e : v["mlp_only_layers"].elements()) {
        const i64 i = e.as_integer();
        if (i < 0 || i >= m.num_layers) e.fail("must be a layer index in 0.." + std::to_string(m.num_layers - 1));
        mlp_only.insert(i);
      }
    }
    // Layers with (i + 1) % step == 0, less those of them listed in mlp_only_layers (closed form: no loop over a
    // layer count read from the file).
    i64 sparse = m.num_layers / step;
    for (const i64 i : mlp_only) sparse -= (i + 1) % step == 0 ? 1 : 0;
    m.dense_layers = m.num_layers - static_cast<int>(sparse);
    if (f->kind == Kind::qwen2_moe || f->kind == Kind::qwen3_next) {
      m.shared_expert_intermediate_size = read_non_negative_int(v, "shared_expert_intermediate_size", 0);
      m.shared_expert_gate = m.shared_expert_intermediate_size > 0;
    }
  }

  void sliding_window() {
    const Kind k = f ? f->kind : Kind::generic;
    if (k == Kind::llama4_text) return;  // chunked attention: read_llama4_text
    if (k == Kind::qwen3_next) {
      if (v.boolean_or("use_sliding_window", false))
        v["use_sliding_window"].fail("is true: llmsim does not model sliding windows in Qwen3-Next");
      return;  // its layer_types name linear and full attention layers: read_qwen3_next
    }
    const int window = read_non_negative_int(v, "sliding_window", 0);
    const bool qwen = k == Kind::qwen2 || k == Kind::qwen2_moe || k == Kind::qwen3 || k == Kind::qwen3_moe;
    if (qwen) {
      // vLLM's ModelConfig drops a Qwen config's sliding_window unless use_sliding_window is set.
      if (v.boolean_or("use_sliding_window", false))
        v["use_sliding_window"].fail("is true: llmsim does not model Qwen's sliding-window layers (max_window_layers)");
      const int typed = sliding_layers_from_types(v, m.num_layers);
      if (typed > 0) v["layer_types"].fail("names sliding_attention layers while use_sliding_window is false");
      return;
    }
    int sliding = k == Kind::gemma4_text ? -1 : sliding_layers_from_types(v, m.num_layers);
    if (sliding < 0) {
      if (k == Kind::gemma2) {
        sliding = (m.num_layers + 1) / 2;  // Gemma-2: even layers slide (layer_idx % 2 == 0)
      } else if (k == Kind::gemma4_text) {
        sliding = gemma4_sliding_layers(v, m.num_layers);
      } else if (k == Kind::gemma3_text) {
        // Gemma-3: every sliding_window_pattern-th layer is global ((i + 1) % pattern == 0), the rest slide.
        const int pattern = v.has("sliding_window_pattern") ? positive_or(v, "sliding_window_pattern", 6)
                                                            : positive_or(v, "_sliding_window_pattern", 6);
        sliding = m.num_layers - m.num_layers / pattern;
      } else {
        // Llama/Mistral/Mixtral: a model-level window applies to every layer (vLLM's Attention takes
        // cache_config.sliding_window when the layer names none).
        sliding = window > 0 ? m.num_layers : 0;
      }
    }
    int w = (k == Kind::gemma3_text && nested_defaults && !v.has("sliding_window")) ? 4096 : window;
    if (k == Kind::gemma4_text && !v.has("sliding_window")) w = 512;  // Gemma4TextConfig's default
    if (sliding > 0 && w <= 0) v.fail("has sliding_attention layers but no sliding_window");
    // Gemma-4 keeps its layer split whatever the window: its full layers have their own shape.
    if (sliding > 0 && (w < m.max_position_embeddings || k == Kind::gemma4_text)) {
      m.sliding_window = w;
      m.sliding_layers = sliding;
    }
  }
};

void read_quantization(const JsonView& v, ModelSpec& m) {
  if (v.has("quantization_config") && !v.json().at("quantization_config").is_null())
    m.quantization = checkpoint_quantization(v["quantization_config"], m.notes);
}

ModelSpec read_text_model(const JsonView& v, const Family* f, std::string id, bool nested_defaults) {
  v.expect_object();
  std::vector<const char*> extra;
  if (!f) extra = {"attention_bias", "mlp_bias", "sliding_window", "num_local_experts", "num_experts",
                   "num_experts_per_tok"};
  else if (f->kind == Kind::deepseek) extra = kDeepseekKeys;
  check_keys(v, f, extra);
  ModelSpec m;
  m.id = std::move(id);
  m.model_type = f ? f->model_type : "";
  Reader r{v, f, m, nested_defaults};
  r.text_decoder();
  const Kind k = f ? f->kind : Kind::generic;
  if (k == Kind::generic || k == Kind::mixtral) {
    // Mixtral (and a config naming no family): every layer a MoE of experts as wide as intermediate_size.
    for (const char* key : {"num_local_experts", "num_experts"}) {
      if (v.has(key) && !v.json().at(key).is_null()) {
        const auto n = v.integer(key);
        if (n < 0 || n > 1 << 20) v[key].fail("must be >= 0, got " + std::to_string(n));
        m.num_experts = static_cast<int>(n);
        break;
      }
    }
    if (m.is_moe()) {
      m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
    } else if (v.has("num_experts_per_tok") && !v.json().at("num_experts_per_tok").is_null()) {
      m.experts_per_token = static_cast<int>(v.integer("num_experts_per_tok"));
    }
  } else if (k == Kind::qwen2_moe || k == Kind::qwen3_moe) {
    r.qwen_moe();
  } else if (k == Kind::qwen3_next) {
    r.qwen_moe();
    read_qwen3_next(v, m);
    if (std::string(f->model_type).rfind("qwen3_5", 0) == 0) read_qwen3_5_text(v, m);
  } else if (k == Kind::minimax_m2) {
    read_minimax_m2(v, m);
  } else if (k == Kind::nemotron_h) {
    read_nemotron_h(v, m);
  } else if (k == Kind::deepseek) {
    read_deepseek(v, m);
    const std::string type = f->model_type;
    if (type == "deepseek_v32" || type == "glm_moe_dsa") read_deepseek_indexer(v, m);
  } else if (k == Kind::gpt_oss) {
    read_gpt_oss(v, m);
  } else if (k == Kind::llama4_text) {
    read_llama4_text(v, m);
  } else if (k == Kind::glm4_moe) {
    read_glm4_moe(v, m);
  } else if (k == Kind::gemma4_text) {
    read_gemma4_text(v, m);
  }
  r.sliding_window();
  read_quantization(v, m);
  return m;
}

}  // namespace

ModelSpec model_spec_from_hf_config(const JsonView& v, std::string id) {
  v.expect_object();
  const std::string path = v.path().empty() ? "model" : v.path();
  std::string architecture;
  if (v.has("architectures") && !v.json().at("architectures").is_null()) {
    auto archs = v["architectures"].elements();
    if (!archs.empty()) architecture = archs.front().as_string();
  }
  const std::string model_type = v.has("model_type") ? v.string("model_type") : "";
  const Family* f = nullptr;
  if (!model_type.empty()) {
    f = find_by_model_type(model_type);
    if (const std::string why = refused_architecture(model_type); !why.empty())
      v["model_type"].fail("is '" + model_type + "': llmsim cannot price this architecture honestly (" + why +
                           "); a wrong size would be worse than none");
    if (!f) {
      v["model_type"].fail("llmsim cannot size this architecture (" +
                           unknown_name_message("model_type", model_type, family_names()) +
                           "); a wrong size would be worse than none");
    }
  } else if (!architecture.empty()) {
    if (const std::string why = refused_architecture(architecture); !why.empty())
      v["architectures"].elements().front().fail("is '" + architecture + "': llmsim cannot price this architecture "
                                                 "honestly (" + why + "); a wrong size would be worse than none");
    f = find_by_architecture(architecture);
    if (!f) {
      std::vector<std::string> archs;
      for (const auto& fam : families())
        for (const char* a : fam.architectures) archs.emplace_back(a);
      v["architectures"].elements().front().fail("llmsim cannot size this architecture (" +
                                                 unknown_name_message("architecture", architecture, archs) + ")");
    }
  }
  ModelSpec m;
  if (f && f->kind == Kind::gemma3) {
    check_keys(v, f, {});
    if (!v.has("text_config")) v.fail("a Gemma-3 multimodal config needs text_config");
    if (!v.has("vision_config")) v.fail("a Gemma-3 multimodal config needs vision_config (llmsim will not guess the "
                                        "vision tower)");
    const JsonView text = v["text_config"];
    text.expect_object();
    const std::string text_type = text.string_or("model_type", "gemma3_text");
    if (text_type != "gemma3_text") text["model_type"].fail("must be gemma3_text, got '" + text_type + "'");
    m = read_text_model(text, find_by_model_type("gemma3_text"), id, true);
    // Gemma3MultiModalProjector: mm_input_projection_weight (vision hidden × text hidden) + mm_soft_emb_norm.
    const JsonView vision = v["vision_config"];
    const i64 vh = size_key(vision, "hidden_size", 768);
    m.vision_params = siglip_params(vision) + vh * m.hidden_size + vh;
    m.model_type = f->model_type;
    m.notes.push_back("the vision tower and projector (" + format_value(static_cast<double>(m.vision_params) / 1e9) +
                      " B parameters, 16-bit) are loaded and counted in memory; text requests never run them");
    read_quantization(v, m);
  } else if (f && f->kind == Kind::gemma4) {
    check_keys(v, f, {});
    if (!v.has("text_config")) v.fail("a Gemma-4 multimodal config needs text_config");
    const JsonView text = v["text_config"];
    text.expect_object();
    const std::string text_type = text.string_or("model_type", "gemma4_text");
    if (text_type != "gemma4_text") text["model_type"].fail("must be gemma4_text, got '" + text_type + "'");
    m = read_text_model(text, find_by_model_type("gemma4_text"), id, false);
    read_gemma4_wrapper(v, m);
    m.model_type = f->model_type;
    read_quantization(v, m);
  } else if (f && f->kind == Kind::qwen3_5) {
    // Qwen3.5 (vllm qwen3_5.py): the hybrid text model in text_config and the Qwen3-VL vision tower vLLM loads
    // beside it (counted 16-bit, never run for text).
    check_keys(v, f, {});
    for (const char* key : {"text_config", "vision_config"})
      if (!v.has(key)) v.fail(std::string("a ") + f->model_type + " config needs " + key);
    const JsonView text = v["text_config"];
    text.expect_object();
    const std::string expected = std::string(f->model_type) + "_text";
    const std::string text_type = text.string_or("model_type", expected);
    if (text_type != expected) text["model_type"].fail("must be " + expected + ", got '" + text_type + "'");
    m = read_text_model(text, find_by_model_type(expected), id, false);
    // Qwen3_5Config writes tie_word_embeddings at the top; a text_config that omits it takes the wrapper's.
    if (!text.has("tie_word_embeddings")) m.tie_word_embeddings = v.boolean_or("tie_word_embeddings", false);
    if (v.boolean_or("tie_word_embeddings", false) != m.tie_word_embeddings)
      v["tie_word_embeddings"].fail("differs from text_config's: llmsim will not guess which one loads");
    m.vision_params = qwen3_vl_vision_params(v["vision_config"], m.hidden_size);
    m.model_type = f->model_type;
    m.notes.push_back("the vision tower and projector (" + format_value(static_cast<double>(m.vision_params) / 1e9) +
                      " B parameters, 16-bit) are loaded and counted in memory; text requests never run them");
    read_quantization(v, m);
  } else if (f && (f->kind == Kind::llama4 || f->kind == Kind::mistral3 || f->kind == Kind::kimi_k25)) {
    // Multimodal wrappers: the text model in text_config, a vision tower llmsim sizes from vision_config.
    const bool llama4 = f->kind == Kind::llama4, kimi = f->kind == Kind::kimi_k25;
    const char* text_type_expected = llama4 ? "llama4_text" : kimi ? "kimi_k2" : "mistral";
    check_keys(v, f, {});
    if (!v.has("text_config")) v.fail(std::string("a ") + f->model_type + " config needs text_config");
    if (!v.has("vision_config")) v.fail(std::string("a ") + f->model_type + " config needs vision_config (llmsim "
                                        "will not guess the vision tower)");
    const JsonView text = v["text_config"];
    text.expect_object();
    std::string text_type = text.string_or("model_type", text_type_expected);
    // vLLM builds Kimi-K2.5's text model as DeepseekV3 (kimi_k25.py); its text_config says kimi_k2 or deepseek_v3.
    if (kimi && text_type == "deepseek_v3") text_type = "kimi_k2";
    // Ministral 3's wrapper holds a ministral3 text_config (Mistral's layers, read by its own family entry).
    const bool ministral3 = f->kind == Kind::mistral3 && text_type == "ministral3";
    if (text_type != text_type_expected && !ministral3)
      text["model_type"].fail(std::string("must be ") + text_type_expected + (f->kind == Kind::mistral3 ? " or ministral3" : "") +
                              ", got '" + text_type + "'");
    m = read_text_model(text, find_by_model_type(ministral3 ? "ministral3" : text_type_expected), id, false);
    if (v.boolean_or("tie_word_embeddings", false) != m.tie_word_embeddings)
      v["tie_word_embeddings"].fail("differs from text_config's: llmsim will not guess which one loads");
    const JsonView vision = v["vision_config"];
    m.vision_params = llama4 ? llama4_vision_params(vision, m.hidden_size)
                      : kimi ? moonvit_params(vision, m.hidden_size)
                             : pixtral_params(v, vision, m.hidden_size);
    m.model_type = f->model_type;
    m.notes.push_back("the vision tower and projector (" + format_value(static_cast<double>(m.vision_params) / 1e9) +
                      " B parameters, 16-bit) are loaded and counted in memory; text requests never run them");
    if (v.has("quantization_config")) read_quantization(v, m);
  } else {
    m = read_text_model(v, f, id, false);
  }
  m.id = std::move(id);
  m.architecture = architecture.empty() ? model_type : architecture;
  m.source = v.json();
  // A multimodal wrapper's sizes come from its text_config: name the keys there (model.text_config.head_dim).
  const bool wrapped = f && (f->kind == Kind::gemma3 || f->kind == Kind::gemma4 || f->kind == Kind::llama4 ||
                             f->kind == Kind::qwen3_5 ||
                             f->kind == Kind::mistral3 || f->kind == Kind::kimi_k25);
  m.validate(wrapped ? v["text_config"].path() : path);
  return m;
}

}  // namespace llmsim::spec
