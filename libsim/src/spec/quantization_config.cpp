// A checkpoint's quantization_config → the llmsim weight format that stores and runs its weights the same way, and
// which format a model runs in when the scenario leaves quant.weights at "auto". Which vLLM kernel each method
// selects: ../shared/reference/quantization.md §4 (awq/gptq → awq_marlin/gptq_marlin, compressed-tensors schemes,
// fp8, bitsandbytes); bits per weight per format: its §1 (quantization.cpp).
#include <algorithm>
#include <cctype>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/model_spec.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::spec {

namespace {

/// The format id of `base` ("awq-int4", "gptq-int4", "w4a16", "int8") at a config's group size (-1 or 0 = per
/// output channel). The group-128 forms of the 4-bit formats and per-channel int8 are the catalogue formats.
std::string group_format(const std::string& base, const JsonView& at, std::int64_t g) {
  if (g == -1 || g == 0) {
    if (base == "awq-int4") at.fail("is per-channel: AWQ checkpoints are group-quantized");
    return base == "int8" ? "int8" : base + "-gch";
  }
  if (g == 128) return base == "int8" ? "int8-g128" : base;
  if (g == 32 || g == 64) return base + "-g" + std::to_string(g);
  at.fail("is " + std::to_string(g) + ": vLLM's Marlin kernels (and llmsim) run group sizes -1, 32, 64 and 128 only");
}

std::string to_upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::int64_t int_or(const JsonView& v, const char* key, std::int64_t fallback) {
  if (!v.has(key) || v.json().at(key).is_null()) return fallback;
  return v.integer(key);
}

/// compressed-tensors' group size of a "group" strategy: QuantizationArgs requires a positive group_size there (its
/// validator refuses a group strategy without one), so a missing, null or non-positive one is an error, not 128.
std::int64_t ct_group_size(const JsonView& w, const std::string& strategy) {
  if (strategy != "group") return -1;
  if (!w.has("group_size") || w.json().at("group_size").is_null())
    w["group_size"].fail("missing: the \"group\" strategy needs a group size");
  const std::int64_t g = w.integer("group_size");
  if (g < 1) w["group_size"].fail("must be > 0 with the \"group\" strategy, got " + std::to_string(g));
  return g;
}

bool lm_head_in(const JsonView& v) { return v.has("lm_head") && !v.json().at("lm_head").is_null() && v.boolean("lm_head"); }

void note_lm_head(const JsonView& qc, std::vector<std::string>& notes) {
  if (lm_head_in(qc))
    notes.push_back("quantization_config.lm_head is true: llmsim counts the LM head at 16 bits (a little more memory "
                    "than the checkpoint needs)");
}

CheckpointQuantization awq(const JsonView& qc, std::vector<std::string>& notes) {
  const std::int64_t bits = int_or(qc, "bits", int_or(qc, "w_bit", 4));
  if (bits != 4) qc[qc.has("bits") ? "bits" : "w_bit"].fail("is " + std::to_string(bits) + ": AWQ is modelled at 4 bits only");
  const std::int64_t g = int_or(qc, "group_size", int_or(qc, "q_group_size", 128));
  const std::string format = group_format("awq-int4", qc.has("q_group_size") ? qc["q_group_size"] : qc, g);
  if (qc.has("modules_to_not_convert") && qc.json().at("modules_to_not_convert").is_array() &&
      !qc.json().at("modules_to_not_convert").empty())
    notes.push_back("quantization_config.modules_to_not_convert lists modules kept 16-bit; llmsim quantizes every "
                    "decoder linear layer");
  note_lm_head(qc, notes);
  return {format, "awq", "AWQ 4-bit, group " + std::to_string(g)};
}

CheckpointQuantization gptq(const JsonView& qc, std::vector<std::string>& notes) {
  const std::int64_t bits = int_or(qc, "bits", 4);
  if (bits != 4 && bits != 8) qc["bits"].fail("is " + std::to_string(bits) + ": GPTQ is modelled at 4 or 8 bits");
  if (qc.has("dynamic") && !qc.json().at("dynamic").is_null() && !qc.json().at("dynamic").empty())
    qc["dynamic"].fail("sets per-module bit widths, which llmsim does not model");
  const std::int64_t g = int_or(qc, "group_size", 128);
  note_lm_head(qc, notes);
  // GPTQ 8-bit runs on the same W8A16 Marlin path as the int8 format.
  const std::string format = group_format(bits == 4 ? "gptq-int4" : "int8", qc.has("group_size") ? qc["group_size"] : qc, g);
  return {format, "gptq", "GPTQ " + std::to_string(bits) + "-bit, group " + std::to_string(g)};
}

CheckpointQuantization fp8(const JsonView& qc, std::vector<std::string>& notes, bool fbgemm) {
  // fbgemm_fp8 (Meta's FP8 checkpoints): per-channel weight scales, per-token dynamic activation scales
  // (FBGEMMFp8LinearMethod calls apply_fp8_linear with use_per_token_if_dynamic=True).
  if (fbgemm) {
    // Meta's Llama-3.1-405B-FP8 lists every layer's self_attn projections (and the first and last layers' MLPs, and
    // lm_head) in modules_to_not_convert: attention stays bf16, as vLLM's FBGEMMFp8Config.is_layer_skipped leaves it.
    std::size_t attn = 0, mlp = 0;
    if (qc.has("modules_to_not_convert") && qc.json().at("modules_to_not_convert").is_array())
      for (const auto& e : qc.json().at("modules_to_not_convert")) {
        if (!e.is_string()) continue;
        const std::string name = e.get<std::string>();
        if (name.find("self_attn") != std::string::npos) ++attn;
        else if (name.find(".mlp.") != std::string::npos) ++mlp;
      }
    if (mlp > 0)
      notes.push_back("quantization_config.modules_to_not_convert keeps " + std::to_string(mlp) + " MLP projections "
                      "bf16 (Meta's 405B: the first and last layers'); llmsim plans every MLP in FP8, slightly fewer "
                      "bytes than the checkpoint holds");
    if (attn > 0) {
      notes.push_back("quantization_config.modules_to_not_convert keeps the attention projections bf16 (" +
                      std::to_string(attn) + " listed): planned as fp8-dynamic+attn16");
      return {"fp8-dynamic+attn16", "fbgemm_fp8",
              "FBGEMM FP8 MLPs (per-channel weights, dynamic per-token activations), bf16 attention"};
    }
    return {"fp8-dynamic", "fbgemm_fp8", "FBGEMM FP8: per-channel weights, dynamic per-token activations"};
  }
  if (qc.has("weight_block_size") && !qc.json().at("weight_block_size").is_null()) {
    notes.push_back("FP8 weights with block-wise scales (weight_block_size): 8 + 32/16384 bits per weight, counted as 8");
    CheckpointQuantization q{"fp8", "fp8", "FP8 E4M3 weights and activations"};
    q.block_scaled = true;
    return q;
  }
  // Fp8Config: activation_scheme "dynamic" = one activation scale per tensor found at run time.
  if (qc.string_or("activation_scheme", "dynamic") == "dynamic")
    return {"fp8-online", "fp8", "FP8 E4M3, per-tensor weight scales, dynamic per-tensor activation scales"};
  return {"fp8", "fp8", "FP8 E4M3 weights and activations"};
}

// compressed-tensors (llm-compressor): config_groups[*].weights / input_activations say the scheme; vLLM picks
// CompressedTensorsW8A8Fp8, W8A8Int8, W8A16Fp8 or WNA16 from them.
CheckpointQuantization compressed_tensors(const JsonView& qc, std::vector<std::string>& notes) {
  const std::string fmt = qc.string_or("format", "");
  if (fmt.find("24") != std::string::npos || fmt.find("sparse") != std::string::npos)
    qc["format"].fail("is '" + fmt + "': 2:4-sparse weights are not modelled");
  if (!qc.has("config_groups")) qc.fail("compressed-tensors without config_groups: llmsim cannot tell the scheme");
  const JsonView groups = qc["config_groups"];
  groups.expect_object();
  std::string format, description;
  for (auto it = groups.json().begin(); it != groups.json().end(); ++it) {
    const JsonView g = groups[it.key()];
    const JsonView w = g["weights"];
    const std::int64_t bits = w.integer("num_bits");
    const std::string type = w.string_or("type", "int");
    const std::string strategy = w.string_or("strategy", "tensor");
    const bool acts = g.has("input_activations") && !g.json().at("input_activations").is_null();
    const std::string act_type = acts ? g["input_activations"].string_or("type", "int") : "";
    std::string f;
    if (type == "float" && bits == 8) {
      // FP8 weights without FP8 activations run as FP8-Marlin W8A16, which streams and dequantises 8-bit weights as
      // the INT8 Marlin path does (quantization.md §4).
      f = acts && act_type == "float" ? "fp8" : "int8";
      if (f == "fp8" && g["input_activations"].json().value("dynamic", false)) {
        // FP8_DYNAMIC (per-token dynamic activations; channel-wise weights) or a per-tensor dynamic scheme.
        f = g["input_activations"].string_or("strategy", "tensor") == "token" || strategy == "channel" ? "fp8-dynamic"
                                                                                                     : "fp8-online";
      }
    } else if (type == "float" && bits == 4) {
      // NVFP4 (llm-compressor's NVFP4 / NVFP4A16 schemes): FP4 with an FP8 scale per 16.
      const std::int64_t gs = int_or(w, "group_size", 16);
      if (gs != 16) w["group_size"].fail("is " + std::to_string(gs) + ": FP4 weights are modelled as NVFP4 (group 16)");
      f = acts && act_type == "float" ? "nvfp4" : "nvfp4-a16";
    } else if (type == "int" && bits == 8) {
      const std::int64_t gs = ct_group_size(w, strategy);
      f = acts ? "w8a8" : group_format("int8", w.has("group_size") ? w["group_size"] : w, gs);
    } else if (type == "int" && bits == 4 && !acts) {
      const bool symmetric = !w.has("symmetric") || w.json().at("symmetric").is_null() || w.boolean("symmetric");
      const std::int64_t gs = ct_group_size(w, strategy);
      // Asymmetric W4A16 stores a zero point per group as GPTQ does (+4/g bits).
      f = group_format(symmetric ? "w4a16" : "gptq-int4", w.has("group_size") ? w["group_size"] : w, gs);
    } else {
      w.fail("is " + type + " " + std::to_string(bits) + "-bit" + (acts ? " with " + act_type + " activations" : "") +
             ": llmsim models compressed-tensors FP8 (W8A8, W8A16), INT8 (W8A8, W8A16), INT4 W4A16 and NVFP4 only");
    }
    if (!format.empty() && f != format)
      groups.fail("mixes schemes (" + format + " and " + f + "): llmsim plans one weight format per model");
    format = f;
    description = "compressed-tensors " + type + " " + std::to_string(bits) + "-bit weights" +
                  (acts ? ", " + act_type + " activations" : ", 16-bit activations");
  }
  if (format.empty()) groups.fail("names no scheme");
  if (qc.has("kv_cache_scheme") && !qc.json().at("kv_cache_scheme").is_null())
    notes.push_back("the checkpoint carries an FP8 KV-cache scheme: vLLM uses it when kv_cache_dtype is auto; set "
                    "quant.kv_cache to fp8 to plan it");
  if (qc.has("ignore") && qc.json().at("ignore").is_array()) {
    for (const auto& e : qc.json().at("ignore")) {
      const std::string name = e.is_string() ? e.get<std::string>() : "";
      if (name != "lm_head" && name.find("gate") == std::string::npos && name.find("vision") == std::string::npos) {
        notes.push_back("quantization_config.ignore keeps '" + name + "' 16-bit; llmsim quantizes every decoder linear");
        break;
      }
    }
  }
  return {format, "compressed-tensors", description};
}

CheckpointQuantization bitsandbytes(const JsonView& qc, std::vector<std::string>& notes) {
  if (qc.boolean_or("load_in_4bit", false)) {
    const std::string type = qc.string_or("bnb_4bit_quant_type", "fp4");
    if (type != "nf4" && type != "fp4") qc["bnb_4bit_quant_type"].fail("is '" + type + "': expected nf4 or fp4");
    if (type == "fp4") notes.push_back("bitsandbytes FP4 stores and dequantises like NF4 (same 64-weight blocks): "
                                       "planned as nf4");
    const bool dq = qc.boolean_or("bnb_4bit_use_double_quant", false);
    return {dq ? "nf4-dq" : "nf4", "bitsandbytes",
            "bitsandbytes " + type + (dq ? " with double quantization" : "")};
  }
  if (qc.boolean_or("load_in_8bit", false)) return {"bnb-int8", "bitsandbytes", "bitsandbytes LLM.int8"};
  qc.fail("bitsandbytes config without load_in_4bit or load_in_8bit");
}

// gpt-oss: quant_method "mxfp4"; modules_to_not_convert names what stays BF16 (attention, router, embeddings,
// lm_head: only the experts are MXFP4, vLLM's Mxfp4MoEMethod; its linear layers stay unquantized).
CheckpointQuantization mxfp4(const JsonView& qc, std::vector<std::string>& notes) {
  bool only_experts = false;
  if (qc.has("modules_to_not_convert") && qc.json().at("modules_to_not_convert").is_array()) {
    for (const auto& e : qc.json().at("modules_to_not_convert"))
      if (e.is_string() && e.get<std::string>().find("self_attn") != std::string::npos) only_experts = true;
  }
  if (!only_experts)
    notes.push_back("quantization_config (mxfp4) keeps no attention module 16-bit: planned with every decoder linear "
                    "in MXFP4");
  return {only_experts ? "mxfp4-experts" : "mxfp4", "mxfp4",
          only_experts ? "MXFP4 experts (attention, router, embeddings, lm_head BF16)" : "MXFP4"};
}

}  // namespace

