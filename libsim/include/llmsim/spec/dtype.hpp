#pragma once
// Numeric formats of weights, activations, tensor-core paths and the KV cache.
#include <string>
#include <string_view>

namespace llmsim::spec {

enum class DType { fp32, fp16, bf16, fp8, int8, int4, fp4 };  ///< fp4: E2M1 (NVFP4 / MXFP4 operands)

/// "fp16", "bf16", ...
std::string_view to_string(DType d);
/// Parses a dtype name; ConfigError at `path` listing valid names on failure.
DType parse_dtype(std::string_view name, const std::string& path);
/// Bytes per element (int4, fp4 = 0.5).
double bytes_per_element(DType d);

}  // namespace llmsim::spec
