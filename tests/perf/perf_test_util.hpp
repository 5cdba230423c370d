#pragma once
// Helpers the perf tests share: one definition each (the sanitizer tree compiles the tests as unity batches, where
// per-file copies in anonymous namespaces would collide).
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::test {

inline spec::GpuSpec gpu(const std::string& id) { return spec::Catalog::builtin().gpu(id); }

/// `seqs` sequences decoding one token each, each with `context` tokens of KV.
inline perf::BatchShape decode(std::int64_t seqs, std::int64_t context) {
  perf::BatchShape b;
  b.decode_seqs = seqs;
  b.decode_context = seqs * context;
  return b;
}

/// Seconds of the op `name` in the step's breakdown (0 when the breakdown leaves it out: it costs nothing).
inline double op(const perf::CostModel& cm, const perf::BatchShape& b, const std::string& name) {
  for (const auto& o : cm.breakdown(b).ops)
    if (o.name == name) return o.time_s;
  return 0;
}

/// `model` on `gpu_id` at tensor parallel `tp` under `runtime`, with the quantised kernels of vLLM release `release`
/// (e.g. "vllm==0.6.3") and the card's default profile; CUDA graphs on unless `graphs` is false.
inline perf::CostModel release_model(const std::string& model, const std::string& gpu_id, int tp,
                                     perf::Runtime runtime, const std::string& release, bool graphs = true) {
  const auto g = gpu(gpu_id);
  spec::Quantization q;
  q.kernels = spec::quant_kernels_for(release);
  spec::ParallelConfig par;
  par.tp = tp;
  return perf::CostModel(spec::Catalog::builtin().model(model), q, g, perf::default_profile(g), par, graphs, 0,
                         runtime);
}

/// The step's GPU work: every op but the launch term and the CPU's serialized time.
inline double gpu_busy(const perf::CostModel& cm, const perf::BatchShape& b) {
  double busy = 0;
  for (const auto& o : cm.breakdown(b).ops)
    if (o.name != "launch" && o.name != "cpu") busy += o.time_s;
  return busy;
}

/// Each (field, value) is in the provenance table with that value (exactly, or to Approx's precision where `approx`),
/// set while looking at no validation source's rows; `kind`, when given, is the provenance each must have.
inline void check_provenance_values(std::initializer_list<std::pair<const char*, double>> used,
                                    std::optional<perf::Provenance> kind = std::nullopt, bool approx = false) {
  for (const auto& [field, value] : used) {
    INFO(field);
    bool found = false;
    for (const auto& e : perf::constant_provenance())
      if (e.field == field) {
        found = true;
        REQUIRE(e.value.has_value());
        if (approx) CHECK(*e.value == Approx(value));
        else CHECK(*e.value == value);
        if (kind) CHECK(e.kind == *kind);
        CHECK(e.looked_at.empty());
      }
    CHECK(found);
  }
}

/// Each (field, value) is in the provenance table with that value, from a public measurement that looked at no
/// validation source's rows.
inline void check_public_measurements(std::initializer_list<std::pair<const char*, double>> used) {
  check_provenance_values(used, perf::Provenance::public_measurement);
}

inline constexpr double KiB = 1024, MiB = 1024 * 1024;

}  // namespace llmsim::test