CheckpointQuantization modelopt_quantization(const JsonView& hq, std::vector<std::string>& notes) {
  hq.expect_object();
  // Two layouts, read as vLLM's ModelOptQuantConfigBase.from_config reads them (modelopt.py): hf_quant_config.json
  // nests the scheme under "quantization" (quant_algo, kv_cache_quant_algo, exclude_modules); a config.json
  // quantization_config of a ModelOpt export writes it flat (quant_algo, kv_cache_scheme, and "ignore" for the
  // modules left unquantized: nvidia/Gemma-4-31B-IT-NVFP4, nvidia/Kimi-K2.5-NVFP4).
  const bool nested = hq.has("quantization");
  const JsonView q = nested ? hq["quantization"] : hq;
  q.expect_object();
  const std::string algo = to_upper(q.string("quant_algo"));
  const char* const excluded_key = nested ? "exclude_modules" : "ignore";
  const bool kv_fp8 = nested ? q.has("kv_cache_quant_algo") && !q.json().at("kv_cache_quant_algo").is_null()
                             : q.has("kv_cache_scheme") && !q.json().at("kv_cache_scheme").is_null();
  if (kv_fp8)
    notes.push_back("the checkpoint carries an FP8 KV-cache scale: vLLM uses it when kv_cache_dtype is set to fp8; set "
                    "quant.kv_cache to fp8 to plan it");
  // Excluded modules naming whole self_attn modules ("...self_attn" or "...self_attn*"): attention projections stay
  // 16-bit, the MLPs are in the format. With the dense MLP beside the experts (".mlp*", Gemma-4) or the shared
  // experts ("shared_experts*", Kimi-K2.6) excluded too, only the routed experts are quantized (nvfp4-experts). Single
  // projections (NVIDIA's DeepSeek NVFP4 keeps q_a/q_b/kv_a/kv_b but quantizes o_proj) are noted, not modelled.
  std::string attn16, partial, mlp16;
  if (q.has(excluded_key) && q.json().at(excluded_key).is_array()) {
    for (const auto& e : q.json().at(excluded_key)) {
      if (!e.is_string()) continue;
      const std::string name = e.get<std::string>();
      const auto at = name.find("self_attn");
      if (at == std::string::npos) {
        // A whole layer ("layers.61*") is not counted: NVIDIA's DeepSeek exports name the MTP layer so, which vLLM
        // does not load; Kimi-K2.6's "layers.0*" (its dense first layer) comes with "shared_experts*", which is.
        const bool mlp_part = name.find("shared_expert") != std::string::npos || name.ends_with(".mlp*") ||
                              name.ends_with(".mlp");
        if (mlp_part && mlp16.empty()) mlp16 = name;
        continue;
      }
      const std::string tail = name.substr(at + 9);
      if (tail.empty() || tail == "*") attn16 = "+attn16";
      else if (partial.empty()) partial = name;
    }
  }
  const std::string lower = to_lower(algo);
  const std::string file = nested ? "hf_quant_config.json's exclude_modules" : "quantization_config.ignore";
  const bool experts_only = !attn16.empty() && !mlp16.empty() && algo == "NVFP4";
  if (experts_only)
    notes.push_back(file + " keeps attention and the dense and shared MLPs unquantized (e.g. '" + mlp16 + "'): "
                    "planned as nvfp4-experts, only the routed experts in NVFP4");
  else if (!attn16.empty())
    notes.push_back(file + " keeps the attention modules unquantized: planned 16-bit, the MLPs in " + lower);
  else if (!partial.empty())
    notes.push_back(file + " keeps some attention projections unquantized (e.g. '" + partial + "'); llmsim plans "
                    "every decoder linear in " + lower + ", slightly fewer bytes than the checkpoint holds (those "
                    "projections are a few percent of a MoE's weights)");
  if (!experts_only && !mlp16.empty())
    notes.push_back(file + " also keeps MLP parts unquantized (e.g. '" + mlp16 + "'); llmsim plans them in " + lower +
                    ": fewer bytes than the checkpoint holds by their 16-bit share");
  // The algorithms vLLM's ModelOpt loader accepts (QUANT_ALGOS in modelopt.py), and W4A8_AWQ (TensorRT-LLM's).
  if (algo == "FP8") return {"fp8" + attn16, "modelopt", "NVIDIA ModelOpt FP8 (W8A8)"};
  if (algo == "FP8_PER_CHANNEL_PER_TOKEN")
    return {"fp8-dynamic" + attn16, "modelopt",
            "NVIDIA ModelOpt FP8, per-channel weight scales, per-token activation scales"};
  if (algo == "NVFP4" || algo == "W4A16_NVFP4") {
    const std::int64_t g = int_or(q, "group_size", 16);
    if (g != 16) q["group_size"].fail("is " + std::to_string(g) + ": NVFP4 is modelled with group 16");
    if (algo == "W4A16_NVFP4")
      return {"nvfp4-a16" + attn16, "modelopt", "NVIDIA ModelOpt W4A16 NVFP4 (FP4 weights, 16-bit activations)"};
    if (experts_only)
      return {"nvfp4-experts", "modelopt", "NVIDIA ModelOpt NVFP4 routed experts (attention and dense MLPs 16-bit)"};
    return {"nvfp4" + attn16, "modelopt", "NVIDIA ModelOpt NVFP4 (FP4 + FP8 scale per 16)"};
  }
  if (algo == "W4A8_AWQ") {
    // INT4 weights (AWQ, group 128) with FP8 activations: the weights' bytes are AWQ's; llmsim runs them as W4A16.
    notes.push_back("ModelOpt W4A8_AWQ: INT4 weights with FP8 activations, planned as AWQ 4-bit weight-only (the same "
                    "bytes; the FP8 activation path is not modelled). TensorRT-LLM serves this format; vLLM's ModelOpt "
                    "loader does not list it (QUANT_ALGOS in modelopt.py)");
    return {"awq-int4" + attn16, "modelopt", "NVIDIA ModelOpt W4A8 AWQ (INT4 weights, FP8 activations)"};
  }
  if (algo == "MIXED_PRECISION") {
    // quantized_layers: one algorithm per module. llmsim plans one format per model: a checkpoint whose modules all
    // name the same algorithm is that algorithm; a real mix is refused, naming the two.
    if (!q.has("quantized_layers")) q.fail("MIXED_PRECISION without quantized_layers: llmsim cannot tell the formats");
    const JsonView layers = q["quantized_layers"];
    layers.expect_object();
    std::string first;
    for (auto it = layers.json().begin(); it != layers.json().end(); ++it) {
      const std::string a = to_upper(layers[it.key()].string("quant_algo"));
      if (first.empty()) first = a;
      else if (a != first)
        layers.fail("mixes " + first + " and " + a + " (e.g. '" + it.key() + "'): llmsim plans one weight format per "
                    "model");
    }
    if (first.empty() || first == "MIXED_PRECISION") layers.fail("names no algorithm");
    const Json one = {{"quantization", {{"quant_algo", first}}}};
    CheckpointQuantization r = modelopt_quantization(JsonView(one, q.path()), notes);
    r.format += attn16;
    return r;
  }
  q["quant_algo"].fail(unknown_name_message("ModelOpt algorithm", algo,
                                            {"FP8", "FP8_PER_CHANNEL_PER_TOKEN", "NVFP4", "W4A16_NVFP4", "W4A8_AWQ",
                                             "MIXED_PRECISION"}) +
                       ": llmsim cannot tell how many bytes its weights take");
}

