#include "llmsim/core/json_view.hpp"

#include <cctype>
#include <cmath>
#include <map>
#include <limits>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim {

namespace {
constexpr int kMaxDepth = 64;

std::string line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

// Walks the structure of JSON text (well formed up to where it is asked to stop), keeping the dotted path of the
// value being read. `on_key(key, offset, frame)` sees each object key; returns false to stop early.
struct Frame {
  bool object = false;
  std::string path;                          // dotted path of this container
  std::size_t elements = 0;                  // arrays: index of the current element
  bool expect_key = true;                    // objects: the next string is a key
  std::map<std::string, std::size_t> keys;   // objects: key -> offset of its opening quote
  std::string last_key;
};

std::string child_path_of(const std::vector<Frame>& stack) {
  if (stack.empty()) return "";
  const Frame& f = stack.back();
  if (f.object) return f.path.empty() ? f.last_key : f.path + "." + f.last_key;
  return f.path + "[" + std::to_string(f.elements) + "]";
}

template <class OnKey>
std::vector<Frame> walk(std::string_view text, std::size_t stop, OnKey&& on_key) {
  std::vector<Frame> stack;
  for (std::size_t i = 0; i < text.size() && i < stop; ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      Frame f;
      f.object = c == '{';
      f.path = child_path_of(stack);
      stack.push_back(std::move(f));
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',') {
      if (!stack.empty()) {
        if (stack.back().object) stack.back().expect_key = true;
        else ++stack.back().elements;
      }
    } else if (c == '"') {
      const std::size_t start = i;
      bool escaped = false;
      for (++i; i < text.size(); ++i) {
        if (text[i] == '\\') {
          ++i;
          escaped = true;
        } else if (text[i] == '"') {
          break;
        }
      }
      if (i >= text.size() || i >= stop) break;
      if (stack.empty() || !stack.back().object || !stack.back().expect_key) continue;
      Frame& f = stack.back();
      std::string key(text.substr(start + 1, i - start - 1));
      if (escaped) key = Json::parse(text.substr(start, i - start + 1)).get<std::string>();  // "\u0061" is "a"
      f.expect_key = false;
      f.last_key = key;
      on_key(key, start, f);
    }
  }
  return stack;
}

// A key repeated within one object of text nlohmann accepted: ConfigError naming both positions and the path.
void refuse_duplicate_keys(std::string_view text, const std::string& source) {
  walk(text, text.size(), [&](const std::string& key, std::size_t start, Frame& f) {
    const auto [it, inserted] = f.keys.emplace(key, start);
    if (!inserted) {
      const std::string where = f.path.empty() ? "" : " in '" + f.path + "'";
      throw ConfigError(source, "duplicate key '" + key + "'" + where + " at " + line_column(text, start) +
                                    " (first at " + line_column(text, it->second) +
                                    "): each key may appear once in an object");
    }
  });
}

// The dotted path of the value at `offset` (for messages about a syntax error there).
std::string path_at(std::string_view text, std::size_t offset) {
  try {
    return child_path_of(walk(text, offset, [](const std::string&, std::size_t, Frame&) {}));
  } catch (const std::exception&) {
    return "";
  }
}

// Offset of the number literal `token` as a value (after ':' ',' or '['), or npos.
std::size_t number_offset(std::string_view text, const std::string& token) {
  for (std::size_t at = text.find(token); at != std::string_view::npos; at = text.find(token, at + 1)) {
    std::size_t before = at;
    while (before > 0 && std::isspace(static_cast<unsigned char>(text[before - 1]))) --before;
    const char prev = before == 0 ? ':' : text[before - 1];
    const std::size_t end = at + token.size();
    const bool delimited = end >= text.size() || std::string_view(",]} \t\r\n").find(text[end]) != std::string_view::npos;
    if ((prev == ':' || prev == ',' || prev == '[') && delimited) return at;
  }
  return std::string_view::npos;
}

// Whether brackets outside strings nest deeper than `limit` anywhere in the text (one pass, no allocation).
bool nesting_exceeds(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace

Json parse_json(std::string_view text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw ConfigError(source, "empty input, expected a JSON document");
  }
  // Nesting is bounded before parsing so a hostile document cannot exhaust the stack. Not with nlohmann's parse
  // callback: its DOM builder then rescans the parent object at the end of every child object, quadratic in the
  // children (a ModelOpt hf_quant_config.json's 22,000 `quantized_layers` took seconds).
  if (nesting_exceeds(text, kMaxDepth)) {
    throw ConfigError(source, "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  try {
    Json doc = Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/true,
                           /*ignore_comments=*/false);
    refuse_duplicate_keys(text, source);
    return doc;
  } catch (const Json::parse_error& e) {
    std::string msg = e.what();
    // nlohmann's message starts with "[json.exception.parse_error.101] "; keep the readable part.
    auto pos = msg.find("] ");
    if (pos != std::string::npos) msg = msg.substr(pos + 2);
    const std::string path = e.byte > 0 ? path_at(text, e.byte - 1) : "";
    throw ConfigError(source, "invalid JSON: " + msg + (path.empty() ? "" : " (in '" + path + "')"));
  } catch (const Json::out_of_range& e) {
    // A number beyond double's range ("1e999"): name the field it was given for, as for any out-of-range value.
    std::string msg = e.what();
    const auto q1 = msg.find('\''), q2 = msg.rfind('\'');
    const std::string token = q1 != std::string::npos && q2 > q1 ? msg.substr(q1 + 1, q2 - q1 - 1) : "";
    const std::size_t at = token.empty() ? std::string_view::npos : number_offset(text, token);
    const std::string path = at == std::string_view::npos ? "" : path_at(text, at);
    if (!path.empty())
      throw ConfigError(path, "the number " + token + " is out of range (" + source + ", " + line_column(text, at) + ")");
    throw ConfigError(source, "invalid JSON: the number " + token + " is out of range");
  } catch (const Json::exception& e) {
    throw ConfigError(source, std::string("invalid JSON: ") + e.what());
  }
}

