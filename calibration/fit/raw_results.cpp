#include "raw_results.hpp"

#include <algorithm>
#include <cmath>

#include "llmsim/core/error.hpp"

namespace llmsim::calibration {
namespace {

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw CalibrationDataError(source + ": " + what);
}

double positive(const JsonView& rec, std::string_view key, const std::string& source) {
  double v = 0;
  try {
    v = rec.number(key);
  } catch (const ConfigError& e) {
    bad(source, e.what());
  }
  if (!(v > 0) || !std::isfinite(v))
    bad(source, rec.child_path(key) + ": must be a positive number, got " + format_value(v));
  return v;
}

std::string text(const JsonView& rec, std::string_view key, const std::string& source) {
  try {
    return rec.string(key);
  } catch (const ConfigError& e) {
    bad(source, e.what());
  }
}

}  // namespace

RawResults parse_raw_results(const std::string& body, const std::string& source) {
  Json doc;
  try {
    doc = parse_json(body, source);
  } catch (const ConfigError& e) {
    bad(source, std::string("not a complete JSON document (truncated or damaged raw file?): ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("format") || !doc["format"].is_string() ||
      doc["format"].get<std::string>() != kRawFormat) {
    std::string found = doc.is_object() && doc.contains("format") ? doc["format"].dump() : "no \"format\" field";
    bad(source, std::string("not an llmsim calibration raw file (expected \"format\": \"") + kRawFormat +
                    "\", found " + found + "); produce one with calibration/run_all.sh");
  }
  const JsonView root(doc, "");
  RawResults raw;
  const double version = positive(root, "version", source);
  if (version != kRawVersion)
    bad(source, "raw format version " + format_value(version) + " is not supported (this llmsim reads version " +
                    std::to_string(kRawVersion) + ")");
  raw.gpu_id = text(root, "gpu_id", source);
  raw.source = text(root, "source", source);
  raw.date = text(root, "date", source);
  if (!doc.contains("device") || !doc["device"].is_object()) bad(source, "device: missing or not an object");
  raw.device = doc["device"];
  raw.device_name = raw.device.value("name", std::string("unknown device"));
  if (!doc.contains("measurements") || !doc["measurements"].is_array())
    bad(source, "measurements: missing or not an array (truncated raw file?)");
  const double declared = positive(root, "measurement_count", source);
  const auto& ms = doc["measurements"];
  if (static_cast<double>(ms.size()) != declared)
    bad(source, "truncated: measurement_count says " + format_value(declared) + " records, the file holds " +
                    std::to_string(ms.size()));

  const JsonView list(ms, "measurements");
  for (const auto& rec : list.elements()) {
    if (!rec.is_object()) bad(source, rec.path() + ": expected an object");
    const std::string test = text(rec, "test", source);
    if (rec.boolean_or("skipped", false)) {
      ++raw.skipped;
      continue;
    }
    const double t = test == "launch" || test == "copy" || test == "mem_bw" || test == "gemm" ||
                             test == "attn_decode" || test == "attn_prefill"
                         ? positive(rec, "time_us_median", source) * 1e-6
                         : 0;
    if (test == "mem_bw") {
      MemBwPoint p{text(rec, "kernel", source), positive(rec, "bytes", source), 0, t};
      p.footprint_bytes = rec.has("footprint_bytes") ? positive(rec, "footprint_bytes", source) : p.bytes;
      raw.mem_bw.push_back(p);
    } else if (test == "gemm") {
      GemmPoint p{text(rec, "dtype", source), positive(rec, "m", source), positive(rec, "n", source),
                  positive(rec, "k", source), 0, 0, t};
      p.flops = rec.has("flops") ? positive(rec, "flops", source) : 2 * p.m * p.n * p.k;
      p.bytes = positive(rec, "bytes", source);
      raw.gemm.push_back(p);
    } else if (test == "attn_decode") {
      AttnDecodePoint p{rec.string_or("impl", "unknown"), positive(rec, "batch", source), 0,
                        positive(rec, "bytes", source), t};
      p.context = rec.has("mean_context") ? positive(rec, "mean_context", source) : positive(rec, "context", source);
      if (rec.has("heads")) p.heads = positive(rec, "heads", source);
      if (rec.has("kv_heads")) p.kv_heads = positive(rec, "kv_heads", source);
      if (rec.has("head_dim")) p.head_dim = positive(rec, "head_dim", source);
      raw.attn_decode.push_back(p);
    } else if (test == "attn_prefill") {
      raw.attn_prefill.push_back({rec.string_or("impl", "unknown"), rec.string_or("dtype", "fp16"),
                                  positive(rec, "seq", source), positive(rec, "flops", source), t});
    } else if (test == "launch") {
      raw.launch.push_back({text(rec, "mode", source), positive(rec, "kernels", source), t});
    } else if (test == "copy") {
      raw.copy.push_back({text(rec, "kind", source), positive(rec, "bytes", source), t});
    } else if (std::find(raw.ignored_tests.begin(), raw.ignored_tests.end(), test) == raw.ignored_tests.end()) {
      raw.ignored_tests.push_back(test);
    }
  }
  return raw;
}

}  // namespace llmsim::calibration
