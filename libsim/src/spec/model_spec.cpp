#include "llmsim/spec/model_spec.hpp"

#include <algorithm>

#include "llmsim/core/error.hpp"

namespace llmsim::spec {

namespace {
using i64 = std::int64_t;
constexpr double kMaxParams = 1e15;

int read_positive_int(const JsonView& v, std::string_view key) {
  const i64 x = v.integer(key);
  if (x < 1 || x > (i64{1} << 30)) v[key].fail("must be a positive integer, got " + std::to_string(x));
  return static_cast<int>(x);
}
}  // namespace

i64 ModelSpec::attention_params_per_layer() const {
  const i64 h = hidden_size, q = i64{num_heads} * head_dim, kv = i64{num_kv_heads} * head_dim;
  i64 n = h * q + 2 * h * kv + q * h;  // q, k, v, o projections
  if (attention_bias) n += q + 2 * kv;  // Qwen2: biases on q, k, v only
  return n;
}

i64 ModelSpec::mlp_params_per_layer() const {
  const i64 expert = 3 * i64{hidden_size} * intermediate_size;  // gate, up, down (SwiGLU)
  if (!is_moe()) return expert;
  return num_experts * expert + i64{hidden_size} * num_experts;  // + router
}

i64 ModelSpec::active_mlp_params_per_layer() const {
  const i64 expert = 3 * i64{hidden_size} * intermediate_size;
  if (!is_moe()) return expert;
  return experts_per_token * expert + i64{hidden_size} * num_experts;
}

i64 ModelSpec::norm_params_per_layer() const { return 2 * i64{hidden_size}; }  // input + post-attention RMSNorm

i64 ModelSpec::embedding_params() const { return i64{vocab_size} * hidden_size; }

i64 ModelSpec::lm_head_params() const { return tie_word_embeddings ? 0 : i64{vocab_size} * hidden_size; }

i64 ModelSpec::param_count() const {
  return num_layers * (attention_params_per_layer() + mlp_params_per_layer() + norm_params_per_layer()) +
         embedding_params() + lm_head_params() + hidden_size;  // + final norm
}

i64 ModelSpec::active_param_count() const {
  return num_layers * (attention_params_per_layer() + active_mlp_params_per_layer() + norm_params_per_layer()) +
         embedding_params() + lm_head_params() + hidden_size;
}

double ModelSpec::kv_bytes_per_token(double bytes_per_element) const {
  return 2.0 * num_layers * num_kv_heads * head_dim * bytes_per_element;
}

void ModelSpec::validate(const std::string& path) const {
  Problems p;
  auto positive = [&](const char* field, int v) {
    if (v < 1) p.add(path + "." + field, "must be >= 1, got " + std::to_string(v));
  };
  positive("hidden_size", hidden_size);
  positive("num_hidden_layers", num_layers);
  positive("num_attention_heads", num_heads);
  positive("num_key_value_heads", num_kv_heads);
  positive("head_dim", head_dim);
  positive("intermediate_size", intermediate_size);
  positive("vocab_size", vocab_size);
  positive("max_position_embeddings", max_position_embeddings);
  if (num_heads >= 1 && num_kv_heads >= 1 && num_heads % num_kv_heads != 0) {
    p.add(path + ".num_key_value_heads", "must divide num_attention_heads (" + std::to_string(num_heads) +
                                             "), got " + std::to_string(num_kv_heads));
  }
  if (num_experts < 0) p.add(path + ".num_local_experts", "must be >= 0, got " + std::to_string(num_experts));
  if (is_moe() && (experts_per_token < 1 || experts_per_token > num_experts)) {
    p.add(path + ".num_experts_per_tok", "must be in 1.." + std::to_string(num_experts) + " for a MoE model, got " +
                                             std::to_string(experts_per_token));
  }
  // Parameter and byte counts are int64 products of these dimensions: each dimension alone may be valid while
  // the product overflows (and reads back negative). The count in double bounds them all; 1e15 parameters is
  // ~500x the largest published model.
  if (p.empty()) {
    const double h = hidden_size, q = static_cast<double>(num_heads) * head_dim,
                 kv = static_cast<double>(num_kv_heads) * head_dim, experts = std::max(1, num_experts);
    const double per_layer = 2 * h * q + 2 * h * kv + experts * (3 * h * intermediate_size + h) + 2 * h;
    const double params = num_layers * per_layer + 2.0 * vocab_size * h + h;
    if (!(params <= kMaxParams))
      p.add(path, "the dimensions give " + format_value(params) + " parameters, more than " + format_value(kMaxParams) +
                      " (hidden_size " + std::to_string(hidden_size) + ", num_hidden_layers " +
                      std::to_string(num_layers) + ", num_attention_heads " + std::to_string(num_heads) +
                      ", head_dim " + std::to_string(head_dim) + ", intermediate_size " +
                      std::to_string(intermediate_size) + ", vocab_size " + std::to_string(vocab_size) +
                      (is_moe() ? ", num_local_experts " + std::to_string(num_experts) : std::string()) + ")");
  }
  p.throw_if_any();
}

ModelSpec model_spec_from_hf_config(const JsonView& v, std::string id) {
  v.expect_object();
  ModelSpec m;
  m.id = std::move(id);
  if (v.has("architectures")) {
    auto archs = v["architectures"].elements();
    if (!archs.empty()) m.architecture = archs.front().as_string();
  }
  const std::string model_type = v.string_or("model_type", "");
  if (m.architecture.empty()) m.architecture = model_type;
  m.hidden_size = read_positive_int(v, "hidden_size");
  m.num_layers = read_positive_int(v, "num_hidden_layers");
  m.num_heads = read_positive_int(v, "num_attention_heads");
  m.num_kv_heads = v.has("num_key_value_heads") ? read_positive_int(v, "num_key_value_heads") : m.num_heads;
  if (v.has("head_dim")) {
    m.head_dim = read_positive_int(v, "head_dim");
  } else {
    if (m.hidden_size % m.num_heads != 0) {
      v["num_attention_heads"].fail("must divide hidden_size (" + std::to_string(m.hidden_size) +
                                    ") when head_dim is absent, got " + std::to_string(m.num_heads));
    }
    m.head_dim = m.hidden_size / m.num_heads;
  }
  m.intermediate_size = read_positive_int(v, "intermediate_size");
  m.vocab_size = read_positive_int(v, "vocab_size");
  m.max_position_embeddings = read_positive_int(v, "max_position_embeddings");
  m.tie_word_embeddings = v.boolean_or("tie_word_embeddings", false);
  // Qwen2 has q/k/v biases but its config.json carries no attention_bias key.
  m.attention_bias = v.boolean_or("attention_bias", model_type == "qwen2");
  for (const char* key : {"num_local_experts", "num_experts"}) {
    if (v.has(key)) {
      const auto n = v.integer(key);
      if (n < 0 || n > 1 << 20) v[key].fail("must be >= 0, got " + std::to_string(n));
      m.num_experts = static_cast<int>(n);
      break;
    }
  }
  if (m.is_moe()) {
    m.experts_per_token = read_positive_int(v, "num_experts_per_tok");
  } else if (v.has("num_experts_per_tok")) {
    m.experts_per_token = static_cast<int>(v["num_experts_per_tok"].as_integer_in(0, 1 << 20));
  }
  m.validate(v.path().empty() ? "model" : v.path());
  return m;
}

Json to_json(const ModelSpec& m) {
  Json j;
  j["architectures"] = Json::array({m.architecture});
  j["hidden_size"] = m.hidden_size;
  j["num_hidden_layers"] = m.num_layers;
  j["num_attention_heads"] = m.num_heads;
  j["num_key_value_heads"] = m.num_kv_heads;
  j["head_dim"] = m.head_dim;
  j["intermediate_size"] = m.intermediate_size;
  j["vocab_size"] = m.vocab_size;
  j["max_position_embeddings"] = m.max_position_embeddings;
  j["tie_word_embeddings"] = m.tie_word_embeddings;
  j["attention_bias"] = m.attention_bias;
  if (m.num_experts > 0) {
    j["num_local_experts"] = m.num_experts;
    j["num_experts_per_tok"] = m.experts_per_token;
  }
  return j;
}

}  // namespace llmsim::spec
