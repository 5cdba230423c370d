// The cost model's token table is filled on first use, a row on the first step that reads it (perf/token_table.hpp): a row's
// bits must not depend on when, in which order, or in which copy it was filled, nor differ from the direct path's.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"

using namespace llmsim;

namespace {

perf::BatchShape mixed_step(std::int64_t prefill, std::int64_t decode) {
  perf::BatchShape b;
  if (prefill > 0) {
    b.prefill_seqs = 1;
    b.prefill_tokens = prefill;
    b.prefill_kv_tokens = prefill;
    b.prefill_attn_pairs = static_cast<double>(prefill) * static_cast<double>(prefill + 1) / 2;
    b.prefill_last_chunks = 1;
  }
  b.decode_seqs = decode;
  b.decode_context = decode * 512;
  return b;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("token table rows filled on first use give the same bits in any order, in copies, and past the table") {
  const auto& cat = spec::Catalog::builtin();
  const auto g = cat.gpu("h100-80gb-sxm");
  const auto make = [&](std::int64_t table) {
    return perf::CostModel(cat.model("llama-3.1-8b"), spec::Quantization{}, g, perf::default_profile(g),
                           spec::ParallelConfig{1, 1}, true, 0, perf::Runtime::vllm_v1, table);
  };
  std::vector<perf::BatchShape> steps;
  for (std::int64_t p : {0, 1, 7, 512, 2048, 4000})
    for (std::int64_t d : {0, 1, 3, 64, 200})
      if (p + d > 0) steps.push_back(mixed_step(p, d));
  const perf::CostModel up = make(4096), down = make(4096), none = make(0);
  std::vector<double> t_up(steps.size()), t_down(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) t_up[i] = up.iteration_time(steps[i]);
  // A copy taken half-way through the other order holds the rows filled so far and fills the rest itself.
  const std::size_t half = steps.size() / 2;
  for (std::size_t i = steps.size(); i-- > half;) t_down[i] = down.iteration_time(steps[i]);
  const perf::CostModel copy = down.with_host_per_seq_s(0.0);
  for (std::size_t i = half; i-- > 0;) t_down[i] = copy.iteration_time(steps[i]);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("step " << i << ": " << steps[i].prefill_tokens << " prefill + " << steps[i].decode_seqs << " decode tokens");
    CHECK(same_bits(t_up[i], t_down[i]));
    CHECK(same_bits(t_up[i], down.iteration_time(steps[i])));
    CHECK(same_bits(t_up[i], none.iteration_time(steps[i])));  // no table: every step priced directly
    CHECK(same_bits(t_up[i], up.breakdown(steps[i]).time_s));
  }
}
