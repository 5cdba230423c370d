#pragma once
// Helpers the memory tests share: one definition each (the sanitizer tree compiles the tests as unity batches, where
// per-file copies in anonymous namespaces would collide).
#include <cstdint>

#include "llmsim/spec/catalog.hpp"

namespace llmsim::test {

inline const spec::Catalog& cat() { return spec::Catalog::builtin(); }

inline double gb(std::int64_t bytes) { return static_cast<double>(bytes) / 1e9; }

}  // namespace llmsim::test
