#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace llmsim::validation {

std::string batch_bucket(std::int64_t b) {
  if (b <= 0) return "serving";  // a serving run: the batch is the engine's, not the client's
  if (b <= 1) return "1";
  if (b < 16) return "2-15";
  if (b < 32) return "16-31";
  if (b < 64) return "32-63";
  return "64+";
}

std::string context_bucket(double c) {
  if (c <= 256) return "<=256";
  if (c <= 1024) return "257-1024";
  if (c <= 2048) return "1025-2048";
  return ">2048";
}

std::string size_bucket(double bytes) {
  constexpr double KiB = 1024, MiB = 1024 * KiB;
  if (bytes < 64 * KiB) return "<64KiB";
  if (bytes < MiB) return "64KiB-1MiB";
  if (bytes < 8 * MiB) return "1-8MiB";
  if (bytes < 64 * MiB) return "8-64MiB";
  return ">=64MiB";
}

std::vector<std::pair<std::string, std::string>> group_keys(const Row& r) {
  std::vector<std::pair<std::string, std::string>> k;
  const std::string tp = std::to_string(r.tp);
  switch (r.kind) {
    case Kind::engine:
      k = {{"engine.all", "all"}, {"set", r.set},         {"engine", r.engine}, {"runtime", r.runtime.empty() ? "-" : r.runtime}, {"metric", r.metric},
           {"batch", batch_bucket(r.batch)}, {"tp", tp},  {"gpu", r.gpu},       {"weights", r.weights},
           {"kv", r.kv_dtype.empty() ? "-" : r.kv_dtype}};
      if (r.context >= 0) k.emplace_back("context", context_bucket(r.context));
      break;
    case Kind::op:
      k = {{"ops.all", "all"}, {"ops.set", r.set}, {"ops.gpu", r.gpu}, {"ops.op", r.metric}, {"ops.tp", tp}};
      break;
    case Kind::collective:
      k = {{"collective.all", "all"}, {"collective.set", r.set}, {"collective.gpu", r.gpu},
           {"collective.tp", tp},     {"collective.size", size_bucket(r.message_bytes)}};
      break;
  }
  return k;
}

std::vector<GroupStats> group_stats(const std::vector<Row>& rows) {
  std::vector<std::string> dims;  // first-seen order
  std::map<std::pair<std::string, std::string>, std::vector<double>> errs;
  for (const Row& r : rows) {
    if (!r.scored) continue;
    for (auto& key : group_keys(r)) {
      if (std::find(dims.begin(), dims.end(), key.first) == dims.end()) dims.push_back(key.first);
      errs[key].push_back(r.time_error());
    }
  }
  std::vector<GroupStats> out;
  for (const auto& d : dims) {
    for (const auto& [key, e] : errs) {
      if (key.first != d) continue;
      std::vector<double> abs_e(e.size());
      std::transform(e.begin(), e.end(), abs_e.begin(), [](double x) { return std::abs(x); });
      out.push_back({d, key.second, e.size(), median(abs_e), percentile(abs_e, 0.9), median(e)});
    }
  }
  return out;
}

namespace {
bool biased(const GroupStats& g, const Bounds& b) {
  const KnownGap* gap = b.gap(g.dimension, g.value);
  return g.n >= b.min_points && std::abs(g.signed_median) > (gap ? gap->max_signed_median : b.max_signed_median);
}
bool known_gap(const GroupStats& g, const Bounds& b) {
  return g.n >= b.min_points && b.gap(g.dimension, g.value) && std::abs(g.signed_median) > b.max_signed_median;
}
}  // namespace

std::vector<std::string> violations(const std::vector<GroupStats>& groups, const Bounds& b) {
  std::vector<std::string> v;
  char buf[256];
  for (const auto& g : groups) {
    if (biased(g, b)) {
      const KnownGap* gap = b.gap(g.dimension, g.value);
      std::snprintf(buf, sizeof buf, "bias: %s=%s n=%zu signed median %+.1f%% (bound +-%.0f%%%s)", g.dimension.c_str(),
                    g.value.c_str(), g.n, 100 * g.signed_median,
                    100 * (gap ? gap->max_signed_median : b.max_signed_median),
                    gap ? ", a known gap's ratchet: it grew" : "");
      v.emplace_back(buf);
    }
    if (g.dimension == "engine.all") {
      if (g.median_abs > b.engine_median_abs) {
        std::snprintf(buf, sizeof buf, "overall: engine rows median |error| %.1f%% > %.0f%% (n=%zu)",
                      100 * g.median_abs, 100 * b.engine_median_abs, g.n);
        v.emplace_back(buf);
      }
      if (g.p90_abs > b.engine_p90_abs) {
        std::snprintf(buf, sizeof buf, "overall: engine rows p90 |error| %.1f%% > %.0f%% (n=%zu)", 100 * g.p90_abs,
                      100 * b.engine_p90_abs, g.n);
        v.emplace_back(buf);
      }
    }
  }
  return v;
}

