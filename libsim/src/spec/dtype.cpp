#include "llmsim/spec/dtype.hpp"

#include <array>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::spec {

namespace {
constexpr std::array<std::pair<DType, std::string_view>, 7> kNames{{
    {DType::fp32, "fp32"}, {DType::fp16, "fp16"}, {DType::bf16, "bf16"}, {DType::fp8, "fp8"},
    {DType::int8, "int8"}, {DType::int4, "int4"}, {DType::fp4, "fp4"}}};
}  // namespace

std::string_view to_string(DType d) {
  for (const auto& [t, n] : kNames) {
    if (t == d) return n;
  }
  throw InternalError("unknown DType value " + std::to_string(static_cast<int>(d)));
}

DType parse_dtype(std::string_view name, const std::string& path) {
  const std::string lower = to_lower(name);
  std::vector<std::string> valid;
  for (const auto& [t, n] : kNames) {
    if (lower == n) return t;
    valid.emplace_back(n);
  }
  throw ConfigError(path, unknown_name_message("dtype", name, valid));
}

double bytes_per_element(DType d) {
  switch (d) {
    case DType::fp32: return 4.0;
    case DType::fp16:
    case DType::bf16: return 2.0;
    case DType::fp8:
    case DType::int8: return 1.0;
    case DType::int4:
    case DType::fp4: return 0.5;
  }
  throw InternalError("unknown DType value " + std::to_string(static_cast<int>(d)));
}

}  // namespace llmsim::spec
