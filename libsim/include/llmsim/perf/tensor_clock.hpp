#pragma once
// Sustained clocks of power-limited cards (issue 27). A datasheet's tensor peak is SMs × FLOP per SM-clock × the
// boost clock; under continuous dense tensor-core work a board whose power limit is low for its SM count cannot hold
// that clock and settles lower (the A100 PCIe at 250 W against the A100 SXM's 400 W on the same die; the L40S at
// 350 W with 142 SMs against the 4090's 450 W with 128; the L4 at 72 W). The family priors of the default profile
// (perf/hardware_profile.hpp) were measured on cards that hold their peaks' clock (A100 SXM, H100 SXM, RTX 4090), so
// on a card whose catalogue entry records a lower sustained clock the tensor work — the GEMMs' compute term and
// prefill attention — runs at sustained / boost of them. Streaming work is untouched: the memory clock does not drop
// under the power limit, and a bandwidth-bound decode draws less SM power. docs/cost-model.md "Sustained clocks".
#include <string>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::perf {

/// The fraction of its tensor peaks a card sustains under continuous tensor work: sustained_tensor_clock_mhz /
/// boost_clock_mhz, or 1 when the catalogue records no lower sustained clock. In (0, 1]; never throws (GpuSpec's
/// validate() guarantees sustained <= boost).
double sustained_tensor_fraction(const spec::GpuSpec& gpu) noexcept;

/// Scales the tensor efficiencies of a default profile — every `gemm_eff_vs_m` curve and `attn_prefill_efficiency` —
/// by sustained_tensor_fraction(gpu) and says so in its source. A profile fitted from measurements on the card
/// (calibration/, `calibrate-fit`) already carries the card's clocks and is not passed through here.
void apply_sustained_tensor_clock(const spec::GpuSpec& gpu, HardwareProfile& p);

/// One line for `llmsim step`: "tensor work at 1180 of 1410 MHz (power-limited: x0.837 of the peaks)"; empty when the
/// card sustains its peaks' clock.
std::string describe_sustained_tensor_clock(const spec::GpuSpec& gpu);

}  // namespace llmsim::perf
