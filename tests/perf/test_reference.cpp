// Predictions against public measurements in ../shared/reference (skipped with a WARN when it is absent):
// Vidur's per-operator A100/H100 timings, llama.cpp single-stream decode/prefill speeds, and end-to-end vLLM /
// gpt-fast batch-1 figures quoted in the reference notes. Each section prints prediction vs measurement and
// asserts a median relative error (tolerances argued in docs/cost-model.md).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"

using namespace llmsim;
namespace fs = std::filesystem;

namespace {

const fs::path kRef = LLMSIM_REFERENCE_DIR;

bool have_reference(const fs::path& p) {
  if (fs::exists(p)) return true;
  WARN("reference data not found at " << p.string() << "; skipping the comparison");
  return false;
}

// Quote-aware CSV reader (the llama.cpp table quotes fields with commas).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t col(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw std::runtime_error("reference CSV lacks column " + name);
    return static_cast<std::size_t>(it - header.begin());
  }
};

Csv read_csv(const fs::path& p) {
  std::ifstream in(p);
  REQUIRE(in);
  Csv csv;
  std::string line;
  std::getline(in, line);
  csv.header = split_csv(line);
  while (std::getline(in, line))
    if (!line.empty()) csv.rows.push_back(split_csv(line));
  return csv;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::min<double>(v.size() - 1, std::floor(q * (v.size() - 1) + 0.5)))];
}

const perf::OpCost* find_op(const perf::StepCost& s, const std::string& name) {
  for (const auto& o : s.ops)
    if (o.name == name) return &o;
  return nullptr;
}

/// llama-bench rows of llamacpp-gpu-benchmarks.csv: the cards and models in our catalogue, and the columns used.
struct LlamaBench {
  Csv csv;
  std::size_t gpu, n, model, prec, metric, in, out, val, notes;
  explicit LlamaBench(const fs::path& file) : csv(read_csv(file)) {
    gpu = csv.col("gpu"), n = csv.col("num_gpus"), model = csv.col("model"), prec = csv.col("precision");
    metric = csv.col("metric"), in = csv.col("input_len"), out = csv.col("output_len"), val = csv.col("value");
    notes = csv.col("notes");
  }
  /// Catalogue GPU id of a single-GPU, non-suspect row (empty when the card is not ours).
  std::string gpu_id(const std::vector<std::string>& r) const {
    static const std::map<std::string, std::string> ids = {
        {"RTX 3090 24GB", "rtx3090-24gb"},    {"RTX 4090 24GB", "rtx4090-24gb"},   {"L40S 48GB", "l40s-48gb"},
        {"A100 PCIe 80GB", "a100-80gb-pcie"}, {"A100 SXM4 80GB", "a100-80gb-sxm"}, {"H100 PCIe 80GB", "h100-80gb-pcie"}};
    if (r[n] != "1" || r[notes].find("SUSPECT") != std::string::npos) return "";
    const auto it = ids.find(r[gpu]);
    return it == ids.end() ? "" : it->second;
  }
};

perf::CostModel model_on(const spec::ModelSpec& m, const std::string& gpu_id, const std::string& quant = "fp16",
                         int tp = 1, perf::EngineGeneration engine = perf::EngineGeneration::vllm_v1) {
  const auto g = spec::Catalog::builtin().gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format(quant);
  return perf::CostModel(m, q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1}, true, 0, engine);
}

perf::BatchShape decode(std::int64_t seqs, std::int64_t context) {
  perf::BatchShape b;
  b.decode_seqs = seqs;
  b.decode_context = seqs * context;
  return b;
}

}  // namespace

