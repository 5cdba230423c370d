#pragma once
// The comparisons against the public data in ../shared/reference (read from there, never copied; each producer
// returns no rows when its files are absent): Vidur's per-operator A100/H100 timings, Vidur's NCCL all-reduce
// timings on DGX A100/H100, and llama.cpp's single-stream speeds.
#include <filesystem>
#include <string>
#include <vector>

#include "validation_row.hpp"

namespace llmsim::validation {

/// Seconds llmsim charges for one all-reduce of `bytes` over `tp` GPUs of `gpu`, read from the public API:
/// a third of CostModel::breakdown()'s "tp_allreduce" op for a one-layer model (two all-reduces per layer and the
/// embedding's) whose decode batch carries exactly `bytes` of fp16 activations (bytes rounded to whole 256-byte
/// tokens).
double allreduce_s(const std::string& gpu, int tp, double bytes);

/// vLLM runs its custom all-reduce on fully NVLink-connected GPUs below this size and NCCL at or above it
/// (vllm/distributed/device_communicators/custom_all_reduce.py, max_size = 8192 * 1024): NCCL measurements
/// below it are not what the engine llmsim models runs, so they are printed but not scored.
constexpr double kVllmCustomAllreduceMaxBytes = 8.0 * 1024 * 1024;

/// Vidur's mlp.csv per-layer operator medians (A100/H100 DGX, 4 Llama models, TP 1–8, M = 1…32k): one row per
/// (measurement, op) for qkv_proj, o_proj, mlp (scored) and norms_rotary_act (M >= 1024, unscored: checked
/// only for being the right size).
std::vector<Row> vidur_op_rows(const std::filesystem::path& reference);
/// Vidur's all_reduce.csv on DGX A100 and DGX H100 within one node (2, 4, 8 GPUs): NCCL kernel time vs bytes.
std::vector<Row> vidur_allreduce_rows(const std::filesystem::path& reference);
/// llamacpp-gpu-benchmarks.csv: F16 and GGUF Q4_K_M single-stream decode (tg, eval) and prefill (pp) on the
/// catalogue's cards. F16 rows on HBM cards are unscored (llama.cpp reaches 33–55 % of HBM bandwidth there,
/// reference README; llmsim models a vLLM-class engine).
std::vector<Row> llamacpp_rows(const std::filesystem::path& reference);

}  // namespace llmsim::validation
