#include "llmsim/perf/hardware_profile.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::perf {

// ---------------------------------------------------------------------------------------------------------
// Curve

double Curve::at(double xv) const {
  if (x.empty()) return 1.0;
  if (x.size() == 1 || xv <= x.front()) return y.front();
  if (xv >= x.back()) return y.back();
  // Few points (a handful): a linear scan is faster than a binary search and allocation-free.
  std::size_t i = 1;
  while (x[i] < xv) ++i;
  const double l0 = std::log(x[i - 1]), l1 = std::log(x[i]);
  const double w = (std::log(xv) - l0) / (l1 - l0);
  return y[i - 1] + w * (y[i] - y[i - 1]);
}

namespace {

Curve curve(std::vector<double> x, std::vector<double> y) { return Curve{std::move(x), std::move(y)}; }

Curve scaled(const Curve& c, double f) {
  Curve r = c;
  for (auto& v : r.y) v *= f;
  return r;
}

enum class Family { ampere_hbm, hopper_hbm, gddr };

bool contains(const std::string& s, std::string_view part) { return to_lower(s).find(part) != std::string::npos; }

// HBM data-centre parts are recognised by name (and by having MIG, which only HBM parts offer); Hopper by
// HBM plus an FP8 tensor path. Everything else is treated as a GDDR GeForce/workstation card.
Family family_of(const spec::GpuSpec& gpu) {
  bool hbm = !gpu.mig_profiles.empty() || gpu.compute_fraction < 1.0 || gpu.bandwidth_fraction < 1.0;
  for (std::string_view k : {"a100", "a800", "a30", "h100", "h800", "h200", "h20", "gh200", "b200", "mi300"}) {
    hbm = hbm || contains(gpu.id, k) || contains(gpu.name, k);
  }
  if (!hbm) return Family::gddr;
  return gpu.fp8_flops > 0 ? Family::hopper_hbm : Family::ampere_hbm;
}

void check_curve(const Curve& c, const std::string& path, double max_y, Problems& p) {
  if (c.x.size() != c.y.size()) {
    p.add(path, "x and y must have the same length, got " + std::to_string(c.x.size()) + " and " +
                    std::to_string(c.y.size()));
    return;
  }
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    if (!(c.x[i] > 0) || !std::isfinite(c.x[i]))
      p.add(path + ".x[" + std::to_string(i) + "]", "must be > 0, got " + format_value(c.x[i]));
    else if (i > 0 && !(c.x[i] > c.x[i - 1]))
      p.add(path + ".x[" + std::to_string(i) + "]", "must be strictly increasing, got " + format_value(c.x[i]) +
                                                        " after " + format_value(c.x[i - 1]));
    if (!(c.y[i] > 0) || !(c.y[i] <= max_y))
      p.add(path + ".y[" + std::to_string(i) + "]",
            "must be in (0, " + format_value(max_y) + "], got " + format_value(c.y[i]));
  }
}

}  // namespace

void HardwareProfile::validate(const std::string& path) const {
  Problems p;
  auto in_range = [&](const char* field, double v, double lo, double hi, bool lo_open = true) {
    const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    if (!ok)
      p.add(path + "." + field, std::string("must be in ") + (lo_open ? "(" : "[") + format_value(lo) + ", " +
                                    format_value(hi) + "], got " + format_value(v));
  };
  if (gpu_id.empty()) p.add(path + ".gpu_id", "must name the GPU the profile describes");
  in_range("mem_bw_efficiency", mem_bw_efficiency, 0, 1.5);
  in_range("gemm_fixed_s", gemm_fixed_s, 0, 1e-2, false);
  in_range("roofline_exponent", roofline_exponent, 1, 64, false);
  in_range("attn_prefill_efficiency", attn_prefill_efficiency, 0, 1.5);
  in_range("kernel_launch_s", kernel_launch_s, 0, 1e-2, false);
  in_range("graph_launch_s", graph_launch_s, 0, 1e-2, false);
  in_range("cpu_overhead_per_iter_s", cpu_overhead_per_iter_s, 0, 1.0, false);
  in_range("cpu_overhead_per_seq_s", cpu_overhead_per_seq_s, 0, 1e-1, false);
  in_range("link_bandwidth", link_bandwidth, 0, 1e13, false);
  in_range("link_latency_s", link_latency_s, 0, 1e-1, false);
  in_range("host_bandwidth", host_bandwidth, 0, 1e13, false);
  check_curve(mem_bw_vs_bytes, path + ".mem_bw_vs_bytes", 1.5, p);
  check_curve(gemm_bw_eff_vs_m, path + ".gemm_bw_eff_vs_m", 1.5, p);
  check_curve(attn_decode_bw_vs_context, path + ".attn_decode_bw_vs_context", 1.5, p);
  for (const auto& [dt, c] : gemm_eff_vs_m)
    check_curve(c, path + ".gemm_eff_vs_m." + std::string(spec::to_string(dt)), 1.5, p);
  if (gemm_bw_eff_vs_m.empty()) p.add(path + ".gemm_bw_eff_vs_m", "missing (a curve or a number is required)");
  if (attn_decode_bw_vs_context.empty())
    p.add(path + ".attn_decode_bw_vs_context", "missing (a curve or a number is required)");
  if (gemm_eff_vs_m.find(spec::DType::fp16) == gemm_eff_vs_m.end())
    p.add(path + ".gemm_eff_vs_m.fp16", "missing (every profile needs the fp16 GEMM curve)");
  p.throw_if_any();
}

