// vLLM result -> scenario: the scenario a measured run stands for (its model, weight format, release, server
// command line, and its requests as the client sent them). vllm_check.cpp simulates it and compares.
#include "llmsim/analysis/vllm_check.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <boost/random/gamma_distribution.hpp>

#include "llmsim/analysis/cost.hpp"
#include "llmsim/analysis/result_notes.hpp"
#include "llmsim/analysis/server_args.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/core/rng.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/architecture_release.hpp"
#include "llmsim/spec/published_name.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/v0_running_order.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::analysis {


namespace {
// A finite request_rate so high that the whole run is sent within a millisecond — less than one engine step — is
// "inf" as the client behaves: clients that cannot write inf pass 1e9 (anyscale's runs: request_rate 1e9 with
// max_concurrency 128). With max_concurrency that matters: the client's semaphore, not the rate, then spaces the
// requests, and only the inf form is simulated as that closed loop.
VllmResult sent_at_once(const VllmResult& r, std::vector<std::string>& notes) {
  constexpr double kAtOnceS = 1e-3;
  const auto n =
      static_cast<double>(r.input_lens.empty() ? r.completed : static_cast<std::int64_t>(r.input_lens.size()));
  if (!r.request_rate || !r.max_concurrency || n < 2 || (n - 1) / *r.request_rate >= kAtOnceS) return r;
  VllmResult s = r;
  s.request_rate.reset();
  s.arrivals_s.clear();
  notes.push_back("request_rate " + format_digits(*r.request_rate) + "/s sends all " +
                  std::to_string(static_cast<long long>(n)) + " requests within " +
                  format_digits((n - 1) / *r.request_rate * 1e6) +
                  " us: read as inf, so max_concurrency " + std::to_string(*r.max_concurrency) +
                  " spaces them (a closed loop)");
  return s;
}

}  // namespace

