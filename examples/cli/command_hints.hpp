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

/// "unrecognised option '-tp'; <a next step>" for an option the command does not have. A vLLM server flag (-tp,
/// --max-num-seqs, --kv-cache-dtype: spec::known_vllm_engine_flags) goes to --vllm-args when the command takes it
/// (`options` holds "vllm-args"); else the command's own options the word misspells; else `--help`. `options` are
/// the command's long option names without dashes.
std::string unknown_option_message(const std::string& given, const std::vector<std::string>& options);

}  // namespace llmsim::cli