// Every number below is cited in docs/cost-model.md; [D] = derived there from the cited data.
HardwareProfile default_profile(const spec::GpuSpec& gpu) {
  HardwareProfile p;
  p.gpu_id = gpu.id;
  const Family fam = family_of(gpu);

  // Kernel fixed costs: RRZE gpu-small-kernels A100/H200 2.5-2.6 us eager, 1.3-1.4 us graph
  // (gpus-and-efficiency.md B6, prior B8).
  p.kernel_launch_s = 2.5e-6;
  p.graph_launch_s = 1.3e-6;
  // vLLM-class engine: ~2 ms of scheduling/sampling/input prep per step, +~10 us per sequence. [D] from
  // Qwen2.5-7B on A100 with vLLM 0.6.3 (BF16 84.3 vs AWQ 148.1 tok/s imply ≈2.5-3.3 ms of fixed per-step cost
  // including launches; quantization.md §5.1) and the 5-6 ms V0 gap at batch 256 (serving-engines.md §3).
  p.cpu_overhead_per_iter_s = 2e-3;
  p.cpu_overhead_per_seq_s = 1e-5;
  p.roofline_exponent = 2.0;  // [D] least-error exponent on Vidur A100/H100 GEMMs (1.5-2)

  const Curve ctx_hbm = curve({16, 256, 1024, 4096}, {0.35, 0.6, 0.75, 0.85});
  const Curve ctx_gddr = curve({16, 256, 1024, 4096}, {0.35, 0.65, 0.8, 0.9});
  switch (fam) {
    case Family::ampere_hbm:
      // Streaming: HBM prior 0.85 (B1 A100 80GB triad 0.83-0.88; B8).
      p.mem_bw_efficiency = 0.85;
      // GEMMs: [D] least-median-error fit to Vidur A100 Llama QKV/O/up/down times (B3) with p = 2: 0.725 of
      // 312 TF (B2 large GEMMs 0.71-0.87), 0.8 of BW plus 6 us per kernel (= 76% effective at M=1 on the
      // 180 MB up-projection, as B3 reads).
      p.gemm_eff_vs_m[spec::DType::fp16] = Curve::constant(0.725);
      p.gemm_bw_eff_vs_m = Curve::constant(0.8);
      p.gemm_fixed_s = 6e-6;
      p.attn_prefill_efficiency = 0.6;  // FlashAttention-2 fwd on A100 SXM: 58% of 312 (B4)
      p.attn_decode_bw_vs_context = ctx_hbm;
      p.source = "default: datasheet x priors for HBM data-centre Ampere (docs/cost-model.md)";
      break;
    case Family::hopper_hbm:
      p.mem_bw_efficiency = 0.85;  // B1 H100 SXM triad 0.89, H200 0.86 (B8 prior 0.85)
      // [D] fit to Vidur H100 Llama GEMM times (B3): 0.725 of 989 TF, 0.925 of BW with a 6 us fixed cost
      // (i.e. ≈84% effective on the 180 MB up-projection at M=1, as B3 reads).
      p.gemm_eff_vs_m[spec::DType::fp16] = Curve::constant(0.725);
      p.gemm_bw_eff_vs_m = Curve::constant(0.925);
      p.gemm_fixed_s = 6e-6;
      p.attn_prefill_efficiency = 0.5;  // between FA2 (33%) and FA3 (75%) on H100 (B4)
      p.attn_decode_bw_vs_context = ctx_hbm;
      p.source = "default: datasheet x priors for HBM Hopper (docs/cost-model.md)";
      break;
    case Family::gddr:
      p.mem_bw_efficiency = 0.92;  // B1: GDDR6/6X Ada/Ampere 0.90-0.98 (B8 prior 0.92)
      // GeForce large GEMMs reach >=100% of the FP32-acc spec (4090: 172 TF of 165.2, B2); 0.9 leaves room
      // for real Linear shapes [D].
      p.gemm_eff_vs_m[spec::DType::fp16] = Curve::constant(0.9);
      // llama.cpp batch-1 F16 decode reaches 80-93% of peak on GeForce/workstation cards (reference README;
      // 4090 Llama-3-8B 54.8 tok/s = 0.88 TB/s); B8 decode-GEMV prior 0.80 -> 0.85 [D].
      p.gemm_bw_eff_vs_m = Curve::constant(0.85);
      p.gemm_fixed_s = 4e-6;
      p.attn_prefill_efficiency = 0.6;  // FA2-class kernels on Ampere/Ada, as on A100 (B4) [D]
      p.attn_decode_bw_vs_context = ctx_gddr;  // FlashInfer: close to 100% on the 4090 for long contexts (B4)
      p.source = "default: datasheet x priors for GDDR GeForce/workstation cards (docs/cost-model.md)";
      break;
  }
  // Low-precision tensor paths reach a lower fraction of their peak: H100 FP8 best shape 70.9% vs BF16 80.3%
  // (B2) -> x0.88; INT8 assumed alike (x0.9) [D].
  const Curve& c16 = p.gemm_eff_vs_m[spec::DType::fp16];
  p.gemm_eff_vs_m[spec::DType::bf16] = c16;
  p.gemm_eff_vs_m[spec::DType::fp8] = scaled(c16, 0.88);
  p.gemm_eff_vs_m[spec::DType::int8] = scaled(c16, 0.9);
  p.gemm_eff_vs_m[spec::DType::int4] = scaled(c16, 0.8);
  // Small element-wise kernels do not reach the streaming rate (calculon's memory table: 0.6 at 1 MB, 0.75 at
  // 10 MB, 0.9 at >=100 MB relative to peak; here relative to the streaming efficiency, C4) [D].
  p.mem_bw_vs_bytes = curve({1e5, 1e6, 1e7, 1e8}, {0.4, 0.65, 0.85, 1.0});

  // Links. NVLink ring all-reduce busbw 0.78-0.82 of the per-direction link (B5/B8); PCIe without P2P
  // (host-staged through SHM) ~18-21 GB/s on Gen4 x16 = ~0.6 of the x16 rate (B5); PCIe with P2P 22-25 GB/s
  // (patched 4090 P2P, A40 P2P on: 40-50 bidirectional) = ~0.75 (B5). Latency per ring step: tens of us
  // (B5; Vidur pairwise NVLink 2-GPU all-reduce of small messages 7-60 us) [D].
  const double pcie = gpu.pcie_bandwidth();
  if (gpu.nvlink_bandwidth > 0) {
    p.link_bandwidth = 0.8 * gpu.nvlink_bandwidth;
    p.link_latency_s = 8e-6;
  } else if (gpu.p2p) {
    p.link_bandwidth = 0.75 * pcie;
    p.link_latency_s = 12e-6;
  } else {
    p.link_bandwidth = 0.6 * pcie;
    p.link_latency_s = 25e-6;
  }
  p.host_bandwidth = 0.85 * pcie;  // host<->device 0.82-0.88 of PCIe x16 per direction (B5/B8)
  return p;
}