TEST_CASE("per-operator times vs Vidur's A100/H100 profiles") {
  const fs::path root = kRef / "vidur" / "profiling" / "compute";
  if (!have_reference(root)) return;
  struct Gpu { const char* dir; const char* id; };
  const std::vector<Gpu> gpus = {{"a100", "a100-80gb-sxm"}, {"h100", "h100-80gb-sxm"}};
  const std::vector<std::string> models = {"Meta-Llama-3-8B", "Llama-2-7b-hf", "Meta-Llama-3-70B", "Llama-2-70b-hf"};
  // Our op <- the Vidur columns it covers.
  const std::vector<std::pair<std::string, std::vector<std::string>>> gemms = {
      {"qkv_proj", {"attn_pre_proj"}}, {"o_proj", {"attn_post_proj"}}, {"mlp", {"mlp_up_proj", "mlp_down_proj"}}};
  const std::vector<std::string> elementwise = {"input_layernorm", "post_attention_layernorm", "attn_rope",
                                                "mlp_act", "add", "add"};  // two residual adds per layer

  std::printf("\nVidur per-layer operator times (median ms), prediction vs measurement\n");
  std::printf("%-5s %-16s %-9s %3s %6s %10s %10s %8s\n", "gpu", "model", "op", "tp", "M", "pred_ms", "meas_ms", "err%");
  for (const auto& g : gpus) {
    std::vector<double> errs, norm_errs;
    std::map<std::string, std::vector<double>> signed_by_group;  // "tp2 M<=64" -> signed errors
    for (const auto& mname : models) {
      const fs::path file = root / g.dir / "meta-llama" / mname / "mlp.csv";
      if (!fs::exists(file)) continue;
      const Csv csv = read_csv(file);
      const auto c_tok = csv.col("num_tokens"), c_tp = csv.col("num_tensor_parallel_workers");
      std::map<int, perf::CostModel> by_tp;
      std::map<std::string, std::vector<double>> per_op;
      for (const auto& row : csv.rows) {
        const int tp = std::stoi(row[c_tp]);
        const std::int64_t M = std::stoll(row[c_tok]);
        if (!by_tp.count(tp)) {
          spec::ModelSpec m;
          m.id = mname;
          m.num_layers = 1;  // Vidur times one layer
          m.hidden_size = std::stoi(row[csv.col("n_embd")]);
          m.num_heads = std::stoi(row[csv.col("n_head")]);
          m.num_kv_heads = std::stoi(row[csv.col("n_kv_head")]);
          m.head_dim = m.hidden_size / m.num_heads;
          m.intermediate_size = std::stoi(row[csv.col("n_expanded_embd")]);
          m.vocab_size = std::stoi(row[csv.col("vocab_size")]);
          by_tp.emplace(tp, model_on(m, g.id, "fp16", tp));
        }
        perf::BatchShape b;
        b.add_prefill(M, 0, false);
        const auto s = by_tp.at(tp).breakdown(b);
        for (const auto& [ours, theirs] : gemms) {
          double meas = 0;
          for (const auto& col : theirs) meas += std::stod(row[csv.col("time_stats." + col + ".median")]);
          const double pred = find_op(s, ours)->time_s * 1e3;
          const double err = pred / meas - 1;
          errs.push_back(std::abs(err));
          per_op[ours + " tp" + std::to_string(tp)].push_back(std::abs(err));
          signed_by_group["tp" + std::to_string(tp) + (M <= 64 ? " M<=64" : " M>64")].push_back(err);
          if ((M == 1 || M == 64 || M == 512 || M == 4096) && (tp == 1 || tp == 4))
            std::printf("%-5s %-16s %-9s %3d %6lld %10.4f %10.4f %+8.1f\n", g.dir, mname.c_str(), ours.c_str(), tp,
                        static_cast<long long>(M), pred, meas, 100 * err);
        }
        double meas_elem = 0;
        for (const auto& col : elementwise) meas_elem += std::stod(row[csv.col("time_stats." + col + ".median")]);
        const auto* n = find_op(s, "norms_rotary_act");
        if (M >= 1024) norm_errs.push_back(std::abs(n->time_s * 1e3 / meas_elem - 1));
      }
      for (const auto& [k, v] : per_op)
        std::printf("  %-5s %-16s %-14s median |err| %5.1f%%  p90 %5.1f%%  (n=%zu)\n", g.dir, mname.c_str(), k.c_str(),
                    100 * median(v), 100 * percentile(v, 0.9), v.size());
    }
    for (const auto& [k, v] : signed_by_group)
      std::printf("  %-5s %-12s signed median %+5.1f%%  (n=%zu)\n", g.dir, k.c_str(), 100 * median(v), v.size());
    const double med = median(errs), p90 = percentile(errs, 0.9);
    std::printf("%s: GEMM ops median |error| %.1f%%, p90 %.1f%% over %zu points; element-wise (M>=1024) median "
                "|error| %.1f%%\n", g.dir, 100 * med, 100 * p90, errs.size(), 100 * median(norm_errs));
    INFO(g.dir << " median " << med << " p90 " << p90);
    REQUIRE(errs.size() > 1000);
    // The default A100/H100 GEMM efficiencies were fitted to these profiles (docs/cost-model.md), so this is an
    // in-sample check that the one-roofline-per-op form holds across models, TP shards and M = 1..32768: 5-7%
    // median at the fit; 10% / 25% catch a broken formula or constant without flagging tile-quantization noise.
    CHECK(med < 0.10);
    CHECK(p90 < 0.25);
    // Element-wise kernels are modelled as streaming at the HBM rate: checked only for being the right size.
    CHECK(median(norm_errs) < 0.6);
  }
}