void print_rows(std::FILE* out, const std::vector<Row>& rows) {
  std::fprintf(out, "%-17s %-14s %-19s %-16s %-10s %2s %5s %10s %-20s %10s %10s %7s\n", "set", "gpu", "model",
               "weights/kv", "engine", "tp", "batch", "in/out", "metric", "measured", "llmsim", "err%");
  std::map<std::tuple<std::string, std::string, std::string, int>, std::vector<double>> op_summary;
  for (const Row& r : rows) {
    if (r.kind == Kind::op) {
      op_summary[{r.gpu, r.model, r.metric, r.tp}].push_back(r.time_error());
      continue;
    }
    if (r.kind == Kind::collective) {
      if (std::exp2(std::round(std::log2(r.message_bytes))) != r.message_bytes) continue;  // power-of-two sizes only
    }
    char io[32];
    if (r.kind == Kind::collective)
      std::snprintf(io, sizeof io, "%.0fKiB", r.message_bytes / 1024);
    else
      std::snprintf(io, sizeof io, "%lld/%lld", static_cast<long long>(r.input), static_cast<long long>(r.output));
    const std::string wk = r.weights + (r.kv_dtype.empty() ? "" : "/" + r.kv_dtype);
    std::string model = r.model;  // "models/internlm-20b.json" -> "internlm-20b"
    if (const auto slash = model.rfind('/'); slash != std::string::npos) model = model.substr(slash + 1);
    if (model.ends_with(".json")) model.resize(model.size() - 5);
    std::fprintf(out, "%-17s %-14s %-19.19s %-16.16s %-10.10s %2d %5lld %10s %-20s %10.4g ", r.set.c_str(),
                 r.gpu.c_str(), model.c_str(), wk.c_str(), r.engine.c_str(), r.tp, static_cast<long long>(r.batch),
                 io, r.metric.c_str(), r.measured);
    if (r.predicted > 0)  // a scored row's note (e.g. llmsim saturated there) in brackets
      std::fprintf(out, "%10.4g %+7.1f%s%s\n", r.predicted, 100 * r.time_error(),
                   r.scored ? (r.note.empty() ? "" : "  [") : "  (not scored: ",
                   r.scored ? (r.note.empty() ? "" : (r.note + "]").c_str()) : (r.note + ")").c_str());
    else
      std::fprintf(out, "%10s %7s  excluded: %s\n", "-", "-", r.note.c_str());
  }
  for (const auto& [k, e] : op_summary) {
    std::vector<double> a(e.size());
    std::transform(e.begin(), e.end(), a.begin(), [](double x) { return std::abs(x); });
    std::fprintf(out, "vidur-ops         %-14s %-19s %-16s tp%-2d n=%-5zu median |err| %5.1f%%  p90 %5.1f%%  signed %+5.1f%%\n",
                 std::get<0>(k).c_str(), std::get<1>(k).c_str(), std::get<2>(k).c_str(), std::get<3>(k), e.size(),
                 100 * median(a), 100 * percentile(a, 0.9), 100 * median(e));
  }
}

void write_rows_tsv(const std::string& path, const std::vector<Row>& rows, const std::vector<bool>& blind) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("LLMSIM_VALIDATE_TSV: cannot write '" + path + "'");
  std::fprintf(f, "set\twhere\tblind\tkind\tengine\truntime\tgpu\tmodel\tweights\tkv\ttp\tbatch\tinput\toutput\t"
                  "context\tmetric\tmeasured\tpredicted\ttime_error\tscored\tnote\n");
  auto clean = [](std::string s) {
    std::replace(s.begin(), s.end(), '\t', ' ');
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%lld\t%lld\t%lld\t%.6g\t%s\t%.9g\t%.9g\t%.6g\t%d\t%s\n",
                 clean(r.set).c_str(), clean(r.where).c_str(), blind[i] ? 1 : 0, to_string(r.kind), r.engine.c_str(),
                 r.runtime.c_str(), r.gpu.c_str(), clean(r.model).c_str(), r.weights.c_str(), r.kv_dtype.c_str(), r.tp,
                 static_cast<long long>(r.batch), static_cast<long long>(r.input), static_cast<long long>(r.output),
                 r.context, r.metric.c_str(), r.measured, r.predicted, r.predicted > 0 ? r.time_error() : 0.0,
                 r.scored ? 1 : 0, clean(r.note).c_str());
  }
  std::fclose(f);
}

void print_groups(std::FILE* out, const std::vector<GroupStats>& groups, const Bounds& b) {
  std::fprintf(out, "\nGrouped errors (time scale: + = llmsim slower than measured; judged where n >= %zu: "
                    "|signed median| <= %.0f%%)\n",
               b.min_points, 100 * b.max_signed_median);
  std::fprintf(out, "%-16s %-22s %6s %9s %9s %9s  %s\n", "group", "value", "n", "med|err|", "p90|err|", "signed",
               "");
  std::string last;
  for (const auto& g : groups) {
    if (g.dimension != last && !last.empty()) std::fprintf(out, "\n");
    last = g.dimension;
    const char* mark = g.n < b.min_points  ? "(few points)"
                       : biased(g, b)      ? "BIASED"
                       : known_gap(g, b)   ? "KNOWN GAP"
                       : b.gap(g.dimension, g.value) ? "ok (known gap closed: remove it from Bounds)"
                                                     : "ok";
    std::fprintf(out, "%-16s %-22.22s %6zu %8.1f%% %8.1f%% %+8.1f%%  %s\n", g.dimension.c_str(), g.value.c_str(), g.n,
                 100 * g.median_abs, 100 * g.p90_abs, 100 * g.signed_median, mark);
  }
}

}  // namespace llmsim::validation
