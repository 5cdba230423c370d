#include "llmsim/spec/gpu_spec.hpp"

#include <cstdio>
#include <cmath>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::spec {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMaxGiB = 1e6;
constexpr int kMaxInt = 1 << 30;
constexpr double kMaxRate = 1e9;            // TFLOP/s, GB/s, W: a million times today's cards, still finite after scaling
constexpr double kMaxPricePerHour = 1e6;    // USD per GPU-hour
constexpr double kMaxPurchase = 1e9;        // USD per card
constexpr double kMaxClockMHz = 1e5;       // 100 GHz: far beyond any card
constexpr double kMaxLinkGBps = 1e4;        // NVLink 5 is 1,800 GB/s; the profile's link_bandwidth stops at 1e13 B/s

double number_in(const JsonView& v, std::string_view key, double hi) { return v.has(key) ? v[key].as_number_in(0, hi) : 0.0; }

// Per-lane PCIe rate per direction after line encoding, bytes/s: gen3 8 GT/s, gen4 16, gen5 32, gen6 64,
// all with 128b/130b encoding (gen1/2: 2.5/5 GT/s with 8b/10b).
double pcie_lane_bytes_per_s(int gen) {
  switch (gen) {
    case 1: return 2.5e9 * 0.8 / 8;
    case 2: return 5e9 * 0.8 / 8;
    case 3: return 8e9 * 128.0 / 130.0 / 8;
    case 4: return 16e9 * 128.0 / 130.0 / 8;
    case 5: return 32e9 * 128.0 / 130.0 / 8;
    case 6: return 64e9 * 128.0 / 130.0 / 8;
    default: return 0;
  }
}

std::vector<std::string> profile_names(const GpuSpec& g) {
  std::vector<std::string> out;
  for (const auto& p : g.mig_profiles) out.push_back(p.name);
  return out;
}
}  // namespace

double GpuSpec::tensor_peak(DType d) const {
  switch (d) {
    case DType::fp16: return fp16_flops;
    case DType::bf16: return bf16_flops;
    case DType::fp8: return fp8_flops;
    case DType::int8: return int8_ops;
    case DType::int4: return int4_ops;
    case DType::fp4: return fp4_flops;
    case DType::fp32: return fp32_flops;
  }
  return 0;
}

double GpuSpec::pcie_bandwidth() const { return pcie_lane_bytes_per_s(pcie_gen) * pcie_lanes; }

GpuSpec GpuSpec::mig_slice(const std::string& profile_name) const {
  for (const auto& p : mig_profiles) {
    if (p.name != profile_name) continue;
    // A MIG slice owns g of the 7 compute slices (SMs) and m of the 8 memory slices (capacity, bandwidth
    // and L2 scale with those) [gpus-and-efficiency.md C5, MIG user guide S12].
    GpuSpec s = *this;
    const double cf = static_cast<double>(p.compute_slices) / p.total_compute_slices;
    const double bf = static_cast<double>(p.memory_slices) / 8.0;
    s.id = id + ":" + p.name;
    s.name = name + " (MIG " + p.name.substr(4) + ")";
    s.memory_bytes = p.memory_bytes > 0 ? p.memory_bytes
                                        : static_cast<std::int64_t>(std::llround(memory_bytes * bf));
    s.cuda_visible_memory_bytes = 0;  // a slice reports its profile's memory (the whole card's total does not apply)
    s.memory_bandwidth = memory_bandwidth * bf;
    s.fp16_flops = fp16_flops * cf;
    s.bf16_flops = bf16_flops * cf;
    s.fp8_flops = fp8_flops * cf;
    s.int8_ops = int8_ops * cf;
    s.int4_ops = int4_ops * cf;
    s.fp4_flops = fp4_flops * cf;
    s.fp32_flops = fp32_flops * cf;
    s.sm_count = static_cast<int>(std::lround(sm_count * cf));
    s.l2_bytes = static_cast<std::int64_t>(std::llround(l2_bytes * bf));
    s.tdp_watts = tdp_watts * cf;
    s.nvlink_bandwidth = 0;  // a MIG instance cannot take part in NVLink collectives
    s.nvlink_bridge_bandwidth = 0;
    s.idle_watts = idle_watts * cf;
    s.purchase_price = purchase_price * cf;  // a slice's share of the card
    s.p2p = false;
    s.mig_profiles.clear();
    s.price_per_hour = price_per_hour * cf;
    {
      char card_price[32];
      std::snprintf(card_price, sizeof card_price, "$%.2f/h", price_per_hour);
      s.price_basis = std::to_string(p.compute_slices) + "/" + std::to_string(p.total_compute_slices) + " of the " +
                      name + "'s " + card_price + " (the slice's share of its compute slices)";
    }
    s.compute_fraction = compute_fraction * cf;
    s.bandwidth_fraction = bandwidth_fraction * bf;
    s.source = source + " MIG slice " + p.name + ": compute x" + format_value(cf) + ", memory and bandwidth x" +
               format_value(bf) + ".";
    return s;
  }
  if (mig_profiles.empty()) throw ConfigError("gpu", "'" + id + "' has no MIG profiles (asked for '" + profile_name + "')");
  throw ConfigError("gpu", unknown_name_message("MIG profile of " + id, profile_name, profile_names(*this)));
}