CheckpointQuantization checkpoint_quantization(const JsonView& qc, std::vector<std::string>& notes) {
  qc.expect_object();
  // ModelOpt exports write hf_quant_config.json's content (producer + quantization.quant_algo) as config.json's
  // quantization_config without a quant_method; vLLM's ModelConfig._parse_quant_hf_config reads it by its producer
  // (name "modelopt") and quant_algo, and so does llmsim.
  if (!qc.has("quant_method") && qc.has("producer") && qc.json().at("producer").is_object() &&
      qc["producer"].string_or("name", "") == "modelopt")
    return modelopt_quantization(qc, notes);
  if (!qc.has("quant_method"))
    qc.fail("has no quant_method (and is not a ModelOpt export naming producer 'modelopt'): llmsim cannot tell how "
            "many bytes its weights take");
  std::string method = to_lower(qc.string("quant_method"));
  if (method == "awq_marlin") method = "awq";
  if (method == "gptq_marlin") method = "gptq";
  const bool fbgemm = method == "fbgemm_fp8";
  if (fbgemm) method = "fp8";
  if (method == "awq") return awq(qc, notes);
  if (method == "gptq") return gptq(qc, notes);
  if (method == "fp8") return fp8(qc, notes, fbgemm);
  if (method == "compressed-tensors") return compressed_tensors(qc, notes);
  if (method == "bitsandbytes") return bitsandbytes(qc, notes);
  if (method == "mxfp4") return mxfp4(qc, notes);
  if (method == "modelopt" || method == "modelopt_fp4") return modelopt_quantization(qc, notes);
  qc["quant_method"].fail(unknown_name_message("quantization method", method,
                                               {"awq", "gptq", "fp8", "compressed-tensors", "bitsandbytes", "mxfp4",
                                                "modelopt"}) +
                          ": llmsim cannot tell how many bytes its weights take");
}

WeightFormat weight_format_for_model(const ModelSpec& model, const std::string& requested, const std::string& path,
                                     std::vector<std::string>& notes) {
  const std::string& own = model.quantization.format;
  if (requested.empty() || to_lower(requested) == kAutoWeights) return weight_format(own.empty() ? "fp16" : own, path);
  WeightFormat f = weight_format(requested, path);
  if (!own.empty() && f.id != own) {
    notes.push_back(path + " '" + f.id + "' differs from the checkpoint's quantization_config (" +
                    model.quantization.description + ", '" + own + "'): planned as " + f.id + ", as asked");
  }
  return f;
}

}  // namespace llmsim::spec
