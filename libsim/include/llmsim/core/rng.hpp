#pragma once
// Named, independent random streams derived from one scenario seed. Boost.Random engines (and, in the
// callers, Boost.Random distributions) make a seed reproduce a run bit for bit on every standard library.
#include <cstdint>
#include <string_view>

#include <boost/random/mersenne_twister.hpp>

namespace llmsim {

using RandomEngine = boost::random::mt19937_64;

/// Derives a 64-bit seed for stream (`name`, `index`) of scenario seed `seed` (FNV-1a + splitmix64:
/// stable across platforms and releases).
std::uint64_t derive_seed(std::uint64_t seed, std::string_view name, std::uint64_t index = 0);

/// A fresh engine for stream (`name`, `index`): rng_stream(seed, "arrivals", tenant).
inline RandomEngine rng_stream(std::uint64_t seed, std::string_view name, std::uint64_t index = 0) {
  return RandomEngine(derive_seed(seed, name, index));
}

}  // namespace llmsim
