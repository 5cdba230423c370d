// numpy's legacy RandomState draws (numpy/random/src/distributions/distributions.c, legacy/legacy-distributions.c).
#include "llmsim/core/numpy_random.hpp"

#include <cmath>

#include "llmsim/core/error.hpp"

namespace llmsim {

std::int64_t NumpyLegacyRandom::randint(std::int64_t low, std::int64_t high) {
  LLMSIM_CHECK(low < high && static_cast<std::uint64_t>(high - low) <= 0x100000000ULL,
               "randint needs low < high and a range of at most 2^32");
  const std::uint64_t rng = static_cast<std::uint64_t>(high - low) - 1;  // numpy's closed range [0, rng]
  if (rng == 0) return low;
  if (rng == 0xFFFFFFFFULL) return low + static_cast<std::int64_t>(mt_());
  std::uint64_t mask = rng;  // the smallest 2^k - 1 >= rng (gen_mask)
  for (int s = 1; s < 64; s <<= 1) mask |= mask >> s;
  std::uint64_t v = 0;
  do {
    v = static_cast<std::uint64_t>(mt_()) & mask;
  } while (v > rng);
  return low + static_cast<std::int64_t>(v);
}

double NumpyLegacyRandom::random_sample() {
  const std::uint32_t a = static_cast<std::uint32_t>(mt_()) >> 5, b = static_cast<std::uint32_t>(mt_()) >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double NumpyLegacyRandom::exponential(double scale) { return scale * -std::log(1.0 - random_sample()); }

}  // namespace llmsim
