// Benchmark clients' samplers, reproduced (analysis/client_sampler.hpp).
#include "llmsim/analysis/client_sampler.hpp"

#include <algorithm>
#include <numeric>

#include "llmsim/core/numpy_random.hpp"

namespace llmsim::analysis {

namespace {

struct Draw {
  std::vector<std::int64_t> in, out;
  std::vector<double> at;
};

Draw draw_sglang_random(const VllmResult& r, std::int64_t n, double ratio) {
  NumpyLegacyRandom g(kSglangBenchSeed);
  Draw d;
  // Python's int() of the product truncates toward zero.
  const auto in_lo = std::max<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(r.random_input_len) * ratio), 1);
  const auto out_lo = static_cast<std::int64_t>(static_cast<double>(r.random_output_len) * ratio);
  for (std::int64_t i = 0; i < n; ++i) d.in.push_back(g.randint(in_lo, r.random_input_len + 1));
  for (std::int64_t i = 0; i < n; ++i) d.out.push_back(g.randint(out_lo, r.random_output_len + 1));
  if (r.request_rate) {
    double t = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      d.at.push_back(t);
      t += g.exponential(1.0 / *r.request_rate);
    }
  }
  return d;
}

}  // namespace

bool reproduce_sglang_random(VllmResult& r) {
  if (r.client != "sglang" || !r.input_lens.empty() || r.dataset_name != "random" || !r.random_range_ratio) return false;
  const double ratio = *r.random_range_ratio;
  if (!(ratio >= 0 && ratio <= 1) || r.random_input_len < 1 || r.random_output_len < 1) return false;
  if (r.random_input_len > 0xFFFFFFF || r.random_output_len > 0xFFFFFFF) return false;
  if (r.completed < 1 || r.completed > 1'000'000 || r.total_input_tokens <= 0 || r.total_output_tokens <= 0) return false;
  const bool sglang_server = r.backend.rfind("sglang", 0) == 0;
  // A vLLM server's failures (outputs of 0) are not in `completed`: the prompts sent are completed + those, found
  // by trying counts upwards (each count draws anew: the output lengths follow all the prompt lengths).
  const std::int64_t most = sglang_server ? r.completed : r.completed + r.completed / 16 + 8;
  for (std::int64_t n = r.completed; n <= most; ++n) {
    Draw d = draw_sglang_random(r, n, ratio);
    std::int64_t served = 0, in = 0, out = 0, out_asked = 0;
    for (std::size_t i = 0; i < d.in.size(); ++i) {
      if (d.out[i] == 0 && !sglang_server) continue;
      ++served;
      in += d.in[i];
      out += std::max<std::int64_t>(d.out[i], 1);
      out_asked += d.out[i];
    }
    if (served != r.completed) continue;
    // An SGLang server's answer to max_new_tokens 0 is one token, but which total the client writes depends on its
    // release: the tokens the server reports (livinfly's 0.4.7 lines: the 1 counted) or the lengths it asked for
    // (DataCrunch's 0.4.0 lines of 1,200-3,200 prompts: the 0 counted, e.g. 607,936 against 607,939). Either one,
    // matched exactly, confirms the draws; the server is simulated answering one token in both.
    const bool out_ok = out == r.total_output_tokens || (sglang_server && out_asked == r.total_output_tokens);
    if (in != r.total_input_tokens || !out_ok) return false;
    if (sglang_server) std::replace(d.out.begin(), d.out.end(), std::int64_t{0}, std::int64_t{1});
    r.failed = n - served;
    r.input_lens = std::move(d.in);
    r.output_lens = std::move(d.out);
    r.arrivals_s = std::move(d.at);
    r.lists_from = "SGLang bench_serving's random-dataset sampler (numpy seed " + std::to_string(kSglangBenchSeed) +
                   ", range ratio " + std::to_string(ratio).substr(0, 4) + ")" +
                   (r.request_rate ? " with its Poisson send times" : "") + ", which gives the file's token totals exactly";
    return true;
  }
  return false;
}

}  // namespace llmsim::analysis
