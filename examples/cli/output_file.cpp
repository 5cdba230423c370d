#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "llmsim/core/error.hpp"
#include "signals.hpp"

namespace llmsim::cli {

namespace {
constexpr std::size_t kBuffer = 1 << 16;
}

OutputFile::OutputFile(std::string path, std::string flag, Mode mode) : path_(std::move(path)), flag_(std::move(flag)) {
  if (path_.empty()) throw ConfigError(flag_, "empty file name");
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw ConfigError(flag_, "'" + path_ + "' is a directory, expected a file name");
  journal_ = mode == Mode::append;
  in_place_ = journal_ || (exists && !S_ISREG(st.st_mode));
  if (in_place_) {
    const int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | (mode == Mode::append ? O_APPEND | O_CREAT : 0);
    fd_ = ::open(path_.c_str(), flags, 0666);
    if (fd_ < 0) fail("cannot write", errno);
    return;
  }
  // The temporary file lives in the target's directory: rename() is atomic only within one file system, and
  // creating it here checks the directory before any work is done.
  const std::filesystem::path target(path_);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string temp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  fd_ = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw ConfigError(flag_, "cannot write '" + path_ + "': no such directory '" + dir.string() + "'");
    fail("cannot write", err);
  }
  temp_ = temp;
  // mkstemp creates 0600; a result file gets the usual 0666 & ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void OutputFile::fail(const std::string& what, int err) {
  throw ConfigError(flag_, what + " '" + path_ + "': " + std::strerror(err));
}

void OutputFile::write(std::string_view data) {
  if (interrupted() && !journal_) throw_interrupted();  // a journal keeps every finished row, even now
  buffer_.append(data);
  if (buffer_.size() >= kBuffer) flush();
}

void OutputFile::flush() {
  if (fd_ < 0) throw ConfigError(flag_, "'" + path_ + "' is already closed");
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        if (interrupted() && !journal_) throw_interrupted();
        continue;
      }
      fail("cannot write", errno);
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void OutputFile::commit() {
  flush();
  if (!in_place_ || ::lseek(fd_, 0, SEEK_CUR) >= 0) {
    // fsync: the data is on disk before the name points at it. Devices and pipes cannot be synced (EINVAL).
    if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) fail("cannot write", errno);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write", errno);
  if (temp_.empty()) return;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("cannot write", errno);
  temp_.clear();
}

}  // namespace llmsim::cli
