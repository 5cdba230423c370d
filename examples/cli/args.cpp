// Command-line parsing shared by every command: Boost.Program_options with llmsim's help layout (defaults printed as
// the shortest text that reads back, words never cut at the terminal's width) and its errors (each names the option,
// an unknown option gets a next step: command_hints).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "command_hints.hpp"
#include "common.hpp"
#include "llmsim/core/error.hpp"

namespace llmsim::cli {

namespace {

// Boost prints a default through lexical_cast, which writes a double with 17 significant digits
// ("(=0.029999999999999999)"). The help shows the shortest text that reads back as the same double.
std::string clean_default(std::string name) {
  const auto open = name.rfind("(=");
  if (open == std::string::npos || name.back() != ')') return name;
  const std::string text = name.substr(open + 2, name.size() - open - 3);
  if (text.find_first_of(".eE") == std::string::npos) return name;  // integers and words print as given
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return name;
  char buf[32];
  const auto [out, ec2] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  if (ec2 != std::errc()) return name;
  return name.substr(0, open + 2) + std::string(buf, out) + ")";
}

// Boost's own layout cuts a word in two when the last space lies more than half the description column back (a
// long `PATH=VALUE` example becomes "hardware.g" / "pu=..."), and its column is 80 wide. The help is laid out here
// instead: the option column as Boost writes it ("--rel-tol arg (=0.03)"), descriptions wrapped at spaces only (a
// word longer than the line stands on a line of its own), `width` columns in all.
std::size_t help_width() {
  // $COLUMNS, as terminals and `COLUMNS=200 llmsim ... --help` set it; 100 otherwise.
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long v = std::strtol(c, &end, 10);
    if (end != c && *end == '\0' && v >= 40) return static_cast<std::size_t>(std::min<long>(v, 1000000));
  }
  return 100;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// One usage form ("usage: llmsim CMD ..." or a further "llmsim CMD ...") wrapped at `width`, at spaces outside
// [...] groups and quotes, continued under its first argument; `lead` spaces before a further form (under "usage: ").
std::string usage_form(const std::string& form, std::size_t width, std::size_t lead) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (const char c : form) {
    if (quote) {
      quote = c == quote ? 0 : quote;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']' && depth > 0) {
      --depth;
    } else if (c == ' ' && depth == 0) {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!cur.empty()) parts.push_back(cur);
  // "usage: llmsim CMD" (or "llmsim CMD") stays together; continuation lines start under what follows it.
  const std::size_t head = !parts.empty() && parts[0] == "usage:" ? 3 : 2;
  std::string line(lead, ' ');
  std::size_t indent = 0;
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i < head) {
      line += (i ? " " : "") + parts[i];
      indent = line.size() + 1;
      continue;
    }
    if (line.size() > indent && line.size() + 1 + parts[i].size() > width) {
      out += line + "\n";
      line.assign(indent - 1, ' ');
    }
    line += " " + parts[i];
  }
  return out + line;
}

