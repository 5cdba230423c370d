#include "reference_sets.hpp"

#include <cmath>
#include <map>

#include "csv_table.hpp"
#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::validation {

namespace fs = std::filesystem;

namespace {

perf::CostModel model_on(const spec::ModelSpec& m, const std::string& gpu_id, const std::string& quant, int tp,
                         perf::Runtime runtime = perf::Runtime::vllm_v1) {
  const auto g = spec::Catalog::builtin().gpu(gpu_id);
  spec::Quantization q;
  q.weights = spec::weight_format(quant);
  return perf::CostModel(m, q, g, perf::default_profile(g), spec::ParallelConfig{tp, 1}, true, 0, runtime);
}

const perf::OpCost& find_op(const perf::StepCost& s, const std::string& name) {
  for (const auto& o : s.ops)
    if (o.name == name) return o;
  throw InternalError("the cost model's breakdown has no op '" + name + "'");
}

}  // namespace

namespace {

constexpr double kBytesPerToken = 256;  // the probe's hidden 128 × 2-byte activations

/// The one-layer model allreduce_s reads, on `tp` GPUs of `gpu`.
perf::CostModel allreduce_probe(const std::string& gpu, int tp) {
  spec::ModelSpec m;
  m.id = "allreduce-probe";
  m.num_layers = 1;
  m.hidden_size = 128;
  m.num_heads = 8;
  m.num_kv_heads = 8;
  m.head_dim = 16;
  m.intermediate_size = 256;
  m.vocab_size = 256;
  m.max_position_embeddings = 4096;
  return model_on(m, gpu, "fp16", tp);
}

double allreduce_s(const perf::CostModel& probe, double bytes) {
  perf::BatchShape b;
  b.decode_seqs = std::max<std::int64_t>(1, std::llround(bytes / kBytesPerToken));
  b.decode_context = b.decode_seqs;
  // One layer: its two all-reduces and the embedding's, all of the same message.
  return find_op(probe.breakdown(b), "tp_allreduce").time_s / 3.0;
}

}  // namespace

double allreduce_s(const std::string& gpu, int tp, double bytes) {
  if (tp == 1) return 0;  // one GPU: no collective (the breakdown then has no tp_allreduce op)
  return allreduce_s(allreduce_probe(gpu, tp), bytes);
}