std::string GpuSpec::price_label(bool placeholder) const {
  if (!placeholder) return "";
  if (price_basis.empty()) return "a catalogue placeholder";
  return price_basis + (price_is_placeholder ? ", itself a catalogue placeholder" : "");
}

void GpuSpec::validate(const std::string& path) const {
  Problems p;
  auto positive = [&](const char* field, double v) {
    if (!(v > 0) || !std::isfinite(v)) p.add(path + "." + field, "must be > 0, got " + format_given(v));
  };
  auto non_negative = [&](const char* field, double v) {
    if (!(v >= 0) || !std::isfinite(v)) p.add(path + "." + field, "must be >= 0, got " + format_given(v));
  };
  if (id.empty()) p.add(path + ".id", "must not be empty");
  positive("memory_bytes", static_cast<double>(memory_bytes));
  positive("memory_bandwidth", memory_bandwidth);
  positive("fp16_flops", fp16_flops);
  non_negative("bf16_flops", bf16_flops);
  non_negative("fp8_flops", fp8_flops);
  non_negative("int8_ops", int8_ops);
  non_negative("int4_ops", int4_ops);
  non_negative("fp4_flops", fp4_flops);
  positive("fp32_flops", fp32_flops);
  positive("sm_count", sm_count);
  non_negative("l2_bytes", static_cast<double>(l2_bytes));
  non_negative("tdp_watts", tdp_watts);
  if (cuda_visible_memory_bytes < 0 || cuda_visible_memory_bytes > memory_bytes)
    p.add(path + ".cuda_visible_memory_bytes", "must be in 0..memory_bytes (" + std::to_string(memory_bytes) +
                                                   "), got " + std::to_string(cuda_visible_memory_bytes));
  non_negative("idle_watts", idle_watts);
  if (tdp_watts > 0 && idle_watts > tdp_watts)
    p.add(path + ".idle_watts", "must be <= tdp_watts (" + format_value(tdp_watts) + "), got " + format_given(idle_watts));
  non_negative("purchase_price", purchase_price);
  non_negative("boost_clock_mhz", boost_clock_mhz);
  if (sustained_tensor_clock_mhz != 0) {
    if (!(boost_clock_mhz > 0))
      p.add(path + ".boost_clock_mhz", "must be > 0 when sustained_tensor_clock_mhz is set (the clock the tensor peaks "
                                       "are quoted at), got " + format_given(boost_clock_mhz));
    else if (!(sustained_tensor_clock_mhz > 0) || !(sustained_tensor_clock_mhz <= boost_clock_mhz))
      p.add(path + ".sustained_tensor_clock_mhz",
            "must be in (0, boost_clock_mhz = " + format_value(boost_clock_mhz) + "], got " +
                format_given(sustained_tensor_clock_mhz) +
                " (a card that sustains its boost clock or more needs no value: the family's GEMM efficiency was "
                "measured on such cards)");
  }
  if (pcie_lane_bytes_per_s(pcie_gen) == 0) p.add(path + ".pcie.gen", "must be 1..6, got " + std::to_string(pcie_gen));
  if (pcie_lanes != 1 && pcie_lanes != 2 && pcie_lanes != 4 && pcie_lanes != 8 && pcie_lanes != 16) {
    p.add(path + ".pcie.lanes", "must be 1, 2, 4, 8 or 16, got " + std::to_string(pcie_lanes));
  }
  non_negative("nvlink_bandwidth", nvlink_bandwidth);
  non_negative("nvlink_bridge_gb_per_s", nvlink_bridge_bandwidth);
  non_negative("price_per_hour", price_per_hour);
  if (!(compute_fraction > 0 && compute_fraction <= 1)) {
    p.add(path + ".compute_fraction", "must be in (0, 1], got " + format_given(compute_fraction));
  }
  if (!(bandwidth_fraction > 0 && bandwidth_fraction <= 1)) {
    p.add(path + ".bandwidth_fraction", "must be in (0, 1], got " + format_given(bandwidth_fraction));
  }
  for (std::size_t i = 0; i < mig_profiles.size(); ++i) {
    const auto& m = mig_profiles[i];
    const std::string mp = path + ".mig_profiles[" + std::to_string(i) + "]";
    if (m.name.rfind("mig-", 0) != 0) p.add(mp + ".name", "must start with 'mig-', got '" + m.name + "'");
    if (m.total_compute_slices < 1) {
      p.add(mp + ".total_compute_slices", "must be >= 1, got " + std::to_string(m.total_compute_slices));
    }
    if (m.compute_slices < 1 || m.compute_slices > m.total_compute_slices) {
      p.add(mp + ".compute_slices", "must be in 1.." + std::to_string(m.total_compute_slices) + ", got " +
                                        std::to_string(m.compute_slices));
    }
    if (m.memory_slices < 1 || m.memory_slices > 8) {
      p.add(mp + ".memory_slices", "must be in 1..8, got " + std::to_string(m.memory_slices));
    }
    if (m.memory_bytes < 0 || m.memory_bytes > memory_bytes) {
      p.add(mp + ".memory_bytes", "must be in 0..memory_bytes, got " + std::to_string(m.memory_bytes));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (mig_profiles[j].name == m.name) p.add(mp + ".name", "duplicate profile '" + m.name + "'");
    }
  }
  p.throw_if_any();
}