std::string python_literals_to_json(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  bool in_string = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < in.size()) out += in[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (in.substr(i, 3) == "NaN") {
      out += "null";
      i += 2;
    } else if (in.substr(i, 9) == "-Infinity") {
      out += "\"-inf\"";
      i += 8;
    } else if (in.substr(i, 8) == "Infinity") {
      out += "\"inf\"";
      i += 7;
    } else {
      out += c;
    }
  }
  return out;
}

Json read_json_file(const std::string& path) { return parse_json(read_text_file(path, ""), path); }

bool is_inline_json(std::string_view ref) { return !ref.empty() && ref.front() == '{'; }

Json read_json_ref(const std::string& ref, const std::string& path) {
  return is_inline_json(ref) ? parse_json(ref, path) : read_json_file(ref);
}

std::string JsonView::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool JsonView::has(std::string_view key) const {
  if (!value_->is_object()) return false;
  auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

void JsonView::expect_object() const {
  if (!value_->is_object()) fail("expected an object, got " + type_name(*value_));
}

JsonView JsonView::operator[](std::string_view key) const {
  expect_object();
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) throw ConfigError(child_path(key), "missing (required)");
  return JsonView(*it, child_path(key));
}

std::vector<JsonView> JsonView::elements() const {
  if (!value_->is_array()) fail("expected an array, got " + type_name(*value_));
  std::vector<JsonView> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) {
    out.emplace_back((*value_)[i], path_ + "[" + std::to_string(i) + "]");
  }
  return out;
}

void JsonView::allow_only(const std::vector<std::string>& allowed) const {
  expect_object();
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == it.key();
    if (!ok) throw ConfigError(child_path(it.key()), unknown_name_message("field", it.key(), allowed));
  }
}

void JsonView::allow_only(std::initializer_list<std::string_view> allowed) const {
  allow_only(std::vector<std::string>(allowed.begin(), allowed.end()));
}

std::string JsonView::type_name(const Json& v) {
  if (v.is_number()) return "number " + v.dump();
  if (v.is_string()) {
    std::string s = v.get_ref<const std::string&>();
    if (s.size() > 40) s = s.substr(0, 40) + "...";
    return "string \"" + s + "\"";
  }
  return v.type_name();
}

double JsonView::as_number() const {
  if (!value_->is_number()) fail("expected a number, got " + type_name(*value_));
  double v = value_->get<double>();
  if (!std::isfinite(v)) fail("expected a finite number");
  return v;
}

std::int64_t JsonView::as_integer() const {
  if (value_->is_number_integer()) {
    if (value_->is_number_unsigned() &&
        value_->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail("integer too large: " + value_->dump());
    }
    return value_->get<std::int64_t>();
  }
  if (value_->is_number_float()) {
    double v = value_->get<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e18) return static_cast<std::int64_t>(v);
    fail("expected a whole number, got " + value_->dump());
  }
  fail("expected an integer, got " + type_name(*value_));
}

std::int64_t JsonView::as_integer_in(std::int64_t lo, std::int64_t hi) const {
  const std::int64_t v = as_integer();
  if (v < lo || v > hi) fail("must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(v));
  return v;
}

double JsonView::as_number_in(double lo, double hi) const {
  const double v = as_number();
  if (!(v >= lo && v <= hi)) fail("must be in [" + format_value(lo) + ", " + format_value(hi) + "], got " + format_given(v));
  return v;
}

std::string JsonView::as_string() const {
  if (!value_->is_string()) fail("expected a string, got " + type_name(*value_));
  return value_->get<std::string>();
}

bool JsonView::as_bool() const {
  if (!value_->is_boolean()) fail("expected true or false, got " + type_name(*value_));
  return value_->get<bool>();
}

double JsonView::number_or(std::string_view key, double fallback) const {
  return has(key) ? number(key) : fallback;
}
std::int64_t JsonView::integer_or(std::string_view key, std::int64_t fallback) const {
  return has(key) ? integer(key) : fallback;
}
std::string JsonView::string_or(std::string_view key, std::string fallback) const {
  return has(key) ? string(key) : fallback;
}
bool JsonView::boolean_or(std::string_view key, bool fallback) const {
  return has(key) ? boolean(key) : fallback;
}

void JsonView::fail(const std::string& problem) const { throw ConfigError(path_, problem); }

}  // namespace llmsim
