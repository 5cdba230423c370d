// Benchmark clients' samplers reproduced (analysis/client_sampler.hpp): numpy's legacy generator draw for draw, and
// SGLang bench_serving's random dataset replayed where a result line's token totals confirm it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "llmsim/analysis/client_sampler.hpp"
#include "llmsim/analysis/vllm_check.hpp"
#include "llmsim/analysis/vllm_result.hpp"
#include "llmsim/core/numpy_random.hpp"

using namespace llmsim;
using namespace llmsim::analysis;

namespace {

const std::filesystem::path kLivinfly =
    std::filesystem::path(LLMSIM_DATA_DIR) / "validation" / "corpus" / "livinfly-a100pcie-vllm091-sglang047";

std::int64_t sampler_sum(const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

VllmResult sampler_run(const std::string& file, int line) {
  return pick_vllm_run(read_vllm_results((kLivinfly / file).string()), line);
}

}  // namespace

TEST_CASE("numpy's legacy generator, draw for draw", "[client_sampler]") {
  // Reference values printed by numpy (np.random.seed(s); randint / exponential / random_sample in this order);
  // RandomState's stream is frozen by numpy's compatibility policy (NEP 19).
  NumpyLegacyRandom a(1);
  for (const std::int64_t x : {38, 236, 909, 73, 768}) CHECK(a.randint(1, 1025) == x);
  for (const std::int64_t x : {203, 133, 144, 129, 71}) CHECK(a.randint(0, 257) == x);  // mask 511: rejections
  CHECK(a.exponential(0.5) == Approx(0.2119882409035374).epsilon(1e-15));
  CHECK(a.random_sample() == Approx(0.39676747423066994).epsilon(1e-15));
  NumpyLegacyRandom b(7);
  CHECK(b.randint(5, 6) == 5);  // a one-value range draws nothing
  CHECK(b.randint(5, 6) == 5);
  CHECK(b.randint(0, std::int64_t{1} << 32) == 327741615);
  CHECK(b.randint(0, std::int64_t{1} << 32) == 976413892);
  for (const std::int64_t x : {-2, 3, 0, 0}) CHECK(b.randint(-3, 4) == x);
}

TEST_CASE("SGLang's random dataset is reproduced where the line's totals confirm it", "[client_sampler]") {
  // vLLM server, Poisson 1 req/s: every request served, send times drawn after the lengths.
  const VllmResult on = sampler_run("Mistral-7B-Instruct/vllm_online_Mistral-7B-Instruct.jsonl", 1);
  REQUIRE(on.input_lens.size() == 300);
  CHECK(on.failed == 0);
  CHECK(sampler_sum(on.input_lens) == on.total_input_tokens);
  CHECK(sampler_sum(on.output_lens) == on.total_output_tokens);
  REQUIRE(on.arrivals_s.size() == 300);
  CHECK(on.arrivals_s.front() == 0);
  CHECK(std::is_sorted(on.arrivals_s.begin(), on.arrivals_s.end()));
  CHECK(on.arrivals_s.back() < on.duration_s);  // the last request was sent before the run ended
  CHECK(on.arrivals_s.back() > 0.9 * on.duration_s);
  CHECK_FALSE(on.lists_from.empty());
  // vLLM server, all at once: the prompts drawn with 0 output tokens (max_tokens 0, refused) are the failures.
  const VllmResult off = sampler_run("Mistral-7B-Instruct/vllm_offline_Mistral-7B-Instruct.jsonl", 1);
  CHECK(off.request_rate == std::nullopt);  // SGLang writes the rate as the string "Infinity"
  REQUIRE(off.completed == 996);
  CHECK(off.failed == 4);
  CHECK(std::count(off.output_lens.begin(), off.output_lens.end(), 0) == 4);
  CHECK(off.input_lens.size() == 1000);
  CHECK(off.arrivals_s.empty());
  // SGLang's server answers max_new_tokens 0 with one token: nothing failed, the totals count it.
  const VllmResult sg = sampler_run("Mistral-7B-Instruct/sglang_offline_Mistral-7B-Instruct_no.jsonl", 1);
  CHECK(sg.failed == 0);
  REQUIRE(sg.output_lens.size() == static_cast<std::size_t>(sg.completed));
  CHECK(std::count(sg.output_lens.begin(), sg.output_lens.end(), 0) == 0);
  CHECK(sampler_sum(sg.output_lens) == sg.total_output_tokens);
  // Totals the draws do not give (another --seed, another client version): no lists, the means as before.
  VllmResult other = on;
  other.input_lens.clear();
  other.output_lens.clear();
  other.arrivals_s.clear();
  other.lists_from.clear();
  other.total_output_tokens += 1;
  CHECK_FALSE(reproduce_sglang_random(other));
  CHECK(other.input_lens.empty());
  other.total_output_tokens -= 1;
  other.client = "vllm";  // vLLM's own client samples otherwise
  CHECK_FALSE(reproduce_sglang_random(other));
  other.client = "sglang";
  CHECK(reproduce_sglang_random(other));
  CHECK(other.output_lens == on.output_lens);
}

TEST_CASE("SGLang 0.4.0's client totals a request drawn with 0 output tokens as 0: still replayed", "[client_sampler]") {
  // DataCrunch's H200 sweep (data/calibration_runs/datacrunch-h200-sxm, bench_serving of the 0.4.0 image): the lines
  // of 1,200, 2,400 and 3,200 prompts draw 3, 2 and 2 requests of 0 output tokens, and their total_output_tokens
  // count those as 0 (607,936 where counting them as the server's one token gives 607,939). Before, only the latter
  // total confirmed the draws, so these lines fell back to every request at the mean lengths.
  const auto file = std::filesystem::path(LLMSIM_DATA_DIR) / "calibration_runs" / "datacrunch-h200-sxm" /
                    "llama_3_3_70b_output_online.jsonl";
  const auto runs = read_vllm_results(file.string());
  for (const auto& [line, zeros] : {std::pair{3, 3}, {4, 2}, {5, 2}}) {
    const VllmResult r = pick_vllm_run(runs, line);
    INFO("line " << line);
    REQUIRE(r.input_lens.size() == static_cast<std::size_t>(r.completed));
    CHECK(r.failed == 0);
    CHECK(sampler_sum(r.input_lens) == r.total_input_tokens);
    // The server answers each with one token, and the simulation sends it so.
    CHECK(std::count(r.output_lens.begin(), r.output_lens.end(), 0) == 0);
    CHECK(sampler_sum(r.output_lens) == r.total_output_tokens + zeros);
    CHECK(r.arrivals_s.size() == r.input_lens.size());
  }
  // A total that neither convention gives is still refused.
  VllmResult off = pick_vllm_run(runs, 3);
  off.input_lens.clear();
  off.output_lens.clear();
  off.arrivals_s.clear();
  off.lists_from.clear();
  off.total_output_tokens += 1;  // 607,937: neither 607,936 nor 607,939
  CHECK_FALSE(reproduce_sglang_random(off));
  CHECK(off.input_lens.empty());
}

TEST_CASE("check replays SGLang's sampled requests: their lengths spread the per-request latencies",
          "[client_sampler]") {
  const VllmResult on = sampler_run("Mistral-7B-Instruct/vllm_online_Mistral-7B-Instruct.jsonl", 1);
  VllmCheckOptions o;
  o.gpu = "a100-40gb-pcie";
  o.model = "mistral-7b";
  o.engine_version = "vllm==0.9.1";
  o.vllm_args = "vllm serve MODEL";
  VllmResult means = on;  // the same line as it was read before: every request at the mean lengths
  means.input_lens.clear();
  means.output_lens.clear();
  means.arrivals_s.clear();
  means.lists_from.clear();
  const VllmCheck replayed = check_vllm_result(on, o);
  const VllmCheck averaged = check_vllm_result(means, o);
  REQUIRE(replayed.fits);
  auto predicted = [](const VllmCheck& c, const std::string& key) {
    for (const auto& r : c.rows)
      if (r.key == key && r.predicted) return *r.predicted;
    return 0.0;
  };
  // Short replies carry a prefill stall over few gaps: the spread of TPOT across requests comes from the lengths.
  auto measured = [&](const std::string& key) {
    for (const auto& r : replayed.rows)
      if (r.key == key) return r.measured;
    return 0.0;
  };
  // Lengths drawn over [0, 1024] spread the E2E latency across requests (measured std 4.9 s) where requests at the
  // mean length would not; the spread of TTFT and TPOT grows with them (a prompt's prefill and a reply's stalls).
  const std::string e2e = "std_e2e_latency_ms";
  CHECK(predicted(replayed, e2e) > 10 * predicted(averaged, e2e));
  CHECK(std::abs(predicted(replayed, e2e) - measured(e2e)) < std::abs(predicted(averaged, e2e) - measured(e2e)));
  CHECK(predicted(replayed, "std_ttft_ms") > predicted(averaged, "std_ttft_ms"));
  CHECK(predicted(replayed, "std_tpot_ms") > predicted(averaged, "std_tpot_ms"));
  CHECK(predicted(replayed, "total_output_tokens") == Approx(static_cast<double>(on.total_output_tokens)));
  CHECK(predicted(replayed, "duration") == Approx(on.duration_s).epsilon(0.05));  // the last send is reproduced
  bool noted = false;
  for (const auto& n : replayed.notes) noted = noted || n.find("reproduced from SGLang bench_serving") != std::string::npos;
  CHECK(noted);
}