TEST_CASE("single-stream decode and prefill vs llama.cpp measurements") {
  const fs::path file = kRef / "llamacpp-gpu-benchmarks.csv";
  if (!have_reference(file)) return;
  const std::map<std::string, std::string> model_ids = {{"Llama-3-8B", "llama-3.1-8b"}, {"Llama-2-7B", "llama-2-7b"}};
  const LlamaBench lb(file);
  std::vector<double> gddr_decode, hbm_decode, gddr_prefill;
  std::printf("\nllama.cpp F16 single-stream speeds (tokens/s): vLLM-class prediction vs measurement\n");
  std::printf("%-16s %-12s %-8s %6s %6s %9s %9s %8s\n", "gpu", "model", "metric", "in", "out", "pred", "meas", "err%");
  for (const auto& r : lb.csv.rows) {
    const std::string gpu_id = lb.gpu_id(r);
    const auto m = model_ids.find(r[lb.model]);
    if (gpu_id.empty() || r[lb.prec].rfind("F16", 0) != 0 || m == model_ids.end()) continue;
    const auto model = spec::Catalog::builtin().model(m->second);
    const auto gpu = spec::Catalog::builtin().gpu(gpu_id);
    const perf::CostModel cm = model_on(model, gpu_id);
    const std::int64_t in = std::stoll(r[lb.in]), out = std::stoll(r[lb.out]);
    const bool hbm = !gpu.mig_profiles.empty();
    const std::string metric = r[lb.metric];
    double pred = 0;
    if (metric == "decode_throughput_tg" || metric == "decode_throughput_eval") {
      // tg: generate `out` tokens from empty context; eval: after the prompt, context shift at n_ctx 512.
      const std::int64_t ctx = metric == "decode_throughput_tg" ? out / 2 : 400;
      pred = 1.0 / cm.iteration_time(decode(1, ctx));
    } else if (metric == "prefill_throughput_pp" && in >= 512) {
      // llama-bench processes the prompt in ubatches of 512 tokens.
      double t = 0;
      for (std::int64_t done = 0; done < in; done += 512) {
        perf::BatchShape b;
        b.add_prefill(std::min<std::int64_t>(512, in - done), done, done + 512 >= in);
        t += cm.iteration_time(b);
      }
      pred = static_cast<double>(in) / t;
    } else {
      continue;
    }
    const double meas = std::stod(r[lb.val]);
    const double err = pred / meas - 1;
    const bool is_decode = metric.rfind("decode", 0) == 0;
    (is_decode ? (hbm ? hbm_decode : gddr_decode) : gddr_prefill).push_back(is_decode ? err : std::abs(err));
    if (!is_decode && hbm) gddr_prefill.pop_back();  // HBM prefill rows: printed, not asserted (see below)
    std::printf("%-16s %-12s %-8s %6lld %6lld %9.1f %9.1f %+8.1f\n", r[lb.gpu].c_str(), r[lb.model].c_str(),
                is_decode ? "decode" : "prefill", static_cast<long long>(in), static_cast<long long>(out), pred, meas,
                100 * err);
  }
  std::vector<double> gddr_abs;
  for (double e : gddr_decode) gddr_abs.push_back(std::abs(e));
  std::printf("GDDR cards decode: median |error| %.1f%% (n=%zu); prefill: median |error| %.1f%% (n=%zu); HBM cards "
              "decode: median signed error %+.1f%% (n=%zu)\n",
              100 * median(gddr_abs), gddr_abs.size(), 100 * median(gddr_prefill), gddr_prefill.size(),
              100 * median(hbm_decode), hbm_decode.size());
  REQUIRE(gddr_abs.size() >= 8);
  REQUIRE(hbm_decode.size() >= 8);
  // On GeForce cards llama.cpp streams weights at 80-93% of peak like a good vLLM-class engine: agree to 15%.
  CHECK(median(gddr_abs) < 0.15);
  CHECK(median(gddr_prefill) < 0.30);
  // On A100/H100 llama.cpp reaches only 33-55% of peak bandwidth (reference README) while vLLM-class engines
  // reach ~70%: we model the latter, so we must predict faster than llama.cpp there, by a bounded margin.
  CHECK(median(hbm_decode) > 0.1);
  CHECK(median(hbm_decode) < 1.5);
}

