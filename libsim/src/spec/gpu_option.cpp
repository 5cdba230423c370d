#include "llmsim/spec/gpu_option.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"

namespace llmsim::spec {

namespace {

constexpr int kMaxCount = 64;

// A tail after '@' or '+' is a suffix only when it could not be part of a file name ("gpu@2.json", "a/b+c/x.json").
bool suffix_like(const std::string& tail) {
  return tail.find('/') == std::string::npos && tail.find('.') == std::string::npos;
}

std::string gb_per_s(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", bytes_per_s / 1e9);
  return buf;
}

}  // namespace

GpuOption parse_gpu_option(const std::string& text, const std::string& path) {
  GpuOption o;
  o.text = text;
  std::string rest = text;
  // Suffixes come off the end, in either order, each at most once.
  bool parallel_given = false;
  while (true) {
    const auto cut = rest.find_last_of("@+");
    if (cut == std::string::npos || !suffix_like(rest.substr(cut + 1))) break;
    const std::string suffix = rest.substr(cut);
    if (suffix == "@pp" || suffix == "@tp") {
      if (parallel_given) throw ConfigError(path, "two parallel suffixes in '" + text + "' (give one of @tp, @pp)");
      parallel_given = true;
      o.pipeline = suffix == "@pp";
    } else if (suffix == "+nvlink") {
      if (o.nvlink_bridge) throw ConfigError(path, "'+nvlink' given twice in '" + text + "'");
      o.nvlink_bridge = true;
    } else if (suffix.rfind("+offload", 0) == 0) {
      if (o.kv_offload_gb > 0) throw ConfigError(path, "'+offload' given twice in '" + text + "'");
      const std::string gib = suffix.substr(8);
      const bool digits = !gib.empty() && gib.size() <= 7 &&
                          std::all_of(gib.begin(), gib.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
      if (!digits || std::stoi(gib) < 1 || std::stoi(gib) > 1000000)
        throw ConfigError(path, "'+offload' in '" + text + "' needs the host KV tier's GiB, 1..1000000 (e.g. +offload64), got '" +
                                    gib + "'");
      o.kv_offload_gb = std::stoi(gib);
    } else {
      throw ConfigError(path, "unknown suffix '" + suffix + "' in '" + text + "' (valid: @tp, @pp, +nvlink, +offload<GiB>)");
    }
    rest.resize(cut);
  }
  // "<N>x<id>": a count prefix only when digits are followed by 'x', 'X' or '×' (ids themselves may start with
  // digits, such as a file "3090.json").
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  std::size_t mark = 0;
  if (digits > 0 && digits < rest.size() && (rest[digits] == 'x' || rest[digits] == 'X')) mark = 1;
  else if (digits > 0 && rest.compare(digits, 2, "\xC3\x97") == 0) mark = 2;  // U+00D7 MULTIPLICATION SIGN
  if (mark > 0) {
    const std::string count = rest.substr(0, digits);
    if (digits > 3 || std::stoi(count) < 1 || std::stoi(count) > kMaxCount)
      throw ConfigError(path, "GPU count in '" + text + "' must be 1.." + std::to_string(kMaxCount) + ", got " + count);
    o.count = std::stoi(count);
    o.count_given = true;
    rest = rest.substr(digits + mark);
  }
  if (rest.empty()) throw ConfigError(path, "missing GPU id in '" + text + "'");
  if (rest.find_first_of("@+") != std::string::npos && suffix_like(rest.substr(rest.find_first_of("@+") + 1)))
    throw ConfigError(path, "unexpected '" + rest.substr(rest.find_first_of("@+")) + "' in '" + text +
                                "' (write [<N>x]<gpu>[@tp|@pp][+nvlink][+offload<GiB>])");
  o.card = rest;
  return o;
}

ParallelConfig split_for(const GpuOption& o, ParallelConfig given, const std::string& tp_path) {
  if (!o.count_given) {
    if (o.pipeline && given.tp > 1)
      throw ConfigError(tp_path, "'" + o.text + "' asks for a pipeline (@pp) but tp is " + std::to_string(given.tp));
    return given;
  }
  const ParallelConfig split = o.pipeline ? ParallelConfig{1, o.count} : ParallelConfig{o.count, 1};
  // What the user wrote counts, a 1 included. A pp given alone leaves tp = N / pp ("2x…" with pp 2 is a pipeline,
  // as before); a tp given alone leaves the option's pp.
  // A value other than 1 was written by someone (a default is 1), so it counts whether or not the flag says so.
  const bool tp_given = given.tp_given || given.tp != 1, pp_given = given.pp_given || given.pp != 1;
  ParallelConfig want = given;
  if (!tp_given && !pp_given) {
    want.tp = split.tp;
    want.pp = split.pp;
  } else if (!tp_given) {
    want.tp = !o.pipeline && given.pp >= 1 && o.count % given.pp == 0 ? o.count / given.pp : split.tp;
  } else if (!pp_given) {
    want.pp = split.pp;  // a given tp never turns the option into a pipeline: "2x…" with tp 1 is refused
  }
  if (want.gpus() == o.count && (!o.pipeline || want.tp == 1)) return want;
  std::string hint;
  if (want.gpus() < o.count && o.count % want.gpus() == 0)
    hint = "; '" + o.text + "' is one replica of " + std::to_string(o.count) +
           " GPUs: for " + std::to_string(o.count / want.gpus()) + " replicas of tp " + std::to_string(want.tp) +
           " x pp " + std::to_string(want.pp) + " name the card without the count and set the replicas";
  throw ConfigError(tp_path, "tp " + std::to_string(want.tp) + " x pp " + std::to_string(want.pp) +
                                      " contradicts gpu '" + o.text + "' (" + std::to_string(o.count) + " GPUs, tp " +
                                      std::to_string(split.tp) + ", pp " + std::to_string(split.pp) +
                                      "); give one or make them agree" + hint);
}

ParallelConfig split_for_count(int num_gpus, std::optional<int> tp, int pp, const std::string& path) {
  if (num_gpus < 1) throw ConfigError(path, "must be >= 1, got " + std::to_string(num_gpus));
  if (pp < 1) throw ConfigError("pp", "must be >= 1, got " + std::to_string(pp));
  if (!tp) {
    if (num_gpus % pp != 0)
      throw ConfigError(path, "must be a multiple of pp (" + std::to_string(pp) + "), got " + std::to_string(num_gpus));
    return {num_gpus / pp, pp};
  }
  if (*tp < 1) throw ConfigError("tp", "must be >= 1, got " + std::to_string(*tp));
  if (num_gpus != *tp * pp)
    throw ConfigError(path, "must equal tp x pp = " + std::to_string(*tp * pp) + " for one replica, got " +
                                std::to_string(num_gpus));
  return {*tp, pp};
}

GpuSpec gpu_for(const GpuOption& o, int gpus_per_replica, const Catalog& catalog, const std::string& path) {
  GpuSpec g = catalog.gpu(o.card, path);
  if (!o.nvlink_bridge) return g;
  if (g.nvlink_bandwidth > 0)
    throw ConfigError(path, "'" + g.id + "' already has NVLink (" + gb_per_s(g.nvlink_bandwidth) +
                                " GB/s per direction); +nvlink is for PCIe cards joined by a bridge");
  if (!(g.nvlink_bridge_bandwidth > 0)) {
    std::string with;
    for (const auto& [id, c] : catalog.gpus())
      if (c.nvlink_bridge_bandwidth > 0) with += (with.empty() ? "" : ", ") + id;
    throw ConfigError(path, "'" + g.id + "' has no NVLink bridge connector (cards with one: " +
                                (with.empty() ? std::string("none") : with) + ")");
  }
  if (gpus_per_replica != 2)
    throw ConfigError(path, "an NVLink bridge joins a pair of cards; '" + o.text + "' has " +
                                std::to_string(gpus_per_replica) + " GPUs per replica");
  g.nvlink_bandwidth = g.nvlink_bridge_bandwidth;
  g.p2p = true;  // peers reach each other over the bridge
  return g;
}

std::string interconnect(const GpuSpec& g, int gpus_per_replica, bool bridged) {
  if (gpus_per_replica < 2) return "";
  if (g.nvlink_bandwidth > 0)
    return std::string(bridged ? "NVLink bridge, " : "NVLink, ") + gb_per_s(g.nvlink_bandwidth) + " GB/s per direction";
  std::string s = "PCIe " + std::to_string(g.pcie_gen) + ".0 x" + std::to_string(g.pcie_lanes) +
                  (g.p2p ? " with P2P" : " without P2P (host-staged)");
  if (g.nvlink_bridge_bandwidth > 0) s += "; no NVLink bridge assumed (+nvlink for a bridged pair)";
  return s;
}

}  // namespace llmsim::spec
