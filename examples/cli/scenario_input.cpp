// Reading a scenario argument from a file, a pipe or standard input (scenario_input.hpp).
#include "scenario_input.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "llmsim/core/error.hpp"
#include "llmsim/core/input_file.hpp"

namespace llmsim::cli {

namespace {

// Reads `fd` to its end. A non-blocking descriptor (a FIFO opened O_NONBLOCK) is read first and polled only when its
// writer is quiet, so a FIFO nobody writes to ends at once (read gives 0: no writer) instead of waiting; a blocking
// one (standard input) is polled before each read, so a writer that never writes cannot hold the command forever.
std::string read_whole_stream(int fd, bool nonblocking, const std::string& name) {
  std::string text;
  char buf[1 << 16];
  auto wait = [&] {
    pollfd p{fd, POLLIN, 0};
    for (;;) {
      const int r = ::poll(&p, 1, kStreamIdleSeconds * 1000);
      if (r > 0) return;
      if (r == 0)
        throw ConfigError(name, "sent nothing for " + std::to_string(kStreamIdleSeconds) +
                                    " s: its writer is stuck (read " + std::to_string(text.size()) + " bytes)");
      if (errno != EINTR) throw ConfigError(name, std::string("cannot be read: ") + std::strerror(errno));
    }
  };
  for (;;) {
    if (!nonblocking) wait();
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > kMaxJsonFileBytes)
        throw ConfigError(name, "is more than the " + std::to_string(kMaxJsonFileBytes >> 20) +
                                    " MiB a scenario may have");
      continue;
    }
    if (n == 0) break;  // end of the stream: its writer closed it (or a FIFO had none)
    if (errno == EINTR) continue;
    if (nonblocking && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      wait();
      continue;
    }
    throw ConfigError(name, std::string("cannot be read: ") + std::strerror(errno));
  }
  return text;
}

// `what`: how the stream ended empty ("is empty", "is a FIFO (pipe) that ended with no bytes ...").
std::string nonempty_scenario(std::string text, const std::string& name, const char* what) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ConfigError(name, std::string(what) +
                                ": expected a JSON document (a scenario, a grid, a benchmark result); pipe it in, e.g. "
                                "`llmsim simulate - < scenario.json` or `llmsim simulate <(cat scenario.json)`");
  return text;
}

}  // namespace

std::string stream_argument_name(const std::string& path) {
  return path == "-" ? "standard input" : "'" + printable(path) + "'";
}

bool is_stream_argument(const std::string& path) {
  if (path == "-") return true;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

void refuse_second_stdin(const std::string& option, const std::string& path, const std::string& other_option,
                         const std::string& other_path) {
  if (path == "-" && other_path == "-")
    throw ConfigError(option, "'-' (standard input) is already " + other_option +
                                  "'s: standard input holds one document; give this one as a file or a pipe (<(...))");
}

std::string read_scenario_text(const std::string& path) {
  const std::string name = stream_argument_name(path);
  if (path == "-") {
    if (::isatty(STDIN_FILENO))
      throw ConfigError(name, "is a terminal: pipe or redirect the scenario into it (`llmsim simulate - < "
                              "scenario.json`), or name the file");
    struct stat st {};
    if (::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<std::size_t>(st.st_size) > kMaxJsonFileBytes)
      throw ConfigError(name, "is more than the " + std::to_string(kMaxJsonFileBytes >> 20) +
                                  " MiB a scenario may have");
    return nonempty_scenario(read_whole_stream(STDIN_FILENO, false, name), name, "is empty");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw ConfigError(name, std::string("cannot be read: ") + std::strerror(errno));
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    return nonempty_scenario(read_whole_stream(fd, true, name), name,
                             "is a FIFO (pipe) that ended empty (no writer, or one that wrote nothing)");
  }
  return read_text_file(path, "");
}

Json read_scenario_json(const std::string& path) {
  Json doc = parse_json(read_scenario_text(path), path == "-" ? "standard input" : path);
  // A scenario's root has no field path to name: its type error names the argument ("expected an object, got
  // array" named nothing).
  if (!doc.is_object())
    JsonView(doc, path == "-" ? "scenario (standard input)" : "scenario '" + printable(path) + "'").expect_object();
  return doc;
}

}  // namespace llmsim::cli
