#pragma once
// Output files that appear whole or not at all. A full disk, a missing directory or an interrupt must never
// leave a truncated file where a later step (a CI job, a notebook) will take it for a result.
#include <string>
#include <string_view>

namespace llmsim::cli {

class OutputFile {
 public:
  enum class Mode {
    replace,  ///< a temporary file beside the target, renamed over it by commit(); removed if never committed
    append,   ///< the target itself, opened for appending (a sweep's journal): each write lands whole or fails
  };

  /// Opens the output at once, so a missing or read-only directory fails before any work (ConfigError at `flag`
  /// naming the file). A target that is not a regular file (/dev/stdout, /dev/null, a FIFO) is written in place.
  OutputFile(std::string path, std::string flag, Mode mode = Mode::replace);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  /// Without commit(): closes and removes the temporary file; the target stays as it was.
  ~OutputFile();

  /// Buffers `data`; every write(2) is checked (ConfigError at `flag` with the system's reason: "No space left on
  /// device"). Throws llmsim::Cancelled when the CLI was interrupted, so a signal stops a long write too — except
  /// in append mode, where the rows that did finish are still written.
  void write(std::string_view data);
  /// Writes what is buffered now (append mode: so that each journal line is on disk when its row is done).
  void flush();
  /// Flushes, fsyncs, closes (each checked) and renames the temporary file over the target.
  void commit();

  const std::string& path() const noexcept { return path_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  std::string path_, flag_, temp_;
  std::string buffer_;
  int fd_ = -1;
  bool in_place_ = false;
  bool journal_ = false;
};

}  // namespace llmsim::cli
