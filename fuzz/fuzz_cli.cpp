// The CLI argument parser: the input is split at newlines into argv for one of the subcommands that need no
// files (memory, step, catalog; the first byte picks it). Every run must end in an exit code (0 or 2 here):
// guarded() turns errors into codes, so an escaping exception or code 3 (internal error) is a finding.
#include <cstdlib>
#include <string>
#include <vector>

#include "common.hpp"
#include "fuzz_common.hpp"

namespace llmsim::cli {
Command command_memory();
Command command_step();
Command command_catalog();
}  // namespace llmsim::cli

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace llmsim;
  if (size == 0) return 0;
  const cli::Command cmds[] = {cli::command_memory(), cli::command_step(), cli::command_catalog()};
  const auto& cmd = cmds[data[0] % 3];
  std::vector<std::string> args = {cmd.name};
  std::string cur;
  for (std::size_t i = 1; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.size() > 64) return 0;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = cmd.run(static_cast<int>(args.size()), argv.data());
  if (rc == cli::kInternal) std::abort();  // an internal error on user input
  return 0;
}
