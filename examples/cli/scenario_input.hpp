#pragma once
// A scenario argument read once, from a file, a pipe or standard input: `llmsim simulate s.json`,
// `llmsim simulate <(jq ... s.json)` (bash hands over /dev/fd/63, a pipe), `cat s.json | llmsim simulate -`.
// libsim's read_text_file refuses pipes and FIFOs (a path that blocks forever is an error there); the documents a user
// streams into a command — a scenario, a sweep's grid (a scenario with axes), check's benchmark result — are read
// here, bounded in size and in waiting. Standard input can be read once: one argument of a command may be "-".
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
/// Whether `path` is read as a stream here: "-" (standard input) or a pipe / FIFO (`<(jq ...)` is /dev/fd/63).
bool is_stream_argument(const std::string& path);
/// The name errors give an argument: "standard input" for "-", else the path quoted.
std::string stream_argument_name(const std::string& path);
/// ConfigError naming `option` when `path` is "-" and `other_option`'s `other_path` is "-" too: standard input holds
/// one document, so two arguments cannot both read it.
void refuse_second_stdin(const std::string& option, const std::string& path, const std::string& other_option,
                         const std::string& other_path);
/// read_scenario_text parsed as JSON (errors name the argument: "standard input" for "-").
Json read_scenario_json(const std::string& path);

}  // namespace llmsim::cli
