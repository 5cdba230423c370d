#include "llmsim/core/rng.hpp"

namespace llmsim {

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

std::uint64_t derive_seed(std::uint64_t seed, std::string_view name, std::uint64_t index) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the stream name
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return splitmix64(splitmix64(seed ^ h) + index);
}

}  // namespace llmsim
