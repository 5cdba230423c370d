#pragma once
// Reading JSON input with errors that carry the dotted path of the offending field.
//
//   auto doc = parse_json(text, "scenario.json");
//   JsonView root(doc, "");
//   root.allow_only({"model", "quant", ...});            // unknown keys -> ConfigError listing valid ones
//   double rate = root["workload"]["arrival"].number("rate");      // missing/wrong type -> ConfigError
//   int seqs = root["engine"].integer_or("max_num_seqs", 256);
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "llmsim/core/input_file.hpp"

namespace llmsim {

using Json = nlohmann::json;

/// Parses JSON text strictly: syntax errors, nesting deeper than 64 levels, empty input and a key repeated in
/// one object (RFC 8259 leaves that to the reader; last-wins would silently drop the first value) become
/// ConfigError naming `source` and the position (the duplicate: both, as line and column, with the object's
/// path). Never throws anything but ConfigError.
Json parse_json(std::string_view text, const std::string& source);

/// Python's json module writes NaN, Infinity and -Infinity, which JSON lacks (Hugging Face config.json files
/// carry them, e.g. Nemotron-H's "time_step_limit": [0.0, Infinity]; so do bench_serving results). Outside
/// strings they become null, "inf" and "-inf", so the document parses and the fields say what they were.
std::string python_literals_to_json(std::string_view text);

/// Reads (read_text_file: regular files up to kMaxJsonFileBytes) and parses a JSON file.
Json read_json_file(const std::string& path);

/// Where a scenario names a spec file (model, hardware.gpu, hardware.gpu_profile) it may give the object
/// inline instead; the field then holds the object's compact JSON text, which starts with '{' (so a file name
/// cannot). True for such a text.
bool is_inline_json(std::string_view ref);
/// The document `ref` names: an inline object's text (parsed, errors at `path`) or a file (read_json_file).
/// Nothing is written anywhere: inline specs never pass through a file.
Json read_json_ref(const std::string& ref, const std::string& path);

/// A read-only view of one JSON value and its path. Cheap to copy; must not outlive the document.
class JsonView {
 public:
  JsonView(const Json& value, std::string path) : value_(&value), path_(std::move(path)) {}

  const Json& json() const noexcept { return *value_; }
  const std::string& path() const noexcept { return path_; }
  /// Path of a child key: "a.b" + "c" -> "a.b.c".
  std::string child_path(std::string_view key) const;

  bool is_object() const noexcept { return value_->is_object(); }
  bool has(std::string_view key) const;

  /// The child `key`; ConfigError "<path>.key: missing" when absent or "<path>: expected an object".
  JsonView operator[](std::string_view key) const;
  /// Elements of an array (ConfigError when not an array); element paths are "path[i]".
  std::vector<JsonView> elements() const;

  /// Throws ConfigError when this is not an object or has keys outside `allowed` (listing them).
  void allow_only(std::initializer_list<std::string_view> allowed) const;
  void allow_only(const std::vector<std::string>& allowed) const;
  /// Throws unless this is an object.
  void expect_object() const;

  // Typed reads of this value. Numbers must be finite; integers must be whole and fit in int64.
  double as_number() const;
  std::int64_t as_integer() const;
  /// A whole number in [lo, hi] (as_integer() plus the range, named in the error): use it for every value
  /// stored in an `int`, so 1e12 is an error rather than a truncated count.
  std::int64_t as_integer_in(std::int64_t lo, std::int64_t hi) const;
  /// A finite number in [lo, hi].
  double as_number_in(double lo, double hi) const;
  std::string as_string() const;
  bool as_bool() const;

  // Typed reads of a child; the *_or forms return `fallback` when the key is absent or null.
  double number(std::string_view key) const { return (*this)[key].as_number(); }
  std::int64_t integer(std::string_view key) const { return (*this)[key].as_integer(); }
  std::string string(std::string_view key) const { return (*this)[key].as_string(); }
  bool boolean(std::string_view key) const { return (*this)[key].as_bool(); }
  double number_or(std::string_view key, double fallback) const;
  std::int64_t integer_or(std::string_view key, std::int64_t fallback) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;

  /// ConfigError at this value's path.
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  static std::string type_name(const Json& v);
  const Json* value_;
  std::string path_;
};

}  // namespace llmsim