GpuSpec gpu_spec_from_json(const JsonView& v) {
  v.allow_only({"id", "name", "memory_gib", "memory_bandwidth_gb_per_s", "tensor_tflops", "fp32_tflops", "sm_count",
                "l2_mib", "tdp_watts", "idle_watts", "pcie", "nvlink_gb_per_s", "nvlink_bridge_gb_per_s", "p2p", "ecc", "inline_ecc",
                "mig_profiles", "price_per_hour", "price_is_placeholder", "purchase_price",
                "purchase_price_is_placeholder", "source", "compute_fraction", "bandwidth_fraction", "boost_clock_mhz",
                "sustained_tensor_clock_mhz", "cuda_visible_memory_mib"});
  GpuSpec g;
  g.id = v.string("id");
  g.name = v.string_or("name", g.id);
  // Capacities are printed as "GB" on datasheets but DRAM comes in power-of-two densities: a "24 GB" 4090 is
  // 24 GiB (nvidia-smi: 24,564 MiB), the 48 GB mod shows 49,140 MiB [gpus-and-efficiency.md A4].
  // Sizes are converted to int64 bytes: bounded first, so 1e15 GiB is an error naming the field, not an
  // overflowed negative byte count. 1e6 GiB (about a petabyte) is far beyond any card and far below int64.
  const double gib = v["memory_gib"].as_number_in(0, kMaxGiB);
  if (!(gib > 0)) v["memory_gib"].fail("must be > 0, got " + format_given(gib));
  g.memory_bytes = static_cast<std::int64_t>(std::llround(gib * kGiB));
  // The total the CUDA driver reports, in MiB as torch and nvidia-smi print it; absent = not measured.
  if (v.has("cuda_visible_memory_mib")) {
    const double mib = v["cuda_visible_memory_mib"].as_number_in(0, kMaxGiB * 1024);
    if (!(mib > 0)) v["cuda_visible_memory_mib"].fail("must be > 0, got " + format_given(mib));
    g.cuda_visible_memory_bytes = static_cast<std::int64_t>(std::llround(mib * kMiB));
    if (g.cuda_visible_memory_bytes > g.memory_bytes)
      v["cuda_visible_memory_mib"].fail("must not exceed memory_gib x 1024 (" + format_given(gib * 1024) + "), got " +
                                        format_given(mib));
  }
  g.memory_bandwidth = v["memory_bandwidth_gb_per_s"].as_number_in(0, kMaxRate) * 1e9;
  auto t = v["tensor_tflops"];
  t.allow_only({"fp16", "bf16", "fp8", "int8", "int4", "fp4"});
  g.fp16_flops = t["fp16"].as_number_in(0, kMaxRate) * 1e12;
  g.bf16_flops = number_in(t, "bf16", kMaxRate) * 1e12;
  g.fp8_flops = number_in(t, "fp8", kMaxRate) * 1e12;
  g.int8_ops = number_in(t, "int8", kMaxRate) * 1e12;
  g.int4_ops = number_in(t, "int4", kMaxRate) * 1e12;
  g.fp4_flops = number_in(t, "fp4", kMaxRate) * 1e12;  // dense FP4 (Blackwell); absent = 0
  g.fp32_flops = v["fp32_tflops"].as_number_in(0, kMaxRate) * 1e12;
  g.boost_clock_mhz = number_in(v, "boost_clock_mhz", kMaxClockMHz);
  g.sustained_tensor_clock_mhz = number_in(v, "sustained_tensor_clock_mhz", kMaxClockMHz);
  g.sm_count = static_cast<int>(v["sm_count"].as_integer_in(1, kMaxInt));
  g.l2_bytes = v.has("l2_mib") ? static_cast<std::int64_t>(std::llround(v["l2_mib"].as_number_in(0, kMaxGiB * 1024) * kMiB)) : 0;
  g.tdp_watts = number_in(v, "tdp_watts", kMaxRate);
  g.idle_watts = number_in(v, "idle_watts", kMaxRate);
  if (v.has("pcie")) {
    auto pc = v["pcie"];
    pc.allow_only({"gen", "lanes"});
    if (pc.has("gen")) g.pcie_gen = static_cast<int>(pc["gen"].as_integer_in(1, 6));
    if (pc.has("lanes")) g.pcie_lanes = static_cast<int>(pc["lanes"].as_integer_in(1, 16));
  }
  g.nvlink_bandwidth = number_in(v, "nvlink_gb_per_s", kMaxLinkGBps) * 1e9;
  g.nvlink_bridge_bandwidth = number_in(v, "nvlink_bridge_gb_per_s", kMaxLinkGBps) * 1e9;
  g.p2p = v.boolean_or("p2p", false);
  g.ecc = v.boolean_or("ecc", false);
  g.inline_ecc = v.boolean_or("inline_ecc", false);
  if (v.has("mig_profiles")) {
    for (const auto& e : v["mig_profiles"].elements()) {
      e.allow_only({"name", "compute_slices", "total_compute_slices", "memory_slices", "memory_gib"});
      MigProfile m;
      m.name = e.string("name");
      m.compute_slices = static_cast<int>(e["compute_slices"].as_integer_in(1, kMaxInt));
      m.total_compute_slices = e.has("total_compute_slices")
                                   ? static_cast<int>(e["total_compute_slices"].as_integer_in(1, kMaxInt))
                                   : 7;
      m.memory_slices = static_cast<int>(e["memory_slices"].as_integer_in(1, 8));
      m.memory_bytes = e.has("memory_gib") ? static_cast<std::int64_t>(std::llround(e["memory_gib"].as_number_in(0, kMaxGiB) * kGiB))
                                           : static_cast<std::int64_t>(std::llround(
                                                 static_cast<double>(g.memory_bytes) * m.memory_slices / 8.0));
      g.mig_profiles.push_back(std::move(m));
    }
  }
  g.price_per_hour = number_in(v, "price_per_hour", kMaxPricePerHour);
  g.price_is_placeholder = v.boolean_or("price_is_placeholder", true);
  g.purchase_price = number_in(v, "purchase_price", kMaxPurchase);
  g.purchase_price_is_placeholder = v.boolean_or("purchase_price_is_placeholder", true);
  g.source = v.string_or("source", "");
  g.compute_fraction = v.number_or("compute_fraction", 1.0);
  g.bandwidth_fraction = v.number_or("bandwidth_fraction", 1.0);
  g.validate(v.path().empty() ? "gpu" : v.path());
  return g;
}