std::vector<Row> vidur_op_rows(const fs::path& reference) {
  const fs::path root = reference / "vidur" / "profiling" / "compute";
  std::vector<Row> rows;
  if (!fs::exists(root)) return rows;
  struct Gpu { const char* dir; const char* id; };
  const std::vector<Gpu> gpus = {{"a100", "a100-80gb-sxm"}, {"h100", "h100-80gb-sxm"}};
  const std::vector<std::string> models = {"Meta-Llama-3-8B", "Llama-2-7b-hf", "Meta-Llama-3-70B", "Llama-2-70b-hf"};
  // Our op <- the Vidur columns it covers.
  const std::vector<std::pair<std::string, std::vector<std::string>>> gemms = {
      {"qkv_proj", {"attn_pre_proj"}}, {"o_proj", {"attn_post_proj"}}, {"mlp", {"mlp_up_proj", "mlp_down_proj"}}};
  const std::vector<std::string> elementwise = {"input_layernorm", "post_attention_layernorm", "attn_rope",
                                                "mlp_act", "add", "add"};  // two residual adds per layer
  for (const auto& g : gpus) {
    for (const auto& mname : models) {
      const fs::path file = root / g.dir / "meta-llama" / mname / "mlp.csv";
      if (!fs::exists(file)) continue;
      const CsvTable csv(file);
      std::map<int, perf::CostModel> by_tp;
      for (std::size_t r = 0; r < csv.rows(); ++r) {
        const int tp = static_cast<int>(csv.integer(r, "num_tensor_parallel_workers", 1));
        const std::int64_t M = csv.integer(r, "num_tokens", 1);
        if (!by_tp.count(tp)) {
          spec::ModelSpec m;
          m.id = mname;
          m.num_layers = 1;  // Vidur times one layer
          m.hidden_size = static_cast<int>(csv.integer(r, "n_embd", 1));
          m.num_heads = static_cast<int>(csv.integer(r, "n_head", 1));
          m.num_kv_heads = static_cast<int>(csv.integer(r, "n_kv_head", 1));
          m.head_dim = m.hidden_size / m.num_heads;
          m.intermediate_size = static_cast<int>(csv.integer(r, "n_expanded_embd", 1));
          m.vocab_size = static_cast<int>(csv.integer(r, "vocab_size", 1));
          by_tp.emplace(tp, model_on(m, g.id, "fp16", tp));
        }
        perf::BatchShape b;
        b.add_prefill(M, 0, false);
        const auto s = by_tp.at(tp).breakdown(b);
        auto add = [&](const std::string& op, double meas_ms, bool scored) {
          Row row;
          row.set = "vidur-ops";
          row.where = "reference/vidur/.../" + std::string(g.dir) + "/" + mname + "/mlp.csv:" + csv.where(r);
          row.kind = Kind::op;
          row.engine = "pytorch (Vidur profiler)";
          row.gpu = g.id;
          row.model = mname;
          row.weights = "fp16";
          row.metric = op;
          row.tp = tp;
          row.batch = M;
          row.measured = meas_ms * 1e-3;
          row.predicted = find_op(s, op).time_s;
          row.scored = scored;
          if (!scored) row.note = "element-wise kernels modelled as HBM streaming: checked for size only";
          rows.push_back(std::move(row));
        };
        for (const auto& [ours, theirs] : gemms) {
          double meas = 0;
          for (const auto& col : theirs) meas += csv.number(r, "time_stats." + col + ".median");
          add(ours, meas, true);
        }
        if (M >= 1024) {
          double meas = 0;
          for (const auto& col : elementwise) meas += csv.number(r, "time_stats." + col + ".median");
          add("norms_rotary_act", meas, false);
        }
      }
    }
  }
  return rows;
}

