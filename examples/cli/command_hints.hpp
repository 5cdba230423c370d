#pragma once
// What `llmsim WORD` says when WORD is not a command: every unknown command gets a next step (issue 29).
#include <string>
#include <vector>

namespace llmsim::cli {

/// "unknown command 'month'; <a suggestion> (valid: ...)". The suggestion is, in order: the commands the word
/// misspells ("simulat" -> simulate); the command that does what the word asks for ("month" -> the monthly bill of
/// capacity, or a daily curve simulated over workload.days); an option typed before its command ("--json"); else
/// `llmsim --help`. `commands` are the names as typed (calibrate-fit).
std::string unknown_command_message(const std::string& given, const std::vector<std::string>& commands);

}  // namespace llmsim::cli
