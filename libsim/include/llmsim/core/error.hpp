#pragma once
// The error hierarchy of llmsim. Every bad input becomes a ConfigError that names the field (as a dotted
// JSON path) and the offending value; Python sees ValueError, the CLI exits 2 with the message.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace llmsim {

/// `text` made fit for a one-line message: control characters (newlines, NUL, ESC, ...) and bytes that are not
/// valid UTF-8 become "\xNN"; valid UTF-8 (field guides are in Chinese) is kept. Longer than `max_bytes`, it is
/// cut at a character boundary and ends in "...". Idempotent: printable(printable(s)) == printable(s).
std::string printable(std::string_view text, std::size_t max_bytes = 200);

/// Longest message an llmsim error carries (a hostile input cannot make a multi-megabyte message).
inline constexpr std::size_t kMaxMessageBytes = 4000;

/// Root of all errors llmsim throws on purpose. The message goes through printable(), so an echoed input
/// (a file's first line, a flag's value) can never put raw control bytes or invalid UTF-8 on a terminal.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(printable(what, kMaxMessageBytes)) {}
  explicit Error(const char* what) : Error(std::string(what)) {}
};

/// A user input (scenario, model config, GPU spec, trace, flag) is invalid.
/// what() is "<path>: <problem>" for one problem, or the problems joined by "; " for several.
class ConfigError : public Error {
 public:
  ConfigError(std::string path, std::string problem);
  /// Several problems collected by a validate(): each is "path: problem".
  explicit ConfigError(std::vector<std::string> problems);
  const std::string& path() const noexcept { return path_; }
  const std::vector<std::string>& problems() const noexcept { return problems_; }

 private:
  std::string path_;
  std::vector<std::string> problems_;
};

/// A calibration raw file or profile is truncated, foreign or inconsistent.
class CalibrationDataError : public Error {
 public:
  using Error::Error;
};

/// An invariant of the simulator itself was broken: a bug in llmsim, never the user's input.
class InternalError : public Error {
 public:
  using Error::Error;
};

/// A run was stopped on request (SimulationOptions::cancel, a Python KeyboardInterrupt, a CLI signal):
/// not an error in the input or in llmsim; callers return or raise with what had finished.
class Cancelled : public Error {
 public:
  using Error::Error;
};

/// Collects validation problems so validate() can report all of them at once.
class Problems {
 public:
  void add(std::string path, std::string problem);
  /// Runs `fn`; the problems of a ConfigError it throws join these (so one validate() reports every one).
  template <class F>
  void collect(F&& fn) {
    try {
      fn();
    } catch (const ConfigError& e) {
      for (const auto& x : e.problems()) add("", x);
    }
  }
  bool empty() const noexcept { return items_.empty(); }
  /// Throws ConfigError with every collected problem; does nothing when there are none.
  void throw_if_any() const;

 private:
  std::vector<std::string> items_;
};

/// Formats a number for messages: integers without decimals, others with up to 6 significant digits.
std::string format_value(double v);
/// A value as given, for "got X" in messages: format_value's short form when it reads back as the same double,
/// else as many digits as it takes (744.0000001 is not echoed as "744" beside a bound of 744).
std::string format_given(double v);

}  // namespace llmsim

namespace llmsim::detail {
/// Throws InternalError("internal check failed: <msg> [<cond>] at <file>"). Out of line and cold, so a check costs
/// its hot caller a compare and a call, not the message's construction: small functions (the event queue's) inline.
[[noreturn, gnu::cold]] void check_failed(std::string_view msg, const char* cond, const char* file);
}  // namespace llmsim::detail

/// Always-on invariant check (Release keeps it, unlike assert): throws llmsim::InternalError. `msg` (a string) is
/// evaluated only when the check fails.
#define LLMSIM_CHECK(cond, msg)                                                \
  do {                                                                         \
    if (!(cond)) [[unlikely]]                                                  \
      ::llmsim::detail::check_failed((msg), #cond, __FILE__);                  \
  } while (0)
