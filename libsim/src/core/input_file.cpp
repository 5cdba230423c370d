#include "llmsim/core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "llmsim/core/error.hpp"

namespace llmsim {

namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

std::string read_text_file(const std::string& path, std::string_view what, std::size_t max_bytes) {
  const std::string field(what);
  const std::string quoted = "'" + printable(path) + "'";
  if (path.empty()) throw ConfigError(field, "empty file name");
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. It has no effect on the
  // regular files that pass the type check below.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT) throw ConfigError(field, "no such file " + quoted);
    throw ConfigError(field, "cannot read file " + quoted + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw ConfigError(field, "cannot read file " + quoted + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw ConfigError(field, quoted + " is " + kind_of(st.st_mode) + ", expected a file");
  if (st.st_size < 0 || static_cast<std::size_t>(st.st_size) > max_bytes)
    throw ConfigError(field, quoted + " is " + size_text(static_cast<std::size_t>(st.st_size)) + ", more than the " +
                                 size_text(max_bytes) + " an input of this kind may have");
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t have = 0;
  for (;;) {
    if (have == text.size()) {  // the file may be longer than fstat said (/proc files say 0): read on, bounded
      if (text.size() > max_bytes)
        throw ConfigError(field, quoted + " is more than the " + size_text(max_bytes) +
                                     " an input of this kind may have");
      text.resize(std::min(max_bytes + 1, std::max<std::size_t>(4096, text.size() * 2)));
    }
    const ssize_t n = ::read(f.fd, text.data() + have, text.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ConfigError(field, "error reading file " + quoted + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  if (have > max_bytes)
    throw ConfigError(field, quoted + " is more than the " + size_text(max_bytes) + " an input of this kind may have");
  text.resize(have);
  return text;
}

}  // namespace llmsim
