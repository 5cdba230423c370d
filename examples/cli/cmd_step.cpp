// `llmsim step`: the time of one engine iteration for a batch shape, with its per-op roofline breakdown.
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "server_options.hpp"
#include "llmsim/analysis/step.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/perf/collective.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

namespace {

const char* kUsage =
    "usage: llmsim step --model M --gpu G [--quant Q] [--kv-dtype D] [--tp N] [--pp N] [--pp-layer-partition S]\n"
    "                   [--prefill-tokens P --prefill-context C] [--decode-seqs B --context L]\n"
    "                   [--gpu-profile FILE] [--eager] [--engine vllm|RUNTIME] [--cpu-offload-gb G]\n"
    "                   [--enable-lora [--max-loras N --max-lora-rank R --lora-adapters A]]\n"
    "                   [--num-scheduler-steps N] [--max-model-len L]\n"
    "                   [--vllm-args \"vllm serve M ...\" | --sglang-args \"...\"] [--json]\n\n"
    "Time of one serving-engine iteration: one prefill chunk of P tokens after C cached tokens, plus B\n"
    "sequences decoding one token each with L tokens of context. Prints the per-op roofline breakdown.";

// What a server command line sets that one iteration's time reads: the model, the split, the formats, CUDA graphs,
// the runtime (SGLang's). The memory and scheduling knobs only bound which batches fit (noted: `llmsim memory`).
const ServerOptionMap kStepServerOptions{
    analysis::PlanCommand::step,
    {{"model", "model"}, {"hardware.tp", "tp"}, {"hardware.pp", "pp"},
     {"hardware.pp_layer_partition", "pp-layer-partition"}, {"quant.weights", "quant"},
     {"quant.kv_cache", "kv-dtype"}, {"engine.cpu_offload_gb", "cpu-offload-gb"}, {"engine.runtime", "engine"},
     {"engine.cuda_graph_max_bs", "cuda-graph-max-bs"}, {"engine.enable_lora", "enable-lora"},
     {"engine.max_loras", "max-loras"}, {"engine.max_lora_rank", "max-lora-rank"},
     {"engine.num_scheduler_steps", "num-scheduler-steps"}, {"engine.max_model_len", "max-model-len"}},
    "eager"};

// Fields set by step's own options, beside those a server line sets (kStepServerOptions).
const std::vector<std::pair<std::string, std::string>> kStepFlags{
    {"hardware.gpu", "gpu"}, {"hardware.gpu_profile", "gpu-profile"}, {"engine.policy", "engine"},
    {"engine.cuda_graphs", "eager"}, {"workload.lora_adapters", "lora-adapters"}};

int run_step(int argc, char** argv) {
  po::options_description opts("step options");
  opts.add_options()
      ("model", po::value<std::string>(), "model id or path to a Hugging Face config.json (required unless --vllm-args "
                                          "names it)")
      ("gpu", po::value<std::string>()->required(), "GPU id ('a100-80gb-sxm', 'a100-80gb-sxm:mig-3g.40gb'), spec file, or "
                                                     "an option such as 2xrtx4090-24gb@pp, 2xa100-80gb-pcie+nvlink")
      ("quant", po::value<std::string>()->default_value("auto"), "weight format (fp16, awq-int4, fp8, ...; auto = the checkpoint's)")
      ("kv-dtype", po::value<std::string>()->default_value("fp16"), "KV-cache dtype (fp16, fp8, int8, ...)")
      ("tp", po::value<int>()->default_value(1), "tensor-parallel size")
      ("pp", po::value<int>()->default_value(1), "pipeline-parallel size")
      ("pp-layer-partition", po::value<std::string>(), "layers of each pipeline stage, vLLM's VLLM_PP_LAYER_PARTITION "
                                                       "(\"18,17\"; default: vLLM's split): the largest stage is priced")
      ("prefill-tokens", po::value<std::int64_t>()->default_value(0), "tokens of the prefill chunk")
      ("prefill-context", po::value<std::int64_t>()->default_value(0), "tokens already cached before the chunk")
      ("decode-seqs", po::value<std::int64_t>()->default_value(0), "sequences decoding one token")
      ("context", po::value<std::int64_t>()->default_value(0), "context length of each decoding sequence")
      ("gpu-profile", po::value<std::string>()->default_value(""), "calibrated HardwareProfile JSON file")
      ("eager", po::bool_switch(), "no CUDA graphs (vLLM --enforce-eager)")
      ("engine", po::value<std::string>()->default_value("vllm"),
       "runtime whose kernels and overheads to model: vllm (V1), vllm-v0, or a runtime name (vllm-v1, vllm-v0.5, vllm-v0-paged, "
       "sglang, lmdeploy-turbomind, gpt-fast, llama.cpp)")
      ("cpu-offload-gb", po::value<double>()->default_value(0), "GiB of weights per GPU in host memory (vLLM --cpu-offload-gb)")
      ("cuda-graph-max-bs", po::value<int>(),
       "SGLang's --cuda-graph-max-bs: the largest decode batch replayed from a CUDA graph (--engine sglang[==X]; "
       "default: the release's for the GPU and TP)")
      ("enable-lora", "run vLLM's LoRA shrink/expand kernels in the step (vLLM --enable-lora; op 'lora')")
      ("max-loras", po::value<int>(), "LoRA adapter slots (vLLM --max-loras, default 1; needs --enable-lora)")
      ("max-lora-rank", po::value<int>(), "rank the slots are padded to (vLLM --max-lora-rank, default 16; needs --enable-lora)")
      ("lora-adapters", po::value<int>(), "distinct adapters the step's requests use (workload.lora_adapters, default 1, "
                                          "at most --max-loras; needs --enable-lora)")
      ("num-scheduler-steps", po::value<int>(),
       "vLLM V0's multi-step window (--num-scheduler-steps N, 0.6.0-0.10.0; --engine vllm-v0 or such a release): "
       "also prices the window's N - 1 later steps, which run on the GPU alone")
      ("max-model-len", po::value<std::string>(),
       "the server's context (vLLM --max-model-len: a number, or auto): a V0 release chunks prefills by itself above "
       "32K (vllm#6666), which decides whether --num-scheduler-steps applies; default: the release's auto")
      ("speculative", po::value<std::string>()->default_value(""),
       "speculative decoding: the verification step of --decode-seqs with its proposer (draft, ngram, eagle, mtp)")
      ("draft-model", po::value<std::string>()->default_value(""), "draft model id or config.json (--speculative draft)")
      ("num-speculative-tokens", po::value<int>()->default_value(1), "k: tokens proposed per sequence (--speculative)")
      ("json", po::bool_switch(), "print JSON");
  add_server_options(opts);
  po::variables_map vm;
  if (!parse_args_with_server(argc, argv, opts, vm, kUsage, kStepServerOptions)) return kOk;
  if (!vm.count("model")) throw ConfigError("--model", "required: name the model (or give --vllm-args \"vllm serve MODEL ...\")");

  const analysis::StepLengths lengths{vm["prefill-tokens"].as<std::int64_t>(), vm["prefill-context"].as<std::int64_t>(),
                                      vm["decode-seqs"].as<std::int64_t>(), vm["context"].as<std::int64_t>()};

  // The flags as the scenario they stand for, resolved and priced as Python's llmsim.step() and a simulation of it
  // price an iteration (analysis::step_of_scenario: perf::make_cost_model, the one builder), so `step` cannot charge
  // another price than `simulate` for the same batch. Problems name the flag that set the field.
  const std::string engine_name = vm["engine"].as<std::string>();
  // A tp or pp the user wrote counts against a counted GPU option, a 1 included (spec::split_for).
  Json hardware{{"gpu", vm["gpu"].as<std::string>()}};
  if (!vm["tp"].defaulted()) hardware["tp"] = vm["tp"].as<int>();
  if (!vm["pp"].defaulted()) hardware["pp"] = vm["pp"].as<int>();
  // The scenario's field, read and checked as `memory` reads it (spec::parse_layer_partition when read,
  // spec::check_layer_partition against the model and pp when resolved: vLLM's get_pp_indices).
  if (vm.count("pp-layer-partition")) hardware["pp_layer_partition"] = vm["pp-layer-partition"].as<std::string>();
  if (!vm["gpu-profile"].as<std::string>().empty()) hardware["gpu_profile"] = vm["gpu-profile"].as<std::string>();
  // "vllm" and "vllm-v0" name the policy (vLLM V1 / V0); anything else a runtime or a release ("sglang==0.4.7").
  Json engine{{engine_name == "vllm" || engine_name == "vllm-v0" ? "policy" : "runtime", engine_name},
              {"cpu_offload_gb", vm["cpu-offload-gb"].as<double>()}};
  if (vm["eager"].as<bool>()) engine["cuda_graphs"] = false;  // else the release's (none before vLLM 0.2.6)
  if (vm.count("cuda-graph-max-bs")) engine["cuda_graph_max_bs"] = vm["cuda-graph-max-bs"].as<int>();
  if (vm.count("enable-lora")) engine["enable_lora"] = true;
  if (vm.count("max-loras")) engine["max_loras"] = vm["max-loras"].as<int>();
  if (vm.count("max-lora-rank")) engine["max_lora_rank"] = vm["max-lora-rank"].as<int>();
  if (vm.count("num-scheduler-steps")) engine["num_scheduler_steps"] = vm["num-scheduler-steps"].as<int>();
  if (vm.count("max-model-len")) {  // a number as a number; "auto" and anything else as written (spec's rule checks it)
    const std::string len = vm["max-model-len"].as<std::string>();
    const auto n = parse_number(len);
    engine["max_model_len"] = n ? Json(*n) : Json(len);
  }
  Json workload = Json::object();
  if (vm.count("lora-adapters")) workload["lora_adapters"] = vm["lora-adapters"].as<int>();
  const std::string method = vm["speculative"].as<std::string>();
  if (!method.empty() || !vm["num-speculative-tokens"].defaulted() || !vm["draft-model"].as<std::string>().empty()) {
    if (method.empty()) throw ConfigError("--speculative", "name the method (draft, ngram, eagle, mtp)");
    // One step's cost does not depend on the acceptance rate (it sets how many tokens the step yields).
    engine["speculative"] = {{"method", method}, {"num_speculative_tokens", vm["num-speculative-tokens"].as<int>()}};
    if (!vm["draft-model"].as<std::string>().empty()) engine["speculative"]["draft_model"] = vm["draft-model"].as<std::string>();
  }
  const Json doc{{"model", vm["model"].as<std::string>()},
                 {"quant", {{"weights", vm["quant"].as<std::string>()}, {"kv_cache", vm["kv-dtype"].as<std::string>()}}},
                 {"hardware", hardware},
                 {"engine", engine},
                 {"workload", workload}};
  spec::ResolvedScenario r;
  std::optional<analysis::ScenarioStep> priced;
  try {
    r = spec::resolve_unbilled(spec::scenario_from_json(JsonView(doc, "")), spec::Catalog::builtin());
    priced = analysis::step_of_scenario(r, lengths, analysis::StepNames::cli_flags);
  } catch (const ConfigError& e) {
    throw flag_named(e, kStepServerOptions, kStepFlags);
  }
  const perf::CostModel& cm = priced->cm;
  const perf::StepCost& s = priced->cost;
  const spec::ModelSpec& model = r.model;
  const spec::GpuSpec& gpu = r.gpu;
  const spec::ParallelConfig& parallel = r.scenario.hardware.parallel;
  const std::optional<spec::ResolvedSpeculation>& speculation = r.speculation;
  if (priced->json.contains("warnings"))
    for (const auto& w : priced->json["warnings"]) std::cerr << "warning: " << w.get<std::string>() << "\n";
  if (vm["json"].as<bool>()) {  // the one writer Python's llmsim.step() uses too
    print_json(priced->json);
    return kOk;
  }
  const perf::Runtime generation = cm.runtime();
  const std::string backend = perf::to_string(cm.decode_attention_backend());
  const perf::AllReduceModel allreduce(gpu, cm.profile(), parallel.tp, perf::runtime_traits(generation).allreduce);
  const double step_tokens = static_cast<double>(s.tokens);
  const std::string ar = perf::to_string(allreduce.algorithm(step_tokens * model.hidden_size * 2));
  std::cout << model.id << " on " << gpu.id << (parallel.gpus() > 1 ? " x" + std::to_string(parallel.gpus()) : "")
            << " (" << cm.quant().weights.id << ", GEMMs in " << spec::to_string(cm.gemm_dtype()) << ", tp "
            << parallel.tp << ", pp " << parallel.pp << "): prefill " << lengths.prefill_tokens << " tokens after "
            << lengths.prefill_context << ", decode " << lengths.decode_seqs << " seqs at context " << lengths.context
            << "\n";
  std::cout << "engine " << perf::to_string(generation) << "; decode attention: " << backend
            << (parallel.tp > 1 ? "; all-reduce: " + ar + " over " + perf::to_string(allreduce.link()) : "") << "\n";
  if (speculation)
    std::cout << "speculative decoding: " << spec::to_string(speculation->config.method) << ", k = "
              << speculation->config.num_speculative_tokens << ": each decoder verifies k + 1 tokens; 'proposer' is "
              << (speculation->proposer ? speculation->proposer->id : std::string("the CPU's n-gram lookup (no GPU time)"))
              << "\n";
  for (const auto& n : priced->json["notes"]) std::cout << "note: " << n.get<std::string>() << "\n";
  std::cout << "profile: " << cm.profile().source << "\n\n";
  Table t({"op", "time ms", "share %", "GFLOP", "MB", "bound", "% of peak"});
  for (const auto& o : s.ops)
    t.add({o.name, fmt(o.time_s * 1e3, 3), fmt(100 * o.time_s / s.time_s, 1), fmt(o.flops / 1e9, 2),
           fmt(o.bytes / 1e6, 1), perf::to_string(o.bound),
           o.bound == perf::Bound::overhead ? "" : fmt(100 * o.peak_fraction, 1)});
  t.print(std::cout);
  std::cout << "\niteration " << fmt(s.time_s * 1e3, 3) << " ms, bound by " << perf::to_string(s.bound) << ", "
            << fmt(static_cast<double>(s.tokens) / s.time_s, 1) << " tokens/s\n";
  if (priced->json.contains("multi_step")) {
    const Json& m = priced->json["multi_step"];
    std::cout << "multi-step window of " << m["num_scheduler_steps"].get<int>() << ": first step "
              << fmt(m["first_step_ms"].get<double>(), 3) << " ms, each later step " << fmt(m["later_step_ms"].get<double>(), 3)
              << " ms, " << fmt(m["window_mean_step_ms"].get<double>(), 3) << " ms per step over the window\n";
  }
  return kOk;
}

}  // namespace

Command command_step() {
  return {"step", "time of one engine iteration with its per-op roofline breakdown",
          [](int argc, char** argv) { return guarded("step", [&] { return run_step(argc, argv); }); }};
}

}  // namespace llmsim::cli
