#pragma once
// Running build/bin/llmsim as a user would, for the tests in tests/cli.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace llmsim::test {

struct Run {
  int code = -1;
  std::string out;  // stdout, then stderr (or as the runner says)
};

/// Runs a shell command line, capturing its stdout; `timeout` turns a hang into exit 124, a failed check
/// instead of a stuck test run.
inline Run run_shell(const std::string& cmd) {
  Run r;
  FILE* p = popen(("timeout 60 " + cmd).c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string cli() { return std::string("'") + LLMSIM_CLI_PATH + "'"; }

/// `llmsim ARGS`: stdout then stderr in `out`, or stdout alone.
inline Run run(const std::string& args, bool with_stderr = true) {
  return run_shell(cli() + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A folder of this test process under the temp dir (tests of several checkouts may run at once), removed
/// when the process exits.
inline std::filesystem::path scratch_dir() {
  struct Scratch {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("llmsim_test_cli_" + std::to_string(getpid()));
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  };
  static const Scratch scratch;
  std::filesystem::create_directories(scratch.dir);
  return scratch.dir;
}

inline std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto path = scratch_dir() / name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace llmsim::test
