// vLLM V0's host terms against vLLM's own public throughput runs (issue 27). The blind livinfly runs (vLLM 0.9.1 V0
// behind the OpenAI server on an A100 PCIe) read 15-20 % fast at large batches, and a V0 host term of ~70 us per
// sequence per step (or ~6 ms more per step) would close that gap. These runs of the V0 engine, by its authors, on
// ShareGPT at batch ~200, bound the same terms from the other side: today's V0 profile (2 ms + 10 us per sequence,
// + 15 us served) predicts them within 10 %, and the larger term would put them 14-27 % slow
// (docs/cost-model.md, "V0 at large batches: the measured no"). Nothing here was fitted to them.
//   vllm#8092 / #8157 (Sept. 2024, 0.6.x with async output processing, 1 H100, Llama-3.1-8B, ShareGPT 1,000
//     prompts, 197.5 output tokens per request (#8125, #8335), single-step): 34.8 req/s offline (LLM.generate),
//     31.6 req/s served through the OpenAI server (MQLLMEngine, first released in 0.6.2), 14.9 req/s through 0.6.0's
//     RPC frontend (0.6.0-0.6.1: perf/rpc_frontend.hpp, whose two terms come from this table's rows).
//   vllm#7957 (Aug. 2024, main with #7049's async output processing, A100, Llama-3.1-8B, ShareGPT 1,200 prompts,
//     benchmark_throughput.py): "about 18 req/sec" offline. Its form factor is not stated: an 80 GB SXM is assumed.
// Prompt lengths are not printed in either: 230 tokens per prompt is assumed (vllm#18566's ShareGPT run of the same
// model's tokenizer: 229,711 input tokens over 1,000 requests).
#include <catch2/catch.hpp>

#include "engine_test_util.hpp"
#include "llmsim/engine/simulator.hpp"

using namespace llmsim;

namespace {

double v0_sharegpt_rps(const char* gpu, int requests, bool served, const char* release = "vllm==0.6.1") {
  // Llama-3.1-8B at its own 131,072-token limit: vLLM 0.6 turns chunked prefill on by itself (max_model_len > 32K,
  // budget 512), as the authors' runs had it.
  const Json arrival = served ? Json{{"process", "poisson"}, {"rate", 1e5}} : Json{{"process", "offline"}};
  const Json w = {{"arrival", arrival},
                  {"dataset", {{"name", "sharegpt"}, {"input_mean", 230}, {"output_mean", 197.5}}},
                  {"num_requests", requests}, {"warmup_requests", 0}};
  const Json j = {{"model", "llama-3.1-8b"}, {"hardware", {{"gpu", gpu}}},
                  {"engine", {{"runtime", release}, {"api_server", served}}}, {"workload", w}};
  return engine::simulate(test::make(j)).summary.throughput.requests_per_s;
}

}  // namespace

TEST_CASE("V0's host terms keep vLLM's own ShareGPT throughputs of the 0.6 engine within 10 %",
          "[v0_public_throughput]") {
  const double h100_offline = v0_sharegpt_rps("h100-80gb-sxm", 1000, false);
  const double h100_served = v0_sharegpt_rps("h100-80gb-sxm", 1000, true, "vllm==0.6.2");
  const double h100_served_rpc = v0_sharegpt_rps("h100-80gb-sxm", 1000, true, "vllm==0.6.1");
  const double a100_offline = v0_sharegpt_rps("a100-80gb-sxm", 1200, false);
  INFO("H100 offline " << h100_offline << " (34.8), served " << h100_served << " (31.6); A100 offline "
                       << a100_offline << " (18); H100 served through 0.6.1's RPC frontend " << h100_served_rpc
                       << " (14.9)");
  CHECK(h100_offline == Approx(34.8).epsilon(0.10));
  CHECK(h100_served == Approx(31.6).epsilon(0.10));
  CHECK(h100_served_rpc == Approx(14.9).epsilon(0.10));
  CHECK(a100_offline == Approx(18.0).epsilon(0.10));
  // The server costs the engine throughput (MQLLMEngine's per-step output path and the API server's latency).
  CHECK(h100_served < h100_offline);
}
