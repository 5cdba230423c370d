// Mooncake's request traces (github.com/kvcache-ai/Mooncake, FAST25-release/traces/*.jsonl and the earlier
// mooncake_trace.jsonl; described in FAST25-release/README.md and the FAST'25 paper's appendix): JSON Lines, one
// request per line,
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ..., 2354]}
// `timestamp` is the arrival in milliseconds, `hash_ids` the remapped hashes of the prompt's 512-token blocks:
// one id per block, the last one covering the partial block (6955 tokens → ⌈6955/512⌉ = 14 ids), and equal ids in
// two requests mean the same block content after the same prefix (the traces give every block a new id once two
// prompts differ, as the README's samples show). The engine turns them into prefix-cache hits (replica.cpp).
#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "trace_parse.hpp"

namespace llmsim::engine::detail {

namespace {

const Json* field(const Json& row, const char* name, const std::string& where) {
  const auto it = row.find(name);
  if (it == row.end() || it->is_null()) throw ConfigError(where, std::string("missing field ") + name);
  return &*it;
}

std::int64_t tokens(const Json& row, const char* name, const std::string& where, std::int64_t lo) {
  const Json& v = *field(row, name, where);
  const std::string at = where + ": field " + name;
  if (v.is_string()) return parse_token_count(v.get<std::string>(), at, lo);  // "7000" is read strictly as well
  if (!v.is_number()) throw ConfigError(at, "expected a whole number of tokens, got " + printable(v.dump(), 60));
  return parse_token_count(v.dump(), at, lo);
}

}  // namespace

RawTrace parse_mooncake(std::string_view text, const std::string& source, const spec::TraceReplay& options) {
  RawTrace out;
  Trace& t = out.trace;
  t.format = "mooncake";
  t.hash_block_tokens = options.hash_block_tokens;
  const auto hb = static_cast<std::int64_t>(options.hash_block_tokens);
  std::size_t pos = 0, line_no = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = source + ":" + std::to_string(line_no);
    const Json row = parse_json(line, where);
    if (!row.is_object()) throw ConfigError(where, "expected a JSON object per line, got " + printable(row.dump(), 60));
    TraceRow r;
    const Json& ts = *field(row, "timestamp", where);
    if (!ts.is_number() || !(ts.get<double>() >= 0) || !std::isfinite(ts.get<double>()))
      throw ConfigError(where + ": field timestamp", "expected milliseconds >= 0, got " + printable(ts.dump(), 60));
    r.arrival_s = ts.get<double>() / 1000.0;
    r.input_tokens = tokens(row, "input_length", where, 1);
    // A request that generated nothing still takes one decode step (as in the CSV traces).
    r.output_tokens = std::max<std::int64_t>(1, tokens(row, "output_length", where, 0));
    const Json& ids = *field(row, "hash_ids", where);
    const std::string hat = where + ": field hash_ids";
    if (!ids.is_array()) throw ConfigError(hat, "expected an array of block ids, got " + printable(ids.dump(), 60));
    const std::int64_t need = (r.input_tokens + hb - 1) / hb;
    const auto have = static_cast<std::int64_t>(ids.size());
    if (have != need)
      throw ConfigError(hat, std::string(have < need ? "too short" : "too long") + ": input_length " +
                                 std::to_string(r.input_tokens) + " spans " + std::to_string(need) + " blocks of " +
                                 std::to_string(hb) + " tokens (one id each, the last one partial), got " +
                                 std::to_string(have) + " ids");
    r.hash_begin = static_cast<std::int64_t>(t.hash_ids.size());
    r.hash_count = static_cast<std::int32_t>(have);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const Json& id = ids[k];
      if (!id.is_number_integer() || (id.is_number_integer() && !id.is_number_unsigned() && id.get<std::int64_t>() < 0))
        throw ConfigError(hat + "[" + std::to_string(k) + "]", "expected a block id (an integer >= 0), got " +
                                                                   printable(id.dump(), 60));
      t.hash_ids.push_back(id.get<std::uint64_t>());
    }
    out.first_s = std::min(out.first_s, r.arrival_s);
    t.rows.push_back(r);
  }
  return out;
}

}  // namespace llmsim::engine::detail
