#include "llmsim/core/csv.hpp"

#include "llmsim/core/error.hpp"

namespace llmsim {

CsvReader::CsvReader(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // the UTF-8 byte-order mark Excel writes
}

std::string CsvReader::where(std::size_t field) const {
  return source_ + ":" + std::to_string(record_line_) + ":" + std::to_string(field + 1);
}

std::string CsvReader::where() const { return source_ + ":" + std::to_string(record_line_); }

bool CsvReader::next(std::vector<std::string>& fields) {
  const std::size_t n = text_.size();
  auto at_line_end = [&](std::size_t i) { return i < n && (text_[i] == '\n' || text_[i] == '\r'); };
  auto skip_line_end = [&](std::size_t& i) {  // CRLF, LF or a lone CR
    if (text_[i] == '\r' && i + 1 < n && text_[i + 1] == '\n') ++i;
    ++i;
    ++line_;
  };
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  // Skip blank lines (only spaces and tabs).
  for (;;) {
    std::size_t i = pos_;
    while (i < n && blank(text_[i])) ++i;
    if (i >= n) {
      pos_ = n;
      return false;
    }
    if (!at_line_end(i)) break;
    pos_ = i;
    skip_line_end(pos_);
  }
  record_line_ = line_;
  std::size_t count = 0;
  std::size_t i = pos_;
  for (;;) {  // one field per turn
    if (fields.size() <= count) fields.emplace_back();
    std::string& f = fields[count];
    f.clear();
    while (i < n && blank(text_[i])) ++i;
    if (i < n && text_[i] == '"') {
      const std::size_t open_line = line_;
      ++i;
      for (;;) {
        if (i >= n)
          throw ConfigError(where(count), "a quoted field opened on line " + std::to_string(open_line) +
                                              " never closes (a '\"' is missing)");
        const char c = text_[i];
        if (c == '"') {
          if (i + 1 < n && text_[i + 1] == '"') {  // "" is one quote
            f += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (c == '\n' || (c == '\r' && !(i + 1 < n && text_[i + 1] == '\n'))) ++line_;
        f += c;
        ++i;
      }
      while (i < n && blank(text_[i])) ++i;
      if (i < n && text_[i] != ',' && !at_line_end(i))
        throw ConfigError(where(count), "unexpected text after the closing quote of \"" + printable(f, 40) +
                                            "\" (a quote inside a quoted field is written \"\")");
    } else {
      const std::size_t start = i;
      while (i < n && text_[i] != ',' && !at_line_end(i)) {
        if (text_[i] == '"')
          throw ConfigError(where(count), "a '\"' inside an unquoted field; quote the whole field (RFC 4180)");
        ++i;
      }
      std::size_t end = i;
      while (end > start && blank(text_[end - 1])) --end;
      f.assign(text_.substr(start, end - start));
    }
    ++count;
    if (i < n && text_[i] == ',') {
      ++i;
      continue;
    }
    if (i < n) skip_line_end(i);  // at a line end
    break;
  }
  fields.resize(count);
  pos_ = i;
  return true;
}

}  // namespace llmsim
