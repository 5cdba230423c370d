#pragma once
// kubernetes-sigs/inference-perf's streaming statistics as functions of the per-token ones llmsim predicts
// (vLLM's definitions, vllm_keys.hpp). Read from inference-perf's code of the builds before v0.3.0 (commit 3b6f82a,
// 2025-11-07: inference_perf/apis/completion.py, reportgen/base.py, client/modelserver/openai_client.py), the build
// the inference-sim corpus source ran (tests/validation/corpus/inference_perf.cpp).
//
// The client reads the aiohttp body line by line (`async for chunk_bytes in response.content`, aiohttp's
// StreamReader iterates readline()) and appends time.perf_counter() for EVERY line before it skips the blank ones.
// vLLM streams one SSE event per token, "data: {...}\n\n", so an n-token reply gives 2n + 2 stamps
//   d1 b1 d2 b2 … dn bn D bD        (d: a token's data line, b: its blank separator, D: "data: [DONE]")
// and the statistics are
//   TTFT = d1 − start                (start: just before session.post, on a new TCP connection per request)
//   TPOT = (bD − d1) / (2n + 1)      per request: the decode span over every gap, about half vLLM's TPOT
//   ITL  = every gap between consecutive stamps, pooled over all requests (numpy mean and percentiles):
//          n − 1 token gaps (b_k → d_{k+1}: vLLM's ITL) and n + 2 gaps of microseconds — d_k → b_k is the client's
//          own json.loads of the event it just stamped, bn → D and D → bD follow the last token at once.
// Hence its ITL mean = vLLM's ITL mean × (n − 1)/(2n + 1) (the gaps of microseconds add nothing), and with
// replies of one length n (ignore_eos) its percentile p is a token gap when p/100 · (2n + 1) > n + 2, namely
// vLLM's ITL percentile q = (p/100 · (2n + 1) − (n + 2)) / (n − 1) · 100 (p75 → q ≈ 49.7 for n = 248);
// below that (its median, p25, …) it is the client's parse time of one event, which no engine model predicts.
// (A request-count correction of the pooled numpy rank is below 1 / (n − 1) of a percentile point and ignored.)
#include <cstdint>
#include <string>

namespace llmsim::metrics {

/// inference-perf's TPOT ÷ vLLM's for n-token replies: (n − 1)/(2n + 1) (0 for n = 1). ConfigError for n < 1.
double inference_perf_tpot_scale(std::int64_t n);

/// How one inference-perf ITL statistic follows from vLLM's per-token ITL distribution.
struct InferencePerfItl {
  bool predictable = false;   ///< false: not a token gap (why says what it is)
  bool mean = false;          ///< the mean: vLLM's ITL mean × scale
  double scale = 1;
  double token_percentile = 0;  ///< a percentile: vLLM's ITL at this percentile (rounded to 0.001)
  std::string why;
};

/// `statistic` "mean", "median" or "p" with `percentile` in (0, 100] (inference-perf's p0.1 … p99.9), for
/// replies of n tokens each. ConfigError for n < 1, an unknown statistic or a percentile outside (0, 100].
InferencePerfItl inference_perf_itl(const std::string& statistic, double percentile, std::int64_t n);

}  // namespace llmsim::metrics
