// Corpus readers of llama-bench rows: xiongjiedai, llama.cpp PR tables.
#include <cmath>

#include "corpus/common.hpp"
#include "corpus/readers.hpp"
#include "csv_table.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "reference_sets.hpp"
#include "repo_sets.hpp"

namespace llmsim::validation::corpus {

namespace {

// llama-bench rows, as reference_sets.cpp's llamacpp_rows predicts them.
Row llama_row(const Source& s, const std::string& where, const std::string& gpu, const std::string& model,
              const std::string& weights, const std::string& metric, double measured) {
  Row r = proto(s, where);
  r.engine = "llama.cpp";
  r.runtime = spec::to_string(spec::Runtime::llama_cpp);
  r.gpu = gpu;
  r.model = model;
  r.weights = weights;
  r.kv_dtype = "fp16";
  r.batch = 1;
  r.metric = metric;
  r.measured = measured;
  r.higher_is_better = true;
  return r;
}

perf::CostModel llama_model(const Source& s, const std::string& gpu, const std::string& model,
                            const std::string& weights) {
  return cost_model_for(gpu, model_ref(s, model), weights, "fp16", 1, true, s.dir, spec::Runtime::llama_cpp);
}

/// The first integer written in `s` ("default (512)" -> 512), or `otherwise`.
std::int64_t first_integer(const std::string& s, std::int64_t otherwise) {
  const auto b = s.find_first_of("0123456789");
  if (b == std::string::npos) return otherwise;
  return std::stoll(s.substr(b));
}

bool hbm_card(const std::string& gpu) { return !spec::Catalog::builtin().gpu(gpu).mig_profiles.empty(); }

}  // namespace

void xiongjiedai(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  for (std::size_t k = 0; k < t.rows(); ++k) {
    const std::string gpu = t.text(k, "gpu"), weights = weights_id(t.text(k, "weights"));
    const std::string test = t.text(k, "test");
    const bool pp = test.rfind("pp", 0) == 0;
    Row r = llama_row(s, "table.csv:" + t.where(k) + " (" + t.text(k, "result_file") + ")", gpu, t.text(k, "model"),
                      weights.empty() ? t.text(k, "weights") : weights, pp ? "prefill_tok_per_s" : "decode_tok_per_s",
                      t.number(k, "value"));
    r.input = t.integer(k, "input_len", 0, 0);
    r.output = t.integer(k, "output_len", 0, 0);
    r.context = pp ? static_cast<double>(r.input) : static_cast<double>(r.output) / 2;
    const auto gpus = t.integer(k, "gpus", 1);
    const double cap = t.text(k, "power_cap_w").empty() ? 0 : t.number(k, "power_cap_w");
    if (gpus > 1) {
      unscore(r, "llama.cpp layer split over " + std::to_string(gpus) + " GPUs (layers run in sequence): not modelled");
    } else if (weights.empty()) {
      unscore(r, "weight format '" + t.text(k, "weights") + "' is not in the catalogue");
    } else if (gpu == "rtx3090-24gb" && cap > 0 && cap < 350) {
      unscore(r, "RTX 3090 power-capped to " + t.text(k, "power_cap_w") + " W (stock 350 W)");
    } else if (weights == "fp16" && hbm_card(gpu)) {
      unscore(r, "llama.cpp F16 on an HBM card reaches 33-55 % of bandwidth; llmsim models a vLLM-class engine there");
    } else {
      try {
        const perf::CostModel cm = llama_model(s, gpu, r.model, weights);
        if (pp) {
          analysis::StaticBatchOptions o;
          o.max_batched_tokens = 512;  // llama-bench's default n_ubatch
          r.predicted = static_cast<double>(r.input) / analysis::static_batch(cm, 1, r.input, 1, o).prefill_s;
        } else {
          r.predicted = static_cast<double>(r.output) / analysis::decode_run_s(cm, 1, 0, r.output);
        }
      } catch (const ConfigError& e) {
        unscore(r, e.what());
      }
    }
    out.push_back(r);
  }
}

void llamacpp_prs(const Source& s, std::vector<Row>& out) {
  const CsvTable t(s.dir / "table.csv");
  for (std::size_t k = 0; k < t.rows(); ++k) {
    const std::string gpu = t.text(k, "gpu"), weights = weights_id(t.text(k, "weights"));
    const std::string metric = t.text(k, "metric");
    Row r = llama_row(s, "table.csv:" + t.where(k) + " (PR " + t.text(k, "pr") + ", " + t.text(k, "build") + ")", gpu,
                      t.text(k, "model"), weights.empty() ? t.text(k, "weights") : weights,
                      metric == "prompt_tok_per_s" ? "prefill_tok_per_s" : metric, t.number(k, "value"));
    const std::int64_t in = t.integer(k, "input_len", 0, 0), depth = t.integer(k, "depth", 0, 0),
                       ub = first_integer(t.text(k, "n_ubatch"), 512);  // "default (512)"
    r.input = in;
    r.context = static_cast<double>(depth + in);
    const std::string fa = t.text(k, "flash_attn");
    if (r.model.empty()) {
      unscore(r, "the row's model ('" + t.text(k, "llama_bench_model_type") + "') is not identified");
    } else if (weights.empty()) {
      unscore(r, "weight format '" + t.text(k, "weights") + "' is not in the catalogue");
    } else if (metric != "prompt_tok_per_s") {
      unscore(r, "metric '" + metric + "' is not a llama-bench pp/tg rate llmsim predicts");
    } else if (fa.rfind("on", 0) == 0) {
      unscore(r, "llama.cpp with flash attention on: the llama.cpp runtime is its default (FA off) of builds ~2800");
    } else if (weights == "fp16" && hbm_card(gpu)) {
      unscore(r, "llama.cpp F16 on an HBM card reaches 33-55 % of bandwidth; llmsim models a vLLM-class engine there");
    } else {
      try {
        // ppN with n_ubatch u: the prompt in u-token forward passes (u = 1..8 are batched single-token passes),
        // after `depth` tokens already in the cache (pp512@d32768): the prompt's share of the whole prefill.
        const perf::CostModel cm = llama_model(s, gpu, r.model, weights);
        analysis::StaticBatchOptions o;
        o.max_batched_tokens = ub;
        const double all = analysis::static_batch(cm, 1, depth + in, 1, o).prefill_s;
        const double before = depth > 0 ? analysis::static_batch(cm, 1, depth, 1, o).prefill_s : 0.0;
        r.predicted = static_cast<double>(in) / (all - before);
        r.note = "n_ubatch " + std::to_string(ub) + (depth > 0 ? ", after " + std::to_string(depth) + " tokens" : "");
      } catch (const ConfigError& e) {
        unscore(r, e.what());
      }
    }
    out.push_back(r);
  }
}

}  // namespace llmsim::validation::corpus
