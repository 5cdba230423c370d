#pragma once
// A scenario argument read once, from a file, a pipe or standard input: `llmsim simulate s.json`,
// `llmsim simulate <(jq ... s.json)` (bash hands over /dev/fd/63, a pipe), `cat s.json | llmsim simulate -`.
// libsim's read_text_file refuses pipes and FIFOs for every other input (a path that blocks forever is an error
// there); a scenario is the one input a user streams, so the CLI reads it here, bounded in size and in waiting.
#include <string>

#include "llmsim/core/json_view.hpp"

namespace llmsim::cli {

/// How long a pipe may stay silent before reading it is given up (its writer stuck): a minute.
inline constexpr int kStreamIdleSeconds = 60;

/// The text of a scenario argument: "-" is standard input (a terminal is refused: nothing would end it), a pipe or
/// FIFO is read to its end, anything else as libsim's read_text_file reads a file. Read once, at most
/// kMaxJsonFileBytes. ConfigError naming the argument when the stream is empty (a FIFO with no writer is one), says
/// nothing for kStreamIdleSeconds, exceeds the size, or cannot be read.
std::string read_scenario_text(const std::string& path);
/// read_scenario_text parsed as JSON (errors name the argument: "standard input" for "-").
Json read_scenario_json(const std::string& path);

}  // namespace llmsim::cli
