// Corpus reader of kubernetes-sigs/inference-perf stage reports (inference-sim-training-h100-vllm015): each
// results/stage_N_lifecycle_metrics.json is one constant-rate stage of the shared_prefix data generator against a
// vLLM server, simulated as workload.prompt_pool (spec/prompt_pool.hpp) through analysis::check_vllm_result.
//
// What ran, read from the run's own results/config.yaml (the config inference-perf parsed and wrote back) and from
// inference-perf's code of that build (its config has load.request_timeout and circuit_breakers but not load.trace:
// between commits b81afa4 of 2025-10-15 and ad40050 of 2025-11-14, i.e. before v0.3.0):
//   * data: SharedPrefixDataGenerator — num_groups x num_prompts_per_group prompts (10 x 10: profile.yaml's
//     num_unique_system_prompts / num_users_per_system_prompt / enable_multi_turn_chat are not fields of that
//     build; pydantic ignored them, and config.yaml shows the defaults), each a group's system prompt of
//     system_prompt_len random tokens + " " + question_len random tokens, shuffled once; request n of a stage sends
//     prompt n mod 100 (get_request). The measured prompt lengths confirm it: constant per stage (e.g. 575 ± 17
//     tokens), never growing as a conversation's would.
//   * load: "constant" = ConstantLoadTimer — rate x duration requests with exponential gaps scaled to sum to the
//     duration (Poisson arrivals conditioned on their count), which check_vllm_result's Gamma(1) gaps are.
//   * each request: max_tokens = output_len, ignore_eos (server.ignore_eos): the server generates output_len tokens.
//   * metrics (reportgen/base.py, apis/completion.py): the client stamps every line of the SSE stream, the blank
//     separator lines included, so a reply of n tokens gives 2n + 2 stamps ([DONE] and its blank line last);
//     time_per_output_token = (last stamp - first stamp) / (stamps - 1), about half the decode step; ITL is every
//     gap between stamps: n - 1 token gaps and n + 2 gaps of microseconds (the client's json.loads between a data
//     line and its blank line). Both are predicted from llmsim's per-token TPOT/ITL by that rule
//     (metrics/inference_perf_stats.hpp): TPOT and the ITL mean × (n-1)/(2n+1), an ITL percentile p >= 75 as the
//     token gaps' percentile (p/100·(2n+1) − (n+2))/(n−1); its median and lower percentiles are the client's parse
//     time (unscored). One event per token holds in these files: mean ITL × (2n+1)/(n−1) equals the measured
//     (E2E − TTFT)/(n−1) within 0.2 % (70B TP4 at 20 req/s: 22.08 vs 22.05 ms), where merged events would raise
//     it. output_len re-tokenizes the streamed text (special tokens dropped: the 7B's median 249, p10 60 of 248).
// Each stage is simulated on its own from an empty cache, while stage 1 of a run followed stage 0 on the same server
// (its prompts already cached): its first pass over the pool (100 of 6,000-12,000 requests) misses in llmsim only.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <regex>

#include "corpus/common.hpp"
#include "corpus/readers.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/metrics/inference_perf_stats.hpp"
#include "llmsim/metrics/vllm_keys.hpp"

namespace llmsim::validation::corpus {

namespace {

/// The shared_prefix block of an inference-perf results/config.yaml (the few keys it needs, read line by line).
struct SharedPrefixConfig {
  std::int64_t groups = 0, per_group = 0, system = 0, question = 0, output = 0;
  bool multi_turn = false;   ///< enable_multi_turn_chat: true (a later build's mode, not what these runs used)
  std::string load_type;
};

SharedPrefixConfig read_config(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file.string(), "cannot be read");
  SharedPrefixConfig c;
  std::string line;
  bool in_prefix = false, in_load = false;
  const std::regex kv(R"(^(\s*)([a-z_]+):\s*(.*)$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, kv)) continue;
    const std::size_t indent = m[1].length();
    const std::string key = m[2], value = m[3];
    if (indent == 0) in_load = key == "load";
    if (indent <= 2) in_prefix = key == "shared_prefix";
    if (in_load && indent == 2 && key == "type") c.load_type = value;
    if (!in_prefix || indent != 4) continue;
    auto num = [&] { return std::stoll(value); };
    if (key == "num_groups") c.groups = num();
    else if (key == "num_prompts_per_group") c.per_group = num();
    else if (key == "system_prompt_len") c.system = num();
    else if (key == "question_len") c.question = num();
    else if (key == "output_len") c.output = num();
    else if (key == "enable_multi_turn_chat") c.multi_turn = value == "true";
  }
  if (c.groups < 1 || c.per_group < 1 || c.output < 1)
    throw ConfigError(file.string(), "no shared_prefix num_groups / num_prompts_per_group / output_len found");
  return c;
}

/// inference-perf's statistic names as vLLM's ("p0.1" -> "p0.1", "median", "mean"); "" for min/max.
std::string stat_key(const std::string& s) {
  if (s == "mean" || s == "median" || (s.size() > 1 && s[0] == 'p')) return s;
  return "";
}

}  // namespace