spec::Scenario vllm_check_scenario(const VllmResult& given, const VllmCheckOptions& o, const spec::Catalog& catalog,
                                   std::vector<std::string>& notes) {
  const VllmResult r = sent_at_once(given, notes);
  if (!o.scenario.is_object()) throw ConfigError("scenario", "expected a JSON object");
  Json doc = o.scenario;
  const bool scenario_model = doc.contains("model") && !doc["model"].is_null();
  // The release the run used: engine.runtime "vllm==X" (its runtime and scheduler), over the scenario's own.
  const bool sglang_backend = r.backend.rfind("sglang", 0) == 0;
  const bool sglang_server = sglang_backend || !o.sglang_args.empty();  // an SGLang command line says so too
  if (!o.engine_version.empty()) {
    if (!doc.contains("engine") || !doc["engine"].is_object()) doc["engine"] = Json::object();
    doc["engine"]["runtime"] = spec::release_from_flag(o.engine_version, sglang_server ? "sglang" : "vllm",
                                                       "--engine-version");
  } else if (sglang_backend && o.vllm_args.empty() &&
             !(doc.contains("engine") && doc["engine"].is_object() && doc["engine"].contains("runtime"))) {
    // The server was SGLang (backend "sglang" / "sglang-oai"): its runtime, unless the scenario names one or a vLLM
    // server line says the server was vLLM (SGLang's client against vLLM; server_arg_sets runs the line's server).
    if (!doc.contains("engine") || !doc["engine"].is_object()) doc["engine"] = Json::object();
    doc["engine"]["runtime"] = "sglang";
    notes.push_back("backend '" + r.backend + "': simulated on llmsim's SGLang runtime");
  }
  // The server's command line (vLLM's or SGLang's): the same overrides as every command's --vllm-args/--sglang-args
  // (server_arg_sets), applied over the scenario once the release is set (a vLLM name such as
  // enable_chunked_prefill resolves against the release's scheduler); --model below overrides its model.
  const ServerArgSets server = server_arg_sets(o.vllm_args, o.sglang_args, doc, catalog, !o.model.empty());
  for (const auto& [path, value] : server.sets) {
    // vLLM's names stay at the top level, read by the scenario pre-pass with the release above, as a scenario file's
    // are: --enable-chunked-prefill on a V0 release is then V0's chunked scheduler (set_json_path would resolve it
    // without the release).
    if (path.find('.') == std::string::npos && path != "model") doc[path] = value;
    else spec::set_json_path(doc, path, value);
  }
  notes.insert(notes.end(), server.notes.begin(), server.notes.end());
  // The model: --model, the command line's (set above), the scenario's, else the file's model_id by name.
  const std::string hf_name = server.model_arg.empty() ? r.model_id : server.model_arg;
  if (!o.model.empty()) {
    doc["model"] = o.model;
  } else if (server.model_arg.empty() && !scenario_model) {
    if (hf_name.empty()) {
      throw ConfigError(r.source, "model_id: missing; name the model (--model ID or config.json)");
    }
    if (const auto id = catalogue_model_for(hf_name, catalog)) {
      doc["model"] = *id;
      if (*id != spec::published_base_name(hf_name)) {
        notes.push_back("model '" + hf_name + "' is sized as catalogue model '" + *id +
                        "' (matched by name; --model ID or a config.json overrides)");
      }
    } else if (hf_name.find('/') == std::string::npos || hf_name.ends_with(".json") || spec::local_checkpoint(hf_name)) {
      doc["model"] = hf_name;  // a catalogue id, a config.json path or a checkpoint directory as given
    } else {
      std::string msg = "'" + hf_name + "' is not a catalogue model";
      const auto close = close_matches(spec::published_reduced_name(hf_name), catalog.model_ids());
      for (std::size_t i = 0; i < close.size(); ++i) msg += (i ? ", " : " (closest: ") + close[i];
      if (!close.empty()) msg += ")";
      throw ConfigError("model", msg + "; pass --model with a catalogue id (llmsim catalog models) or the "
                                       "checkpoint's config.json");
    }
  }
  // A quantized checkpoint announces itself in its name (vLLM reads its quantization_config).
  const bool quant_given = (doc.contains("quant") && doc["quant"].is_object() && doc["quant"].contains("weights")) ||
                           doc.contains("quantization") || doc.contains("dtype");
  if (!quant_given && (!doc.contains("quant") || doc["quant"].is_object())) {
    const std::string q = weight_format_in_name(hf_name);
    if (!q.empty()) {
      doc["quant"]["weights"] = q;
      notes.push_back("weights '" + q + "' from the checkpoint name '" + hf_name + "'");
    }
  }
  // The workload from the file.
  const bool lists = !r.input_lens.empty();
  const auto n = static_cast<std::int64_t>(lists ? r.input_lens.size() : static_cast<std::size_t>(r.completed));
  if (n < 1) throw ConfigError(r.source, "completed: no request completed, nothing to compare");
  // Sent all at once (request_rate inf, no max_concurrency), every request is in the system together: past the
  // simulator's bound the run could only stop as unstable, after building a trace of that many requests (20 M: GBs
  // and minutes). Refused first, naming the field.
  if (!r.request_rate && !r.max_concurrency && n > engine::SimulationOptions{}.max_in_system)
    throw ConfigError(r.source + ": completed",
                      std::to_string(n) + " requests sent at once (request_rate inf) exceed the " +
                          std::to_string(engine::SimulationOptions{}.max_in_system) +
                          " the simulator holds in the system at once; a benchmark run of that size is not simulated");
  // The mean lengths: from the totals when the file states them (a VllmResult built field by field may set only
  // those), else the lengths a latency-only summary asked for.
  const double done = static_cast<double>(std::max<std::int64_t>(1, r.completed));
  const std::int64_t mean_in = std::max<std::int64_t>(
      1, r.total_input_tokens > 0 ? std::llround(static_cast<double>(r.total_input_tokens) / done) : r.mean_input_len);
  const std::int64_t mean_out = std::max<std::int64_t>(
      1, r.total_output_tokens > 0 ? std::llround(static_cast<double>(r.total_output_tokens) / done) : r.mean_output_len);
  if (!lists && r.total_input_tokens == 0 && r.total_output_tokens == 0) {
    notes.push_back("the file states no token totals: every request is " + std::to_string(mean_in) + " prompt / " +
                    std::to_string(mean_out) + " output tokens, the lengths the run asked for");
  } else if (!r.lists_from.empty()) {
    notes.push_back(std::string("the file has no per-request lengths: the requests' lengths are ") +
                    (r.lists_drawn ? "drawn from " : "reproduced from ") + r.lists_from);
  } else if (!lists) {
    notes.push_back("the file has no per-request lengths (saved without details): every request is " +
                    std::to_string(mean_in) + " prompt / " + std::to_string(mean_out) + " output tokens, the means");
  }
  Json& w = doc["workload"];
  if (!w.is_object()) w = Json::object();
  w["num_requests"] = n;
  w["warmup_requests"] = 0;
  // The client's endpoint: `--backend openai-chat` sends messages to /v1/chat/completions, which the server renders
  // with the model's chat template first (perf/chat_render.hpp); the scenario's own setting wins.
  if (r.backend == "openai-chat" && !w.contains("endpoint")) {
    w["endpoint"] = spec::to_string(spec::Endpoint::chat_completions);
    notes.push_back("backend 'openai-chat': the requests go to /v1/chat/completions (workload.endpoint), rendered "
                    "with the model's chat template in the API server");
  }
  const std::uint64_t seed = w.contains("seed") && w["seed"].is_number_unsigned() ? w["seed"].get<std::uint64_t>() : 1;
  auto length_values = [&](const std::vector<std::int64_t>& v) {
    Json vals = Json::array();
    for (auto x : v) vals.push_back(std::max<std::int64_t>(1, x));
    return Json{{"dist", "empirical"}, {"values", vals}};
  };
  if (o.warm_cache) {
    if (r.max_concurrency && !r.request_rate)
      throw ConfigError("--warm-cache", "a warm cache replays the file's requests in the order sent; a max_concurrency "
                                        "run without a request_rate is simulated as a closed loop that does not keep it");
    w["warm_cache"] = true;
    notes.push_back("warm cache (--warm-cache): the server's prefix cache holds the run's prompts at the start, as an "
                    "earlier run of the same requests left it (least recently used first, bounded by the KV pool)");
  }
  // Whether the client sent ignore_eos: --ignore-eos/--disable-ignore-eos, else the scenario's, else the client's
  // default (SGLang's server plans on it with the radix cache off: spec/sglang_admission.hpp).
  if (o.ignore_eos) {
    w["ignore_eos"] = *o.ignore_eos;
    notes.push_back(std::string("ignore_eos ") + (*o.ignore_eos ? "sent" : "not sent") +
                    " with every request, as the command states (workload.ignore_eos)");
  } else if (!w.contains("ignore_eos")) {
    const bool sglang_client = r.client == "sglang";
    w["ignore_eos"] = sglang_client;
    notes.push_back(sglang_client ? "ignore_eos sent with every request: SGLang's bench_serving does unless "
                                    "--disable-ignore-eos, which its file does not record (--disable-ignore-eos states "
                                    "it; workload.ignore_eos)"
                                  : "ignore_eos not sent: vLLM's client sends it only with --ignore-eos, which its file "
                                    "does not record (--ignore-eos states it; workload.ignore_eos)");
  }
  if (r.max_concurrency && !r.request_rate) {
    // The client's semaphore: C requests in flight, the next sent as one finishes — a closed loop. Clients that
    // started apart (start_offsets_s, given by the caller's scenario: the file records one client) keep their starts.
    Json closed = {{"process", "closed"}, {"concurrency", *r.max_concurrency}, {"think_time_s", 0}};
    if (w.contains("arrival") && w["arrival"].is_object() && w["arrival"].contains("start_offsets_s"))
      closed["start_offsets_s"] = w["arrival"]["start_offsets_s"];
    w["arrival"] = closed;
    if (r.lists_drawn) {
      // Lengths drawn from the dataset (the file lists none): the loop draws them as pairs at the file's means.
      w["dataset"] = {{"name", to_lower(r.dataset_name)},
                      {"input_mean", static_cast<double>(r.total_input_tokens) / done},
                      {"output_mean", static_cast<double>(r.total_output_tokens) / done}};
      notes.push_back("max_concurrency " + std::to_string(*r.max_concurrency) +
                      ": a closed loop drawing each request's lengths from the dataset (workload.dataset)");
    } else if (lists) {
      w["input_tokens"] = length_values(r.input_lens);
      w["output_tokens"] = length_values(r.output_lens);
      notes.push_back("max_concurrency " + std::to_string(*r.max_concurrency) +
                      ": a closed loop drawing lengths from the file's lists (their pairing is not kept)");
    } else {
      w["input_tokens"] = {{"dist", "fixed"}, {"value", mean_in}};
      w["output_tokens"] = {{"dist", "fixed"}, {"value", mean_out}};
    }
  } else {
    // Every request in the file's order; arrival times are all 0 for request_rate inf, else the client's own where
    // they were reproduced (analysis/client_sampler), else drawn as vLLM's client draws them (Gamma gaps of shape
    // `burstiness`, mean 1/rate; the first sent at once).
    if (r.max_concurrency) {
      notes.push_back("max_concurrency " + std::to_string(*r.max_concurrency) + " with a finite request_rate: " +
                      "the client's cap on requests in flight is not modelled");
    }
    // The rate sets the arrival times drawn: a rate so small that they pass the clock's range is the file's
    // request_rate at fault (the trace's time_scale, which the replay would otherwise blame, is not the user's).
    auto too_slow = [&](double span_s) {
      if (!r.request_rate || span_s <= spec::kMaxSimulatedSeconds) return;
      throw ConfigError(r.source + ": request_rate",
                        "a rate of " + format_given(*r.request_rate) + " req/s spreads the file's " + std::to_string(n) +
                            " requests over " + format_given(span_s) + " s, beyond the 1e9 s the simulated clock "
                            "resolves; expected a rate above " +
                            format_given(static_cast<double>(n - 1) / spec::kMaxSimulatedSeconds) + " req/s (or \"inf\")");
    };
    if (r.request_rate && n > 1) too_slow(static_cast<double>(n - 1) / *r.request_rate);
    auto rng = rng_stream(seed, "vllm_check_arrivals");
    // Send times reproduced from the client's sampler, where known, replace the draw (measured from the first).
    const bool sent = r.request_rate && r.arrivals_s.size() == static_cast<std::size_t>(n);
    double t = 0;
    Json reqs = Json::array();
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (sent) {
        t = r.arrivals_s[k] - r.arrivals_s.front();
      } else if (i > 0 && r.request_rate) {
        t += boost::random::gamma_distribution<double>(r.burstiness, 1.0 / (*r.request_rate * r.burstiness))(rng);
      }
      reqs.push_back({t, lists ? r.input_lens[k] : mean_in, lists ? r.output_lens[k] : mean_out});
    }
    if (!(t <= spec::kMaxSimulatedSeconds)) too_slow(std::isnan(t) ? std::numeric_limits<double>::infinity() : t);
    w["arrival"] = {{"process", "trace"}, {"requests", reqs}};
    if (!r.request_rate) {
      notes.push_back("request_rate inf: all " + std::to_string(n) + " requests were sent at once — a burst, not an "
                      "overload: the server works through one batch of " + std::to_string(n) + ", and the queue it "
                      "starts with says nothing of stability (overload is judged only where arrivals have a rate); "
                      "the duration is how long that batch took");
    }
    if (r.request_rate && !sent) {
      notes.push_back("request_rate " + format_digits(*r.request_rate) + "/s: arrival times drawn like vLLM's client (Gamma, "
                      "burstiness " + format_digits(r.burstiness) + "), not the measured ones (the file does not record them)");
    }
  }
  spec::Scenario s = spec::scenario_from_json(JsonView(doc, ""));
  if (!o.gpu.empty()) {
    set_gpu(s, o.gpu);
  } else if (!(o.scenario.contains("hardware") && o.scenario["hardware"].is_object() &&
               o.scenario["hardware"].contains("gpu"))) {
    throw ConfigError("--gpu", "the vLLM result does not record which GPU ran it: name it (--gpu ID, or "
                               "hardware.gpu in the scenario)");
  }
  // The release the file states could not have served a model its architecture postdates: refused as a scenario
  // naming that release is (spec/architecture_release.hpp), whatever release the simulation is told to price.
  if (!r.version.empty()) {
    const std::string stated = std::string(sglang_server ? "sglang==" : "vllm==") + r.version;
    std::optional<spec::ModelSpec> model;
    try {
      (void)spec::parse_engine_version(stated, "version");
      model = catalog.model(s.model, "model");
    } catch (const ConfigError&) {
      // A version llmsim cannot place, or a model resolve() reports in its own words: nothing to compare here.
    }
    if (model) {
      if (auto note = spec::check_release_serves(*model, stated, "version (the release the result file states)"))
        notes.push_back(*note);
    }
  }
  if (s.engine.runtime_release) {
    notes.push_back("simulated as " + *s.engine.runtime_release + ": runtime '" +
                    spec::to_string(s.engine.resolved_runtime()) + "', policy '" + spec::to_string(s.engine.policy) +
                    "'; the client's warm-up request is not simulated");
    if (s.engine.policy == spec::SchedulerPolicy::chunked &&
        spec::v0_prefills_ahead_of_decodes(s.engine.runtime_release))
      notes.push_back("vLLM 0.5.4-0.5.5's chunked prefill puts the prompts it admitted ahead of the running decodes "
                      "(fixed by vllm#7874 in 0.6.0): under load a prompt carried over with part of its chunk takes the "
                      "budget first and the decoders behind it skip that step (a gap of two steps); simulated in that order "
                      "(engine/v0_walk.cpp), it is what lengthens the ITL/TPOT tails (p99, std) of a loaded run");
  } else if (sglang_server) {
    notes.push_back("simulated with policy '" + spec::to_string(s.engine.policy) + "' on runtime '" +
                    spec::to_string(s.engine.resolved_runtime()) + "'; the client's warm-up request is not simulated");
  } else {
    notes.push_back("the file does not record vLLM's version or scheduler: simulated with policy '" +
                    spec::to_string(s.engine.policy) + "' on runtime '" +
                    spec::to_string(s.engine.resolved_runtime()) +
                    "' (name the release with --engine-version, e.g. 0.5.4, when the run predates vLLM 0.8's V1 "
                    "engine); the client's warm-up request is not simulated");
  }
  if (!s.engine.runtime_release) {
    if (const auto hint = version_hint(r, s)) notes.push_back(*hint);
  }
  if (!r.backend.empty() && r.backend != "vllm" && r.backend != "openai" && r.backend != "openai-chat" &&
      !sglang_server) {
    notes.push_back("the measured server was '" + r.backend + "' (backend), while llmsim models vLLM's engine");
  }
  return s;
}

}  // namespace llmsim::analysis