// The usage text wrapped at `width`: each form ("usage: llmsim CMD ...", a further "llmsim CMD ..." line; an indented
// line continues the form above it, as a command's source writes a long usage over several lines) wrapped as one
// line, then the description after a blank line as a paragraph. Before, the source's own line breaks went through
// the form wrapper as parts of words: `step --help` printed blank lines inside its usage and its description cut
// under the usage's indent, `calibrate-fit --help` its second form as " llmsim calibrate-fit" alone.
std::string usage_text(const std::string& usage, std::size_t width) {
  const auto blank = usage.find("\n\n");
  std::vector<std::string> forms;
  std::istringstream in(usage.substr(0, blank));
  for (std::string l; std::getline(in, l);) {
    const auto first = l.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const std::string t = l.substr(first);
    if (forms.empty() || t.rfind("usage:", 0) == 0 || t.rfind("llmsim ", 0) == 0) forms.push_back(t);
    else forms.back() += " " + t;
  }
  std::string out;
  for (std::size_t i = 0; i < forms.size(); ++i)
    out += (i ? "\n" : "") + usage_form(forms[i], width, i ? std::string("usage: ").size() : 0);
  if (blank == std::string::npos) return out;
  std::string line;
  out += "\n";
  for (const auto& w : words_of(usage.substr(blank + 2))) {
    if (!line.empty() && line.size() + 1 + w.size() > width) {
      out += "\n" + line;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  return line.empty() ? out : out + "\n" + line;
}

std::string help_text(const po::options_description& opts, std::size_t width) {
  // Boost 1.74 has no caption accessor: its printout starts with "caption:" when there is one.
  std::ostringstream printed;
  printed << opts;
  std::string caption = printed.str().substr(0, printed.str().find('\n'));
  if (caption.empty() || caption.back() != ':') caption.clear();
  std::vector<std::pair<std::string, std::string>> rows;
  std::size_t widest = 0;
  for (const auto& o : opts.options()) {
    std::string left = "  " + o->format_name();
    // As Boost's format_parameter: a flag that takes no token shows no value.
    const std::string value = o->semantic()->max_tokens() ? clean_default(o->semantic()->name()) : std::string();
    if (!value.empty()) left += " " + value;
    widest = std::max(widest, left.size());
    rows.emplace_back(std::move(left), o->description());
  }
  const std::size_t column = std::min(widest + 2, width / 2);
  const std::size_t room = width > column ? width - column : 1;
  std::ostringstream out;
  if (!caption.empty()) out << caption << "\n";
  for (const auto& [left, description] : rows) {
    std::string line = left;
    bool fresh = true;  // no word on this line's description part yet
    auto pad = [&] {
      if (line.size() + 1 > column) {  // the option column is wider: the description starts on the next line
        out << line << "\n";
        line.clear();
      }
      line.resize(column, ' ');
    };
    pad();
    for (const auto& w : words_of(description)) {
      if (!fresh && line.size() + 1 + w.size() > column + room) {
        out << line << "\n";
        line.assign(column, ' ');
        fresh = true;
      }
      line += (fresh ? "" : " ") + w;
      fresh = false;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  return out.str();
}

constexpr const char* kExtra = "llmsim-extra-arguments";  // collects arguments beyond the positional ones

/// The range of an integer option's type ("-2147483648..2147483647"), empty for an option that is no integer.
template <typename T>
std::string integer_range_if(const po::value_semantic* v) {
  if (!dynamic_cast<const po::typed_value<T>*>(v)) return {};
  return std::to_string(std::numeric_limits<T>::min()) + ".." + std::to_string(std::numeric_limits<T>::max());
}
std::string integer_range(const po::options_description& all, const std::string& option) {
  std::string name = option;
  name.erase(0, name.find_first_not_of('-'));
  const auto* d = all.find_nothrow(name, false);
  if (!d) return {};
  const po::value_semantic* v = d->semantic().get();
  for (const auto& r : {integer_range_if<int>(v), integer_range_if<long>(v), integer_range_if<long long>(v),
                        integer_range_if<unsigned>(v), integer_range_if<unsigned long>(v),
                        integer_range_if<unsigned long long>(v)})
    if (!r.empty()) return r;
  return {};
}

/// Why `given` is no value of an integer option whose type holds `range`: a number in another form (1e12, 1.5) says
/// which whole number it is, or that it is none, or that it is past the type's range; anything else says the option
/// takes a whole number. The command's own checks then say the range that makes sense for it.
std::string not_an_integer(const std::string& given, const std::string& range) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(given.c_str(), &end);
  const bool number = end && end != given.c_str() && *end == '\0' && std::isfinite(v) && errno != ERANGE;
  const std::string takes = "this option takes a whole number in digits (" + range + ")";
  if (!number) return "'" + given + "' is not a whole number: " + takes;
  if (v != std::floor(v)) return "'" + given + "' is not a whole number: " + takes;
  const double lo = std::strtod(range.substr(0, range.find("..")).c_str(), nullptr);
  const double hi = std::strtod(range.substr(range.find("..") + 2).c_str(), nullptr);
  if (v < lo || v >= hi || given.find_first_of(".eE") == std::string::npos)
    return "'" + given + "' is out of range: " + takes;
  return "'" + given + "' is not written in digits: " + takes + "; write it as " +
         std::to_string(static_cast<long long>(v));
}

}  // namespace

bool parse_args(int argc, char** argv, const po::options_description& opts, po::variables_map& vm,
                const std::string& usage, const po::positional_options_description* positional) {
  po::options_description all(opts);
  all.add_options()("help,h", "show this help");
  // Boost.Program_options 1.74 loops forever formatting an error for a token that contains a
  // %placeholder% (found by fuzz/cli): no flag or value of ours needs '%', so refuse it up front.
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]).find('%') != std::string_view::npos) {
      throw ConfigError("arguments", "'%' is not allowed in arguments, got '" + std::string(argv[i]) + "'");
    }
  }
  // Arguments beyond the command's positional ones land in a hidden option, so the error can name them.
  po::positional_options_description pos = positional ? *positional : po::positional_options_description();
  const unsigned takes = pos.max_total_count();
  const bool bounded = takes != std::numeric_limits<unsigned>::max();  // nothing can follow "all the rest"
  if (bounded) pos.add(kExtra, -1);
  po::options_description parsing(all);
  parsing.add_options()(kExtra, po::value<std::vector<std::string>>());
  try {
    // Boost skips argv[0] (here the subcommand name) itself.
    po::store(po::command_line_parser(argc, argv).options(parsing).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << usage_text(usage, help_width()) << "\n\n" << help_text(all, help_width()) << "\n";
      return false;
    }
    if (bounded && vm.count(kExtra)) {
      const auto& extra = vm[kExtra].as<std::vector<std::string>>();
      std::string taken;
      for (unsigned i = 0; i < takes; ++i) taken += (i ? ", " : "") + pos.name_for_position(i);
      throw ConfigError("arguments", "unexpected argument '" + extra.front() + "' (" +
                                         (takes ? "this command takes one " + taken + " argument"
                                                : std::string("this command takes options only")) + ")");
    }
    po::notify(vm);
  } catch (const po::multiple_occurrences& e) {
    const std::string name = e.get_option_name();
    throw ConfigError(name, "given more than once" +
                                std::string(positional && positional->max_total_count() > 0 &&
                                                    name == "--" + positional->name_for_position(0)
                                                ? " (as the first argument and as " + name + ", or twice); give one"
                                                : ""));
  } catch (const po::validation_error& e) {
    // A value of the wrong type names its option (was: "arguments"), and a number past the double's range says so
    // (Boost calls both "invalid").
    const std::string what = e.what();
    std::string why = what;
    const auto a = what.find("('"), b = what.find("')");
    if (a != std::string::npos && b != std::string::npos && b > a + 2) {
      const std::string given = what.substr(a + 2, b - a - 2);
      errno = 0;
      char* end = nullptr;
      const double v = std::strtod(given.c_str(), &end);
      const std::string range = integer_range(all, e.get_option_name());
      if (end && *end == '\0' && errno == ERANGE && std::isinf(v))
        why = "the number " + given + " is out of range: expected a finite number";
      else if (!range.empty())
        why = not_an_integer(given, range);
      else
        why = "'" + given + "' is not a valid value for it";
    }
    throw ConfigError(e.get_option_name().empty() ? "arguments" : e.get_option_name(), why);
  } catch (const po::unknown_option& e) {
    std::vector<std::string> names;
    for (const auto& o : all.options()) names.push_back(o->long_name());
    throw ConfigError("arguments", unknown_option_message(e.get_option_name(), names));
  } catch (const po::error& e) {
    throw ConfigError("arguments", e.what());
  }
  return true;
}

}  // namespace llmsim::cli
