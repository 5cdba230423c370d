#pragma once
// numpy's legacy global generator (np.random.seed / randint / exponential: RandomState over MT19937), draw for
// draw. Benchmark clients draw their workloads with it (SGLang's bench_serving: prompt and output lengths of the
// random dataset, then the Poisson gaps between sends, after np.random.seed(--seed)); reproducing those draws
// replays the requests a result file measured, where a fresh draw of the same distribution would not.
#include <cstdint>
#include <random>

namespace llmsim {

class NumpyLegacyRandom {
 public:
  /// np.random.seed(seed): MT19937's init_genrand, which std::mt19937(seed) is by definition.
  explicit NumpyLegacyRandom(std::uint32_t seed) : mt_(seed) {}
  /// np.random.randint(low, high) with the default int64 dtype: an integer in [low, high), by masked rejection
  /// on 32-bit draws (numpy's random_bounded_uint64_fill with use_masked, for ranges below 2^32).
  /// Requires low < high and high - low <= 2^32.
  std::int64_t randint(std::int64_t low, std::int64_t high);
  /// np.random.random_sample(): 53 random bits from two 32-bit draws.
  double random_sample();
  /// np.random.exponential(scale): scale * -log(1 - random_sample()) (legacy_standard_exponential).
  double exponential(double scale);

 private:
  std::mt19937 mt_;
};

}  // namespace llmsim
