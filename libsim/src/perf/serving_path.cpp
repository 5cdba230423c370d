// The serving path's latency around the engine; sources in docs/cost-model.md "The serving path" and
// perf/provenance.cpp (runtime.api_server_s, runtime.engine_client_s, runtime.tokenise_per_token_s).
#include "llmsim/perf/serving_path.hpp"

#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/perf/runtime.hpp"

namespace llmsim::perf {

namespace {

/// Whether a request crosses the server's path (the part a fitted profile's api_server_s prices): served through the
/// runtime's API server, not offline, not a static batch (one generate call), not the synthetic service. An
/// in-process engine pays only its client hop (engine_client_s), which no profile field moves.
bool path_applies(const spec::EngineConfig& engine, bool offline) {
  return engine.api_server && !offline && !engine.synthetic_service &&
         engine.policy != spec::SchedulerPolicy::static_batching;
}

}  // namespace

ServingPath serving_path(const spec::EngineConfig& engine, bool offline) {
  if (offline || engine.synthetic_service) return {};
  if (engine.policy == spec::SchedulerPolicy::static_batching) return {};
  const RuntimeTraits t = runtime_traits(runtime_of(engine));
  // In-process (a Python caller of the engine object, no HTTP): only the hop to an engine process of its own, where
  // the runtime has one (vLLM V1's AsyncLLM -> EngineCore). The caller may pass token ids: no tokenisation charged.
  if (!engine.api_server) return {t.engine_client_s, 0};
  // vLLM before 0.6.5 tokenised on the server's event loop (before 0.6 the engine's own), before the engine saw the
  // request: the loop queues it (perf/inprocess_server.hpp inprocess_front), and the path after the engine carries
  // neither the tokenisation nor the handler's part of api_server_s that the loop prices.
  if (const InprocessFront front = inprocess_front(engine, offline); front.applies())
    return {t.api_server_s - front.from_path_s, 0};
  return {t.api_server_s, t.tokenise_per_token_s};
}

ServingPath serving_path(const spec::EngineConfig& engine, bool offline, const HardwareProfile& profile) {
  ServingPath path = serving_path(engine, offline);
  // A profile fitted on another runtime does not price this one's path (runtime_mismatch's note says so).
  if (path_applies(engine, offline) && profile.api_server_s && !runtime_mismatch(profile, runtime_of(engine)))
    path.fixed_s = *profile.api_server_s;
  return path;
}

double serving_path_latency_s(const spec::EngineConfig& engine, bool offline, std::int64_t prompt_tokens) {
  return serving_path(engine, offline).latency_s(prompt_tokens);
}

}  // namespace llmsim::perf