// ---------------------------------------------------------------------------------------------------------
// JSON

namespace {

Curve curve_from_json(const JsonView& v) {
  if (v.json().is_number()) return Curve::constant(v.as_number());
  v.allow_only({"x", "y"});
  Curve c;
  for (const auto& e : v["x"].elements()) c.x.push_back(e.as_number());
  for (const auto& e : v["y"].elements()) c.y.push_back(e.as_number());
  if (c.x.empty()) v.fail("a curve needs at least one point");
  return c;
}

Json curve_to_json(const Curve& c) { return Json{{"x", c.x}, {"y", c.y}}; }

}  // namespace

HardwareProfile profile_from_json(const JsonView& v, const HardwareProfile& base) {
  v.allow_only({"format", "gpu_id", "source", "mem_bw_efficiency", "mem_bw_vs_bytes", "gemm_eff_vs_m",
                "gemm_bw_eff_vs_m", "gemm_fixed_s", "roofline_exponent", "attn_prefill_efficiency",
                "attn_decode_bw_vs_context", "kernel_launch_s", "graph_launch_s", "cpu_overhead_per_iter_s",
                "cpu_overhead_per_seq_s", "link_bandwidth", "link_latency_s", "host_bandwidth"});
  if (v.has("format")) {
    const std::string f = v.string("format");
    if (f != "llmsim-hardware-profile/1")
      v["format"].fail("unsupported profile format '" + f + "' (expected 'llmsim-hardware-profile/1')");
  }
  HardwareProfile p = base;
  p.gpu_id = v.string("gpu_id");
  p.source = v.string_or("source", "profile file");
  p.mem_bw_efficiency = v.number_or("mem_bw_efficiency", p.mem_bw_efficiency);
  if (v.has("mem_bw_vs_bytes")) p.mem_bw_vs_bytes = curve_from_json(v["mem_bw_vs_bytes"]);
  if (v.has("gemm_eff_vs_m")) {
    const JsonView g = v["gemm_eff_vs_m"];
    g.expect_object();
    for (const auto& [key, value] : g.json().items()) {
      const spec::DType dt = spec::parse_dtype(key, g.child_path(key));
      p.gemm_eff_vs_m[dt] = curve_from_json(JsonView(value, g.child_path(key)));
    }
  }
  if (v.has("gemm_bw_eff_vs_m")) p.gemm_bw_eff_vs_m = curve_from_json(v["gemm_bw_eff_vs_m"]);
  p.gemm_fixed_s = v.number_or("gemm_fixed_s", p.gemm_fixed_s);
  p.roofline_exponent = v.number_or("roofline_exponent", p.roofline_exponent);
  p.attn_prefill_efficiency = v.number_or("attn_prefill_efficiency", p.attn_prefill_efficiency);
  if (v.has("attn_decode_bw_vs_context"))
    p.attn_decode_bw_vs_context = curve_from_json(v["attn_decode_bw_vs_context"]);
  p.kernel_launch_s = v.number_or("kernel_launch_s", p.kernel_launch_s);
  p.graph_launch_s = v.number_or("graph_launch_s", p.graph_launch_s);
  p.cpu_overhead_per_iter_s = v.number_or("cpu_overhead_per_iter_s", p.cpu_overhead_per_iter_s);
  p.cpu_overhead_per_seq_s = v.number_or("cpu_overhead_per_seq_s", p.cpu_overhead_per_seq_s);
  p.link_bandwidth = v.number_or("link_bandwidth", p.link_bandwidth);
  p.link_latency_s = v.number_or("link_latency_s", p.link_latency_s);
  p.host_bandwidth = v.number_or("host_bandwidth", p.host_bandwidth);
  p.validate(v.path().empty() ? "profile" : v.path());
  return p;
}

