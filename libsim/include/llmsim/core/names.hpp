#pragma once
// Helpers for "unknown id" messages: list the valid names and the closest matches.
#include <string>
#include <string_view>
#include <vector>

namespace llmsim {

/// Up to `max` candidates closest to `name` (edit distance, case-insensitive), best first;
/// candidates that contain `name` (or are contained in it) count as close too.
std::vector<std::string> close_matches(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t max = 3);

/// "unknown <kind> 'x'; did you mean 'y'? (valid: a, b, c)" — the text of a ConfigError.
std::string unknown_name_message(std::string_view kind, std::string_view name,
                                 const std::vector<std::string>& candidates);

/// The name in `known` that `name` (not itself in `known`) misspells, for refusing a typo in a pasted command line
/// (`--gpu-memory-utilisation`): the first within 2 edits for names of 8+ characters, 1 edit for shorter ones (a
/// swap of two neighbouring letters is one edit);
/// "" when `name` is known or resembles none. Case-sensitive (flags are).
std::string misspelling_of(std::string_view name, const std::vector<std::string>& known);

/// Lower-cases ASCII letters.
std::string to_lower(std::string_view s);

}  // namespace llmsim