TEST_CASE("GGUF Q4_K_M prefill and decode vs llama.cpp measurements") {
  const fs::path file = kRef / "llamacpp-gpu-benchmarks.csv";
  if (!have_reference(file)) return;
  const std::map<std::string, std::string> model_ids = {{"Llama-3-8B", "llama-3.1-8b"}, {"Llama-3-70B", "llama-3.1-70b"}};
  const LlamaBench lb(file);
  std::vector<double> prefill_abs, decode_err;
  std::printf("\nllama.cpp GGUF Q4_K_M single-stream speeds (tokens/s): prediction vs measurement\n");
  for (const auto& r : lb.csv.rows) {
    const std::string gpu_id = lb.gpu_id(r);
    const auto m = model_ids.find(r[lb.model]);
    if (gpu_id.empty() || r[lb.prec] != "Q4_K_M (GGUF)" || m == model_ids.end()) continue;
    const perf::CostModel cm = model_on(spec::Catalog::builtin().model(m->second), gpu_id, "gguf-q4_k_m");
    const std::string metric = r[lb.metric];
    double pred = 0;
    if (metric == "prefill_throughput_pp" && std::stoll(r[lb.in]) == 512) {
      perf::BatchShape b;
      b.add_prefill(512, 0, true);
      pred = 512 / cm.iteration_time(b);
    } else if (metric == "decode_throughput_tg" && std::stoll(r[lb.out]) == 512) {
      pred = 1.0 / cm.iteration_time(decode(1, 256));
    } else {
      continue;
    }
    const double err = pred / std::stod(r[lb.val]) - 1;
    (metric == "prefill_throughput_pp" ? prefill_abs : decode_err).push_back(metric == "prefill_throughput_pp" ? std::abs(err) : err);
    std::printf("%-16s %-12s %-8s %9.1f %9.1f %+8.1f\n", r[lb.gpu].c_str(), r[lb.model].c_str(),
                metric == "prefill_throughput_pp" ? "prefill" : "decode", pred, std::stod(r[lb.val]), 100 * err);
  }
  std::vector<double> decode_abs;
  for (double e : decode_err) decode_abs.push_back(std::abs(e));
  std::printf("GGUF Q4_K_M prefill: median |error| %.1f%% (n=%zu); decode: median |error| %.1f%%, signed %+.1f%% (n=%zu)\n",
              100 * median(prefill_abs), prefill_abs.size(), 100 * median(decode_abs), 100 * median(decode_err),
              decode_err.size());
  REQUIRE(prefill_abs.size() >= 8);
  REQUIRE(decode_err.size() >= 8);
  // Without the max_compute_flops plateau the A100/H100/L40S prefill was predicted 2-3x too fast (median +107%).
  CHECK(median(prefill_abs) < 0.15);
  CHECK(median(decode_abs) < 0.25);
}