void inference_sim(const Source& s, std::vector<Row>& out) {
  const Json runs = runs_of(s);
  static const std::vector<std::pair<std::string, std::string>> kLatency = {
      {"time_to_first_token", "ttft"}, {"time_per_output_token", "tpot"}, {"request_latency", "e2el"},
      {"inter_token_latency", "itl"}, {"normalized_time_per_output_token", "ntpot"}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Json& run = runs[i];
    const std::string file = run.at("result");
    const std::string where = file + ":runs[" + std::to_string(i) + "]";
    const Json doc = read_json_file((s.dir / file).string());
    const Json& ok = doc.at("successes");
    const auto experiment = (s.dir / file).parent_path().parent_path();
    const SharedPrefixConfig cfg = read_config(experiment / "results/config.yaml");
    ServeRun sr = serve_run(s, run, where);
    // vLLM 0.15.1 with the OffloadingConnector, 8 GiB (the sister repository's design note; source notes).
    sr.options.vllm_args += " --kv-offloading-size 8";
    const auto count = ok.at("count").get<std::int64_t>();
    const auto failed = doc.at("failures").at("count").get<std::int64_t>();
    if (sr.unscored.empty() && cfg.multi_turn)
      sr.unscored = "inference-perf's multi-turn shared_prefix mode (enable_multi_turn_chat) is not modelled";
    if (sr.unscored.empty() && cfg.load_type != "constant")
      sr.unscored = "inference-perf load type '" + cfg.load_type + "' is not modelled here";
    if (sr.unscored.empty() && failed > 0) {
      sr.unscored = "overloaded: " + std::to_string(failed) + " of " + std::to_string(failed + count) +
                    " requests failed (the stage report does not say why, and llmsim does not model the client's "
                    "failures), so the successes' statistics are of a filtered set";
    }
    // The stage as a vLLM result: its rate, count and lengths; the prompt pool as the scenario's workload.
    analysis::VllmResult vr;
    vr.source = (s.dir / file).string();
    vr.backend = "vllm";
    vr.model_id = text(s, run, "hf_model");
    vr.num_prompts = vr.completed = count;
    vr.request_rate = doc.at("load_summary").at("requested_rate").get<double>();
    const Json& thr = ok.at("throughput");
    const double rps = thr.at("requests_per_sec").get<double>();
    vr.duration_s = rps > 0 ? static_cast<double>(count) / rps : 0;
    vr.total_input_tokens = std::llround(ok.at("prompt_len").at("mean").get<double>() * static_cast<double>(count));
    vr.total_output_tokens = cfg.output * count;  // ignore_eos: every reply is max_tokens long
    vr.scalars.push_back({"duration", vr.duration_s});
    vr.scalars.push_back({"request_throughput", rps});
    vr.scalars.push_back({"input_throughput", thr.at("input_tokens_per_sec").get<double>()});
    // inference-perf's ITL percentiles as llmsim's per-token ITL percentiles (the rule's), asked of the collector as
    // extra percentiles (the scenario's metrics.percentiles: reported beside p50/p90/p95/p99).
    std::map<std::string, std::string> itl_token_key;  // the file's key -> the per-token key it is predicted by
    std::vector<double> itl_percentiles;
    for (const auto& [name, metric] : kLatency) {
      if (metric == "ntpot") continue;
      const Json& dist = ok.at("latency").at(name);
      for (auto it = dist.begin(); it != dist.end(); ++it) {
        const std::string st = stat_key(it.key());
        if (st.empty() || !it.value().is_number()) continue;
        analysis::VllmLatencyStat l;
        auto parsed = analysis::parse_vllm_latency_key(st + "_" + metric + "_ms");
        if (!parsed) continue;
        l = *parsed;
        l.value_ms = it.value().get<double>() * 1e3;
        vr.latencies.push_back(l);
        if (metric != "itl" || l.statistic != "p") continue;
        const auto rule = metrics::inference_perf_itl("p", l.percentile, cfg.output);
        if (!rule.predictable) continue;
        const std::string token_key = metrics::vllm_percentile_key(rule.token_percentile, "itl");
        itl_token_key[l.key] = token_key;
        if (const auto tk = analysis::parse_vllm_latency_key(token_key)) {
          vr.latencies.push_back(*tk);  // value 0: only its prediction is read
          // p100 is the max (not an extra percentile); the row then has no prediction.
          if (tk->percentile < 100 && std::find(itl_percentiles.begin(), itl_percentiles.end(), tk->percentile) ==
                                          itl_percentiles.end())
            itl_percentiles.push_back(tk->percentile);
        }
      }
    }
    if (!itl_percentiles.empty()) sr.options.scenario["metrics"] = {{"percentiles", itl_percentiles}};
    sr.options.scenario["workload"] = {
        {"prompt_pool",
         {{"groups", cfg.groups}, {"prompts_per_group", cfg.per_group}, {"system_tokens", cfg.system}, {"shuffle", true}}}};
    std::optional<analysis::VllmCheck> check;
    std::string skip = sr.unscored;
    if (skip.empty()) {
      try {
        check = analysis::check_vllm_result(vr, sr.options);
        if (!check->fits) skip = "llmsim says the configuration does not fit: " + check->reason;
        sr.proto.runtime = spec::to_string(check->scenario.engine.resolved_runtime());
      } catch (const ConfigError& e) {
        skip = std::string("not representable: ") + e.what();
      }
    }
    auto predicted = [&](const std::string& key) -> std::optional<double> {
      if (!check) return std::nullopt;
      for (const auto& r : check->rows)
        if (r.key == key) return r.predicted;
      return std::nullopt;
    };
    // inference-perf's TPOT: (t_last − t_first) / (2n + 1) over the 2n + 2 stamps of an n-token reply, where vLLM's
    // definition (check_vllm_result's) divides the same span by n − 1.
    const double n_out = static_cast<double>(cfg.output);
    const double tpot_scale = metrics::inference_perf_tpot_scale(cfg.output);
    Row base = sr.proto;
    base.input = std::llround(ok.at("prompt_len").at("mean").get<double>());
    base.output = cfg.output;
    base.context = static_cast<double>(base.input) + n_out / 2.0;
    // A stage llmsim cannot serve (its queue grows through the run) stays scored — the error is the model's — but its
    // rows say so: a latency in seconds where the server held milliseconds is a capacity verdict, not a latency.
    std::string saturated;
    if (check && check->fits)
      for (const auto& n : check->notes)
        if (n.starts_with("the simulated run was unstable")) {
          std::string why = n.substr(n.find(':') + 1);  // "... unstable: unstable: requests in the system grew ..."
          while (why.starts_with(" ") || why.starts_with("unstable:")) why.erase(0, why.starts_with(" ") ? 1 : 9);
          saturated = "llmsim saturates here: " + why;
        }
    auto emit = [&](const std::string& metric, double measured, std::optional<double> p, const std::string& why) {
      Row r = base;
      r.metric = metric;
      r.measured = measured;
      r.higher_is_better = throughput_key(metric);
      if (!skip.empty()) unscore(r, skip);
      else if (!why.empty()) {
        unscore(r, why);
        if (p) r.predicted = *p;
      } else if (!p || !(*p > 0) || !std::isfinite(*p)) unscore(r, "llmsim states no prediction for it");
      else if (!(measured > 0)) unscore(r, "measured value is 0");
      else {
        r.predicted = *p;
        r.note = saturated;
      }
      out.push_back(std::move(r));
    };
    for (const auto& [name, metric] : kLatency) {
      const Json& dist = ok.at("latency").at(name);
      for (auto it = dist.begin(); it != dist.end(); ++it) {
        if (!it.value().is_number()) continue;
        const std::string st = stat_key(it.key());
        const std::string key = (st.empty() ? it.key() : st) + "_" + metric + "_ms";
        const double measured = it.value().get<double>() * 1e3;
        std::string why;
        std::optional<double> p = st.empty() ? std::nullopt : predicted(key);
        if (st.empty()) why = "a single request's extreme (" + it.key() + "), not a statistic of the run";
        else if (metric == "itl") {
          const auto pk = analysis::parse_vllm_latency_key(key);
          const auto rule = pk ? metrics::inference_perf_itl(pk->statistic, pk->percentile, cfg.output)
                               : metrics::InferencePerfItl{.why = "not a statistic inference-perf reports"};
          if (!rule.predictable) why = rule.why;
          else if (rule.mean) p = p ? std::optional<double>(*p * rule.scale) : std::nullopt;
          else p = itl_token_key.count(key) ? predicted(itl_token_key.at(key)) : std::nullopt;
        } else if (metric == "ntpot")
          why = "divides by the re-tokenized reply text's length (special tokens dropped), not the tokens generated";
        if (metric == "tpot" && p) *p *= tpot_scale;
        emit(key, measured, p, why);
      }
    }
    emit("request_throughput", rps, predicted("request_throughput"), "");
    emit("input_throughput", thr.at("input_tokens_per_sec").get<double>(), predicted("input_throughput"),
         "same duration as request_throughput (scored)");
    for (const char* k : {"output_tokens_per_sec", "total_tokens_per_sec"}) {
      emit(std::string(k), thr.at(k).get<double>(), std::nullopt,
           "counts the re-tokenized reply text (special tokens dropped), not the tokens generated");
    }
    for (const char* k : {"prompt_len", "output_len"}) {
      const Json& dist = ok.at(k);
      for (auto it = dist.begin(); it != dist.end(); ++it) {
        if (!it.value().is_number()) continue;
        Row r = base;
        r.metric = std::string(k) + "." + it.key();
        r.measured = it.value().get<double>();
        unscore(r, "a length of the workload (an input of the run), not a measurement of the engine");
        out.push_back(std::move(r));
      }
    }
  }
}

}  // namespace llmsim::validation::corpus
