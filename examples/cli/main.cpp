// `llmsim <command> [options]`: the command-line face of llmsim. Subcommands are listed in
// examples/CMakeLists.txt and each lives in cli/cmd_<name>.cpp.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "command_hints.hpp"
#include "common.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::cli {
#define LLMSIM_COMMAND(name) Command command_##name();
#include "commands.inc"
#undef LLMSIM_COMMAND
}  // namespace llmsim::cli

namespace {

std::vector<llmsim::cli::Command> commands() {
  using namespace llmsim::cli;
  return {
#define LLMSIM_COMMAND(name) command_##name(),
#include "commands.inc"
#undef LLMSIM_COMMAND
  };
}

void usage(std::ostream& out) {
  out << "llmsim — capacity and cost simulator for LLM serving\n\n"
         "usage: llmsim <command> [options]   (llmsim <command> --help for its options)\n\ncommands:\n";
  for (const auto& c : commands()) {
    std::string name = c.name;
    for (auto& ch : name) ch = ch == '_' ? '-' : ch;
    out << "  " << name << std::string(name.size() < 15 ? 15 - name.size() : 1, ' ') << c.summary << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    usage(std::cout);
    return argc < 2 ? llmsim::cli::kBadInput : llmsim::cli::kOk;
  }
  std::string wanted = argv[1];
  for (auto& ch : wanted) ch = ch == '-' ? '_' : ch;
  std::vector<std::string> names;
  for (const auto& c : commands()) {
    if (wanted == c.name) {
      const int code = c.run(argc - 1, argv + 1);
      // A result that did not reach stdout (a full disk, /dev/full) is not a success.
      const int out = llmsim::cli::guarded(argv[1], [] {
        llmsim::cli::check_stdout();
        return static_cast<int>(llmsim::cli::kOk);
      });
      return code == llmsim::cli::kOk ? out : code;
    }
    std::string n = c.name;
    for (auto& ch : n) ch = ch == '_' ? '-' : ch;
    names.push_back(n);
  }
  std::cerr << "llmsim: error: " << llmsim::printable(llmsim::cli::unknown_command_message(argv[1], names), 1000)
            << "\n";
  return llmsim::cli::kBadInput;
}