TEST_CASE("end-to-end batch-1..16 speeds of vLLM and gpt-fast from the reference notes") {
  if (!have_reference(kRef / "quantization.md")) return;
  using perf::EngineGeneration;
  constexpr auto V0 = EngineGeneration::vllm_v0, V1 = EngineGeneration::vllm_v1;
  struct Point { const char* what; const char* model; const char* gpu; const char* quant; int batch; int in, out;
                 bool latency; double meas; EngineGeneration engine = EngineGeneration::vllm_v1; int tp = 1; };
  // quantization.md §5.1 [24]: Qwen2.5-7B-Instruct, vLLM 0.6.3 (the V0 engine), A100 80GB (SXM assumed), batch 1,
  // 2048 tokens.
  // quantization.md §5.1 [16]: vLLM on H100 (SXM assumed), Llama-3.1-8B, 256 in / 32 out, request latency (s).
  // gpus-and-efficiency.md B3 [S17]: gpt-fast Llama-2-7B bf16 on A100-80GB (330 W cap), batch 1.
  const std::vector<Point> points = {
      {"vLLM Qwen2.5 A100", "qwen2.5-7b", "a100-80gb-sxm", "bf16", 1, 1, 2048, false, 84.3, V0},
      {"vLLM Qwen2.5 A100", "qwen2.5-7b", "a100-80gb-sxm", "int8", 1, 1, 2048, false, 122.0, V0},
      {"vLLM Qwen2.5 A100", "qwen2.5-7b", "a100-80gb-sxm", "gptq-int4", 1, 1, 2048, false, 154.1, V0},
      {"vLLM Qwen2.5 A100", "qwen2.5-7b", "a100-80gb-sxm", "awq-int4", 1, 1, 2048, false, 148.1, V0},
      {"vLLM Llama H100", "llama-3.1-8b", "h100-80gb-sxm", "bf16", 1, 256, 32, true, 0.236},
      {"vLLM Llama H100", "llama-3.1-8b", "h100-80gb-sxm", "bf16", 4, 256, 32, true, 0.260},
      {"vLLM Llama H100", "llama-3.1-8b", "h100-80gb-sxm", "bf16", 8, 256, 32, true, 0.284},
      {"vLLM Llama H100", "llama-3.1-8b", "h100-80gb-sxm", "bf16", 16, 256, 32, true, 0.336},
      {"vLLM Llama H100", "llama-3.1-8b", "h100-80gb-sxm", "gptq-int4", 1, 256, 32, true, 0.154},
      {"vLLM Llama H100", "llama-3.1-8b", "h100-80gb-sxm", "gptq-int4", 4, 256, 32, true, 0.194},
      {"vLLM Llama H100", "llama-3.1-8b", "h100-80gb-sxm", "gptq-int4", 8, 256, 32, true, 0.216},
      {"vLLM Llama H100", "llama-3.1-8b", "h100-80gb-sxm", "gptq-int4", 16, 256, 32, true, 0.267},
      {"gpt-fast A100", "llama-2-7b", "a100-80gb-sxm", "bf16", 1, 1, 200, false, 104.9},
      // vllm-project/vllm#23197, same benchmark_latency: Llama-3.3-70B (Llama-3.1-70B's shape) on 4 H100s, TP4.
      {"vLLM 70B H100 TP4", "llama-3.1-70b", "h100-80gb-sxm", "bf16", 1, 256, 32, true, 0.558, V1, 4},
      {"vLLM 70B H100 TP4", "llama-3.1-70b", "h100-80gb-sxm", "bf16", 4, 256, 32, true, 0.629, V1, 4},
      {"vLLM 70B H100 TP4", "llama-3.1-70b", "h100-80gb-sxm", "bf16", 8, 256, 32, true, 0.700, V1, 4},
      {"vLLM 70B H100 TP4", "llama-3.1-70b", "h100-80gb-sxm", "bf16", 16, 256, 32, true, 0.855, V1, 4},
      // vllm-project/vllm#9856 (2024-10, the V0 engine then on main): Llama-3.1-8B-Instruct on 2 A100s, TP2,
      // benchmark_latency batch 8, 128 in / 256 out: 2.30 s (A100 80GB SXM assumed).
      {"vLLM V0 8B A100 TP2", "llama-3.1-8b", "a100-80gb-sxm", "bf16", 8, 128, 256, true, 2.30, V0, 2},
  };
  std::vector<double> errs;
  std::printf("\nEnd-to-end figures: prediction vs measurement\n");
  for (const auto& p : points) {
    const auto model = spec::Catalog::builtin().model(p.model);
    const perf::CostModel cm = model_on(model, p.gpu, p.quant, p.tp, p.engine);
    (void)V1;
    // Prefill all prompts in one iteration, then out-1 decode steps at growing context.
    perf::BatchShape pre;
    for (int i = 0; i < p.batch; ++i) pre.add_prefill(p.in, 0, true);
    double t = cm.iteration_time(pre), t_decode = 0;
    for (int k = 1; k < p.out; ++k) t_decode += cm.iteration_time(decode(p.batch, p.in + k));
    t += t_decode;
    const double pred = p.latency ? t : (p.out - 1) / t_decode;
    const double err = pred / p.meas - 1;
    errs.push_back(std::abs(err));
    std::printf("%-20s %-13s %-10s tp %d bs %2d: pred %8.3f meas %8.3f %s  err %+6.1f%%\n", p.what, p.model, p.quant,
                p.tp, p.batch, pred, p.meas, p.latency ? "s    " : "tok/s", 100 * err);
  }
  const double med = median(errs);
  std::printf("end-to-end median |error| %.1f%% (n=%zu)\n", 100 * med, errs.size());
  // Engines differ (vLLM V0/V1, CUDA graphs, power caps): one default profile within 10% median and 20% worst
  // case is the claim (measured: 3% median; gpt-fast's torch.compile loop without an engine the outlier at -12%).
  CHECK(med < 0.10);
  CHECK(percentile(errs, 1.0) < 0.2);
}

