#pragma once
// Where every constant of the cost model comes from (issue 27): a microbenchmark, a line of an engine's code, a
// datasheet, a public measurement, an assumption, or "set while looking at source X". The table covers the default
// profiles' priors per GPU family (perf/hardware_profile.hpp) and the runtimes' traits (perf/runtime.hpp); a test
// (tests/perf/test_provenance.cpp) fails when one of them has no entry, or when an entry's value is stale.
//
// The validation report reads it to decide which measurement sources are BLIND: a source is blind when no constant
// was set while looking at it and no mechanism was developed on it (development_sources()). Blind sources are the
// headline of `make validate`; the others show only that the model reproduces what it was tuned on.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llmsim/perf/hardware_profile.hpp"

namespace llmsim::perf {

enum class Provenance {
  datasheet,           ///< a vendor's datasheet or a hardware fact (bus width, ECC layout)
  microbenchmark,      ///< a kernel microbenchmark (ours or public: nvbench, RRZE, nccl-tests, clpeak)
  engine_code,         ///< read off an engine's source or a PR/RFC that profiles it
  public_measurement,  ///< a published end-to-end or kernel measurement other than the validation sets
  fitted,              ///< set while looking at the rows of the validation sources in `looked_at`
  assumed,             ///< not measured: carried over from a similar part (the `source` says from what)
};
std::string to_string(Provenance p);

struct ConstantProvenance {
  std::string field;  ///< a HardwareProfile JSON key ("gemm_bw_eff_vs_m") or "runtime.<trait>" (RuntimeTraits)
  /// Where it applies: a GPU family ("ampere_hbm", "hopper_hbm", "blackwell_hbm", "gddr"), a runtime name
  /// ("vllm-v0.5"), a catalogue GPU id for a per-card number ("a100-40gb-pcie"), or "all".
  std::string scope;
  Provenance kind = Provenance::assumed;
  std::string source;                 ///< the citation (docs/cost-model.md carries the same in prose)
  std::vector<std::string> looked_at; ///< validation source ids whose rows were looked at while choosing it
  std::optional<double> value;        ///< the value for this scope, where it is one number (checked by the test)
};

/// The table, in the order of docs/cost-model.md "Default profiles".
const std::vector<ConstantProvenance>& constant_provenance();

/// The scope name of a GPU family: "ampere_hbm", "hopper_hbm", "blackwell_hbm", "gddr".
std::string family_name(GpuFamily f);

/// A validation source the model's mechanisms were developed on (its rows read while building and checking
/// mechanisms in issues 8-26, whether or not a constant names it): never blind. `repository` is a fragment of its
/// public address, so the same data collected again under another name is recognised.
struct DevelopmentSource {
  std::string id;
  std::string repository;
};
const std::vector<DevelopmentSource>& development_sources();

/// The development source `id` is, or whose repository `url` contains; nullopt for any other source.
std::optional<std::string> development_source_of(const std::string& id, const std::string& url = "");

/// Every source id that is not blind: the development sources plus every `looked_at` of the table.
std::set<std::string> non_blind_sources();

/// True when the validation source (`id`, at `url`) set no constant and was not developed on.
bool is_blind_source(const std::string& id, const std::string& url = "");

}  // namespace llmsim::perf