std::vector<Row> vidur_allreduce_rows(const fs::path& reference) {
  std::vector<Row> rows;
  struct Node { const char* dir; const char* id; };
  for (const Node& n : {Node{"a100_dgx", "a100-80gb-sxm"}, Node{"h100_dgx", "h100-80gb-sxm"}}) {
    const fs::path file = reference / "vidur" / "profiling" / "network" / n.dir / "all_reduce.csv";
    if (!fs::exists(file)) continue;
    const CsvTable csv(file);
    // One probe per GPU count, not per row: building a cost model per row was 80 % of `make test`'s reference
    // comparisons (a few thousand rows; issue 30). The same model, so the same prediction.
    std::map<int, perf::CostModel> probes;
    for (std::size_t r = 0; r < csv.rows(); ++r) {
      const auto workers = csv.integer(r, "num_workers", 1);
      if (workers != csv.integer(r, "devices_per_node", 1) || workers < 2) continue;  // one node only
      if (csv.text(r, "collective") != "all_reduce" || csv.integer(r, "rank", 0) != 0) continue;
      Row row;
      row.set = "vidur-allreduce";
      row.where = "reference/vidur/profiling/network/" + std::string(n.dir) + "/" + csv.where(r);
      row.kind = Kind::collective;
      row.engine = "nccl";
      row.gpu = n.id;
      row.metric = "allreduce_s";
      row.tp = static_cast<int>(workers);
      // Vidur writes size = elements × 2 (fp16), i.e. bytes (vidur/profiling/collectives/collectives_wrapper.py),
      // and the median of the NCCL kernels' GPU times from the profiler (no launch gaps).
      row.message_bytes = static_cast<double>(csv.integer(r, "size", 1));
      row.measured = csv.number(r, "time_stats.all_reduce.median") * 1e-3;
      auto probe = probes.find(row.tp);
      if (probe == probes.end()) probe = probes.emplace(row.tp, allreduce_probe(n.id, row.tp)).first;
      row.predicted = allreduce_s(probe->second, row.message_bytes);
      row.scored = row.message_bytes >= kVllmCustomAllreduceMaxBytes;
      if (!row.scored) row.note = "NCCL below 8 MiB on NVLink: vLLM runs its custom all-reduce there";
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<Row> llamacpp_rows(const fs::path& reference) {
  const fs::path file = reference / "llamacpp-gpu-benchmarks.csv";
  std::vector<Row> rows;
  if (!fs::exists(file)) return rows;
  const CsvTable csv(file);
  static const std::map<std::string, std::string> gpu_ids = {
      {"RTX 3090 24GB", "rtx3090-24gb"},    {"RTX 4090 24GB", "rtx4090-24gb"},   {"L40S 48GB", "l40s-48gb"},
      {"A100 PCIe 80GB", "a100-80gb-pcie"}, {"A100 SXM4 80GB", "a100-80gb-sxm"}, {"H100 PCIe 80GB", "h100-80gb-pcie"}};
  static const std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> models = {
      {{"Llama-3-8B", "F16"}, {"llama-3.1-8b", "fp16"}},
      {{"Llama-2-7B", "F16"}, {"llama-2-7b", "fp16"}},
      {{"Llama-3-8B", "Q4_K_M (GGUF)"}, {"llama-3.1-8b", "gguf-q4_k_m"}},
      {{"Llama-3-70B", "Q4_K_M (GGUF)"}, {"llama-3.1-70b", "gguf-q4_k_m"}}};
  for (std::size_t r = 0; r < csv.rows(); ++r) {
    const auto g = gpu_ids.find(csv.text(r, "gpu"));
    if (g == gpu_ids.end() || csv.text(r, "num_gpus") != "1" ||
        csv.text(r, "notes").find("SUSPECT") != std::string::npos)
      continue;
    std::string prec = csv.text(r, "precision");
    if (prec.rfind("F16", 0) == 0) prec = "F16";
    const auto m = models.find({csv.text(r, "model"), prec});
    if (m == models.end()) continue;
    const bool gguf = prec != "F16";
    const std::string metric = csv.text(r, "metric");
    const std::int64_t in = csv.integer(r, "input_len", 0, 0), out = csv.integer(r, "output_len", 0, 0);
    const perf::CostModel cm = model_on(spec::Catalog::builtin().model(m->second.first), g->second,
                                        m->second.second, 1, perf::Runtime::llama_cpp);
    Row row;
    row.set = "llamacpp";
    row.runtime = perf::to_string(perf::Runtime::llama_cpp);
    row.where = "reference/llamacpp-gpu-benchmarks.csv:" + csv.where(r);
    row.engine = "llama.cpp";
    row.gpu = g->second;
    row.model = m->second.first;
    row.weights = m->second.second;
    row.kv_dtype = "fp16";
    row.batch = 1;
    row.higher_is_better = true;
    row.measured = csv.number(r, "value");
    if (metric == "decode_throughput_tg" && (!gguf || out == 512)) {
      // llama-bench tg: `out` tokens generated from an empty context.
      row.metric = "decode_tok_per_s";
      row.output = out;
      row.context = static_cast<double>(out) / 2;
      row.predicted = static_cast<double>(out) / analysis::decode_run_s(cm, 1, 0, out);
    } else if (metric == "decode_throughput_eval" && !gguf) {
      // After the prompt, with llama.cpp's context shift at n_ctx 512: about 400 tokens of context.
      row.metric = "decode_tok_per_s";
      row.context = 400;
      row.predicted = 1.0 / analysis::decode_run_s(cm, 1, 400, 1);
    } else if (metric == "prefill_throughput_pp" && (gguf ? in == 512 : in >= 512)) {
      // llama-bench processes the prompt in ubatches of 512 tokens.
      row.metric = "prefill_tok_per_s";
      row.input = in;
      row.context = static_cast<double>(in);
      analysis::StaticBatchOptions o;
      o.max_batched_tokens = 512;
      row.predicted = static_cast<double>(in) / analysis::static_batch(cm, 1, in, 1, o).prefill_s;
    } else {
      continue;
    }
    const bool hbm = !spec::Catalog::builtin().gpu(row.gpu).mig_profiles.empty();
    if (!gguf && hbm) {
      row.scored = false;
      row.note = "llama.cpp F16 on an HBM card reaches 33-55 % of bandwidth; llmsim models a vLLM-class engine there";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace llmsim::validation
