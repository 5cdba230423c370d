#pragma once
// Reading an input file whole, safely: only regular files, never more than a stated number of bytes, and
// every failure a ConfigError that names the file. A path to /dev/zero, a FIFO, a directory or a huge file
// is refused at once instead of exhausting memory or blocking forever.
#include <cstddef>
#include <string>
#include <string_view>

namespace llmsim {

/// Largest JSON input (scenario, GPU spec, HF config, grid, profile, calibration results): real ones are kilobytes.
inline constexpr std::size_t kMaxJsonFileBytes = std::size_t{64} << 20;
/// Largest CSV input (traces, empirical lengths): the 1.4M-row BurstGPT trace is ~60 MB.
inline constexpr std::size_t kMaxCsvFileBytes = std::size_t{1} << 30;

/// The bytes of the regular file `path`. ConfigError at `what` naming the path when it does not exist, cannot be
/// read, is a directory, a device, a FIFO or a socket, or holds more than `max_bytes` bytes (checked while
/// reading too, so a file that grows or lies about its size is still bounded). Opening never blocks.
std::string read_text_file(const std::string& path, std::string_view what, std::size_t max_bytes = kMaxJsonFileBytes);

}  // namespace llmsim