TEST_CASE("4-bit batch-1 decode on the RTX 4090 vs ExLlamaV2's published speeds") {
  // turboderp/exllamav2 README @01d01a1, performance table, RTX 4090: Llama 7B / 13B GPTQ 4-bit g128 without
  // act-order: 198 / 111 tokens/s (single stream, short prompt). ExLlamaV2's generator has no serving scheduler,
  // so the comparison leaves out llmsim's engine CPU term and keeps every GPU op and launch.
  if (!have_reference(kRef / "quantization.md")) return;
  std::printf("\nExLlamaV2 4-bit on the RTX 4090 (tokens/s), llmsim GPU time without the engine CPU term\n");
  for (const auto& [model, meas] : {std::pair{"llama-2-7b", 198.0}, std::pair{"llama-2-13b", 111.0}}) {
    const perf::CostModel cm = model_on(spec::Catalog::builtin().model(model), "rtx4090-24gb", "gptq-int4");
    const auto s = cm.breakdown(decode(1, 256));
    double t = 0;
    for (const auto& o : s.ops) t += o.name == "cpu" ? 0.0 : o.time_s;
    const double err = (1.0 / t) / meas - 1;
    std::printf("%-12s pred %6.1f meas %6.1f err %+5.1f%%\n", model, 1.0 / t, meas, 100 * err);
    // Formerly 35-40% too slow (q_bw 0.82 on the 4090); Marlin-class kernels reach most of its bandwidth.
    CHECK(std::fabs(err) < 0.15);
  }
}