HardwareProfile profile_from_json(const JsonView& v) { return profile_from_json(v, HardwareProfile{}); }

HardwareProfile load_profile(const std::string& path, const HardwareProfile& base) {
  const Json doc = read_json_ref(path, "hardware.gpu_profile");  // a file, or a scenario's inline object
  return profile_from_json(JsonView(doc, is_inline_json(path) ? "hardware.gpu_profile" : path), base);
}

HardwareProfile load_profile(const std::string& path) { return load_profile(path, HardwareProfile{}); }

Json to_json(const HardwareProfile& p) {
  Json g = Json::object();
  for (const auto& [dt, c] : p.gemm_eff_vs_m) g[std::string(spec::to_string(dt))] = curve_to_json(c);
  return Json{{"format", "llmsim-hardware-profile/1"},
              {"gpu_id", p.gpu_id},
              {"source", p.source},
              {"mem_bw_efficiency", p.mem_bw_efficiency},
              {"mem_bw_vs_bytes", curve_to_json(p.mem_bw_vs_bytes)},
              {"gemm_eff_vs_m", g},
              {"gemm_bw_eff_vs_m", curve_to_json(p.gemm_bw_eff_vs_m)},
              {"gemm_fixed_s", p.gemm_fixed_s},
              {"roofline_exponent", p.roofline_exponent},
              {"attn_prefill_efficiency", p.attn_prefill_efficiency},
              {"attn_decode_bw_vs_context", curve_to_json(p.attn_decode_bw_vs_context)},
              {"kernel_launch_s", p.kernel_launch_s},
              {"graph_launch_s", p.graph_launch_s},
              {"cpu_overhead_per_iter_s", p.cpu_overhead_per_iter_s},
              {"cpu_overhead_per_seq_s", p.cpu_overhead_per_seq_s},
              {"link_bandwidth", p.link_bandwidth},
              {"link_latency_s", p.link_latency_s},
              {"host_bandwidth", p.host_bandwidth}};
}

}  // namespace llmsim::perf
