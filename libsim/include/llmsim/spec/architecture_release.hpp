#pragma once
// The first vLLM and SGLang releases that serve each architecture the catalogue knows (spec/architecture_release.cpp,
// one row per Hugging Face `architectures[0]`, each with its public source). A scenario or a `check` whose release
// predates its model's architecture is refused: the release could not have loaded the model, so no prediction of it
// is honest. docs/cost-model.md "Architectures by release" is the same table in prose.
#include <optional>
#include <string>
#include <vector>

#include "llmsim/spec/model_spec.hpp"

namespace llmsim::spec {

/// What is known of an engine's first release with an architecture.
enum class FirstRelease {
  every_release,    ///< every release llmsim models serves it (version unused)
  release,          ///< `version` is the first release with it
  not_before,       ///< only a bound: releases before `version` predate the model's publication; the first with it
                    ///< is not established here
  not_established,  ///< nothing established: no release is refused
};

struct EngineFirst {
  FirstRelease kind = FirstRelease::not_established;
  const char* version = "";  ///< "0.6.6" for release / not_before
  const char* source = "";   ///< the PR, release notes or maintainer's word, and how the tag was placed
};

struct ArchitectureRelease {
  const char* architecture;  ///< Hugging Face architectures[0] ("DeepseekV3ForCausalLM")
  const char* family;        ///< what it is, for messages ("DeepSeek-V3: MLA + MoE")
  EngineFirst vllm, sglang;
};

/// Every row, in the table's order.
const std::vector<ArchitectureRelease>& architecture_releases();

/// The row of `architecture` (ModelSpec::architecture); nullptr for an architecture the table does not hold (a user's
/// own config of another architecture: no release is refused for it).
const ArchitectureRelease* architecture_release(const std::string& architecture);

/// Checks that the release named in engine.runtime (`release`, "vllm==0.6.3") can serve `model`: ConfigError at
/// `path` naming the model, the release and the first release with the architecture (or the bound) when it
/// predates it. A local build ("0.7.3+ppu1.5", a '+' in the version) may carry support its number does not: then a
/// note for `notes` instead. Nothing for no release, a runtime name, another engine or an architecture not in the
/// table. ConfigError as parse_engine_version for a malformed release.
std::optional<std::string> check_release_serves(const ModelSpec& model, const std::optional<std::string>& release,
                                                const std::string& path = "engine.runtime");

}  // namespace llmsim::spec
