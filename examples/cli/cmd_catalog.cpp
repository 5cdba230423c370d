// `llmsim catalog gpus|models|quants`: what ships with llmsim.
#include <iostream>

#include "common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::cli {

namespace {

void list_gpus(bool json) {
  const auto& cat = spec::Catalog::builtin();
  if (json) {
    Json arr = Json::array();
    for (const auto& [id, g] : cat.gpus()) arr.push_back(spec::to_json(g));
    print_json(arr);
    return;
  }
  Table t({"id", "name", "memory GiB", "GB/s", "fp16 TF", "fp8 TF", "fp4 TF", "int8 TOPS", "NVLink GB/s", "P2P", "MIG",
           "$/h (placeholder)"});
  for (const auto& [id, g] : cat.gpus()) {
    std::string mig = g.mig_profiles.empty() ? "-" : std::to_string(g.mig_profiles.size()) + " profiles";
    const double gib = static_cast<double>(g.memory_bytes) / (1024.0 * 1024.0 * 1024.0);
    t.add({id, g.name, fmt(gib, 1), fmt(g.memory_bandwidth / 1e9, 0),
           fmt(g.fp16_flops / 1e12, 1), g.fp8_flops > 0 ? fmt(g.fp8_flops / 1e12, 0) : "-",
           g.fp4_flops > 0 ? fmt(g.fp4_flops / 1e12, 0) : "-",
           g.int8_ops > 0 ? fmt(g.int8_ops / 1e12, 0) : "-",
           g.nvlink_bandwidth > 0 ? fmt(g.nvlink_bandwidth / 1e9, 0) : "-", g.p2p ? "yes" : "no", mig,
           "$" + fmt(g.price_per_hour, 2)});
  }
  t.print(std::cout);
  std::cout << "\nMIG slices are GPU ids too, e.g. a100-80gb-sxm:mig-3g.40gb. Prices are rough market figures: "
               "override them (hardware.price_per_gpu_hour, --price, compare --prices).\n";
}

void list_models(bool json) {
  const auto& cat = spec::Catalog::builtin();
  if (json) {
    Json arr = Json::array();
    for (const auto& [id, m] : cat.models()) {
      arr.push_back({{"id", id},
                     {"params", m.param_count()},
                     {"active_params", m.active_param_count()},
                     {"kv_bytes_per_token_fp16", m.kv_bytes_per_token(2.0)},
                     {"config", spec::to_json(m)}});
    }
    print_json(arr);
    return;
  }
  Table t({"id", "architecture", "params B", "layers", "hidden", "heads/kv", "head_dim", "ffn", "vocab", "max ctx",
           "KV KiB/tok fp16"});
  for (const auto& [id, m] : cat.models()) {
    std::string params = fmt(static_cast<double>(m.param_count()) / 1e9, 2);
    if (m.is_moe()) params += " (" + fmt(static_cast<double>(m.active_param_count()) / 1e9, 1) + " active)";
    t.add({id, m.architecture, params, std::to_string(m.num_layers), std::to_string(m.hidden_size),
           std::to_string(m.num_heads) + "/" + std::to_string(m.num_kv_heads), std::to_string(m.head_dim),
           // MoE: one routed expert's width × their count
           std::to_string(m.is_moe() ? m.expert_intermediate_size() : m.intermediate_size) +
               (m.is_moe() ? " x" + std::to_string(m.num_experts) : ""),
           std::to_string(m.vocab_size), std::to_string(m.max_position_embeddings),
           fmt(m.kv_bytes_per_token(2.0) / 1024, 0)});
  }
  t.print(std::cout);
  std::cout << "\nAny Hugging Face config.json path works as a model too.\n";
}

void list_quants(bool json) {
  if (json) {
    Json arr = Json::array();
    for (const auto& f : spec::weight_formats()) {
      arr.push_back({{"id", f.id},
                     {"description", f.description},
                     {"bits_per_weight", f.bits_per_weight},
                     {"group_size", f.group_size},
                     {"quantize_embeddings", f.quantize_embeddings},
                     {"lm_head_bits", f.lm_head_bits},
                     {"weight_only", f.weight_only},
                     {"compute_dtype", std::string(spec::to_string(f.compute_dtype))},
                     {"fallback_compute_dtype", std::string(spec::to_string(f.fallback_compute_dtype))},
                     {"dequant_bw_efficiency", f.dequant_bw_efficiency},
                     {"dequant_compute_efficiency", f.dequant_compute_efficiency}});
    }
    print_json({{"weights", arr}, {"kv_cache", {"fp16", "bf16", "fp8", "int8", "int4"}}});
    return;
  }
  Table t({"id", "bits/weight", "group", "computes in", "embeddings", "lm_head bits", "description"});
  for (const auto& f : spec::weight_formats()) {
    t.add({f.id, fmt(f.bits_per_weight, 3), f.group_size ? std::to_string(f.group_size) : "-",
           std::string(spec::to_string(f.compute_dtype)) + (f.weight_only ? " (weight-only)" : ""),
           f.quantize_embeddings ? "quantized" : "16-bit", fmt(f.lm_head_bits, 2), f.description});
  }
  t.print(std::cout);
  std::cout << "\nKV-cache dtypes: fp16, bf16, fp8, int8, int4.\n";
}

int run_catalog(int argc, char** argv) {
  return guarded("catalog", [&] {
    po::options_description opts("llmsim catalog options");
    opts.add_options()("what", po::value<std::string>()->required(), "gpus | models | quants")(
        "json", "print JSON instead of a table");
    po::positional_options_description pos;
    pos.add("what", 1);
    po::variables_map vm;
    if (!parse_args(argc, argv, opts, vm, "usage: llmsim catalog gpus|models|quants [--json]", &pos)) return kOk;
    const std::string what = vm["what"].as<std::string>();
    const bool json = vm.count("json") > 0;
    if (what == "gpus") {
      list_gpus(json);
    } else if (what == "models") {
      list_models(json);
    } else if (what == "quants") {
      list_quants(json);
    } else {
      throw ConfigError("catalog", unknown_name_message("catalogue", what, {"gpus", "models", "quants"}));
    }
    return kOk;
  });
}

}  // namespace

Command command_catalog() { return {"catalog", "list the GPUs, models and quantization formats that ship", &run_catalog}; }

}  // namespace llmsim::cli
