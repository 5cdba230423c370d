#pragma once
// Shared by the harnesses: the input as text. Expected errors (ConfigError; CalibrationDataError for raw
// calibration files) are caught by each harness; anything else escaping — InternalError, a JSON library
// exception, std::out_of_range — aborts the run and is a finding, as are sanitizer reports and timeouts.
#include <cstddef>
#include <cstdint>
#include <string>

namespace llmsim::fuzz {
inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}
}  // namespace llmsim::fuzz
