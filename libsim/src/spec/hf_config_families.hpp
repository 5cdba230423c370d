#pragma once
// Private to the config.json reader (hf_config.cpp): the families llmsim sizes, each with the HF class names that load
// it and the allow-list of keys it understands, and the key check that turns any other key into a ConfigError naming
// it (hf_config_families.cpp).
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/core/json_view.hpp"

namespace llmsim::spec::hf {

enum class Kind { generic, llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek, gemma, gemma2,
                  gemma3_text, gemma3, gemma4_text, gemma4, gpt_oss, llama4_text, llama4, qwen3_next, glm4_moe,
                  mistral3, kimi_k25, qwen3_5, minimax_m2, nemotron_h };

struct Family {
  const char* model_type;
  Kind kind;
  std::vector<const char*> architectures;  // HF class names that load it
  std::vector<const char*> keys;           // understood beyond kCommonKeys and the text-model keys
  // Keys accepted only at the value that changes nothing for this family (judged by value, not by name: Qwen3-Coder
  // writes qkv_bias false, shared_expert_intermediate_size 0 and use_qk_norm true into a qwen3_moe config).
  std::vector<std::pair<const char*, Json>> neutral = {};
};

/// Keys that never change a decoder's size (metadata, tokens, numerics, RoPE, generation defaults).
const std::set<std::string>& common_keys();
/// Keys of every text decoder (their values are read by hf_config.cpp).
extern const std::vector<const char*> kTextKeys;
/// Keys of DeepSeek-V2/V3-layout configs (MLA + MoE) beyond kTextKeys, also allowed on configs read as that layout.
extern const std::vector<const char*> kDeepseekKeys;
/// Every family llmsim sizes, in the order the docs' table lists them.
const std::vector<Family>& families();
/// The model_type of every family (for messages).
std::vector<std::string> family_names();
const Family* find_by_model_type(const std::string& t);
const Family* find_by_architecture(const std::string& a);
/// null, false, {} or [].
bool falsy(const Json& j);
/// Rejects keys outside the allow-list of `f` (+ `extra`), and keys every config carries whose non-default value
/// changes the model; one ConfigError naming every such key.
void check_keys(const JsonView& v, const Family* f, const std::vector<const char*>& extra);

}  // namespace llmsim::spec::hf