Json to_json(const GpuSpec& g) {
  Json j;
  j["id"] = g.id;
  j["name"] = g.name;
  j["memory_gib"] = static_cast<double>(g.memory_bytes) / kGiB;
  if (g.cuda_visible_memory_bytes > 0) j["cuda_visible_memory_mib"] = static_cast<double>(g.cuda_visible_memory_bytes) / kMiB;
  j["memory_bandwidth_gb_per_s"] = g.memory_bandwidth / 1e9;
  j["tensor_tflops"] = {{"fp16", g.fp16_flops / 1e12}, {"bf16", g.bf16_flops / 1e12}, {"fp8", g.fp8_flops / 1e12},
                        {"int8", g.int8_ops / 1e12},   {"int4", g.int4_ops / 1e12},
                        {"fp4", g.fp4_flops / 1e12}};
  j["fp32_tflops"] = g.fp32_flops / 1e12;
  j["boost_clock_mhz"] = g.boost_clock_mhz;
  j["sustained_tensor_clock_mhz"] = g.sustained_tensor_clock_mhz;
  j["sm_count"] = g.sm_count;
  j["l2_mib"] = static_cast<double>(g.l2_bytes) / kMiB;
  j["tdp_watts"] = g.tdp_watts;
  j["idle_watts"] = g.idle_watts;
  j["pcie"] = {{"gen", g.pcie_gen}, {"lanes", g.pcie_lanes}};
  j["nvlink_gb_per_s"] = g.nvlink_bandwidth / 1e9;
  j["nvlink_bridge_gb_per_s"] = g.nvlink_bridge_bandwidth / 1e9;
  j["p2p"] = g.p2p;
  j["ecc"] = g.ecc;
  j["inline_ecc"] = g.inline_ecc;
  j["mig_profiles"] = Json::array();
  for (const auto& m : g.mig_profiles) {
    j["mig_profiles"].push_back({{"name", m.name},
                                 {"compute_slices", m.compute_slices},
                                 {"total_compute_slices", m.total_compute_slices},
                                 {"memory_slices", m.memory_slices},
                                 {"memory_gib", static_cast<double>(m.memory_bytes) / kGiB}});
  }
  j["price_per_hour"] = g.price_per_hour;
  j["price_is_placeholder"] = g.price_is_placeholder;
  j["purchase_price"] = g.purchase_price;
  j["purchase_price_is_placeholder"] = g.purchase_price_is_placeholder;
  j["source"] = g.source;
  j["compute_fraction"] = g.compute_fraction;
  j["bandwidth_fraction"] = g.bandwidth_fraction;
  return j;
}

}  // namespace llmsim::spec
