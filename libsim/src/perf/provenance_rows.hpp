#pragma once
// The provenance table's rows are written in six files (private to perf/): provenance.cpp holds the hardware
// priors (memory, GEMM, attention, launches, links), provenance_kernels.cpp the kernels beyond them (fused MoE, FP8
// linears, LoRA, MLA, the quantised kernels by release), provenance_engine.cpp the engines' behaviour (runtime
// traits, async and overlap scheduling, scheduler defaults by release), provenance_workload.cpp the datasets'
// lengths, provenance_memory.cpp SGLang's Mamba pool, provenance_calibration.cpp a run fit's own settings. One row
// builder for all.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmsim/perf/provenance.hpp"

namespace llmsim::perf::provenance_rows {

using P = Provenance;

inline ConstantProvenance c(std::string field, std::string scope, P kind, std::string source,
                            std::vector<std::string> looked_at = {}, std::optional<double> value = std::nullopt) {
  return {std::move(field), std::move(scope), kind, std::move(source), std::move(looked_at), value};
}

/// The fused-MoE, block-scaled / Hopper / Ada FP8 linear, LoRA and MLA kernels' rows (provenance_kernels.cpp).
void add_layer_kernel_provenance(std::vector<ConstantProvenance>& t);
/// The quantised kernels by vLLM release and the pre-Marlin kernels' bytes-in-flight bound (provenance_kernels.cpp).
void add_quant_kernel_provenance(std::vector<ConstantProvenance>& t);
/// The rows of the engines' behaviour: runtime traits (perf/runtime.cpp), vLLM V1's async scheduling, SGLang's
/// overlap scheduler, vLLM V0's and SGLang's scheduler defaults by release (provenance_engine.cpp).
void add_engine_provenance(std::vector<ConstantProvenance>& t);
/// The named datasets' length distributions (spec/dataset_lengths.hpp; provenance_workload.cpp).
void add_workload_provenance(std::vector<ConstantProvenance>& t);
/// The memory plan's engine constants beyond kernels and schedulers: SGLang's Mamba state pool
/// (memory/sglang_mamba_pool.hpp; provenance_memory.cpp).
void add_memory_pool_provenance(std::vector<ConstantProvenance>& t);
/// A run fit's prior, stopping rule, steps and guards (calibration/fit/run_fit*.hpp; provenance_calibration.cpp).
void add_run_fit_provenance(std::vector<ConstantProvenance>& t);

}  // namespace llmsim::perf::provenance_rows
