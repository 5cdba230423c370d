// SGLang's overlap scheduler: when the engine runs it (python/sglang/srt/server_args.py, disable_overlap_schedule and
// the conditions __post_init__ turns it off under; sglang#2067 made it the default).
#include "llmsim/perf/sglang_overlap.hpp"

#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/runtime_version.hpp"

namespace llmsim::perf {

bool sglang_overlap(const spec::EngineConfig& engine, int pp,
                    const std::optional<spec::SpeculativeConfig>& speculative) {
  if (engine.async_scheduling && !*engine.async_scheduling) return false;  // --disable-overlap-schedule
  if (engine.async_scheduling) {
    const std::string path = "engine.async_scheduling";
    if (pp > 1) {
      throw ConfigError(path, "SGLang turns its overlap scheduler off with pipeline parallel (hardware.pp = " +
                                  std::to_string(pp) + "; server_args.py: \"Pipeline parallelism is incompatible "
                                  "with overlap schedule\")");
    }
    if (speculative) {
      throw ConfigError(path, "SGLang turns its overlap scheduler off with speculative decoding (server_args.py: "
                              "\"Overlap scheduler is disabled because of using eagle speculative decoding\")");
    }
    return true;
  }
  return pp <= 1 && !speculative && spec::sglang_overlap_by_default(engine.runtime_release);
}

}  // namespace llmsim::perf
