// The validation report (`make validate`, docs/trust.md): llmsim's predictions of public measurements — the sets
// in data/validation and the reference data in ../shared/reference — one line per row and a grouped table, with
// the bias bound per group and the overall bounds asserted. The report itself is the hidden test case
// "[.validate]" (scripts/validate.sh runs it); the visible cases below run in `make test`: the sets parse and are
// predicted, the report's statistics are right, the all-reduce probe reads the cost model correctly, and the
// reference sets stay within the tolerances they have always been held to.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <map>
#include <set>

#include "bands.hpp"
#include "corpus/common.hpp"
#include "corpus_sets.hpp"
#include "csv_table.hpp"
#include "llmsim/analysis/error_band.hpp"
#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/cost_model.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"
#include "reference_sets.hpp"
#include "repo_sets.hpp"
#include "report.hpp"

using namespace llmsim;
using namespace llmsim::validation;
namespace fs = std::filesystem;

namespace {

const fs::path kSets = fs::path(LLMSIM_DATA_DIR) / "validation";
const fs::path kRef = LLMSIM_REFERENCE_DIR;
const fs::path kCorpus = kSets / "corpus";
/// Sources of the corpus with at least one scored value today (the others are unscored with their reasons: an
/// unstated engine version, steady-state windows without prompt lengths, KV CPU offloading), and how many of them are
/// blind (issue 27 asks for >= 15; xiongjiedai-llamacpp is a development source).
constexpr std::size_t kCorpusSources = 21;
constexpr std::size_t kCorpusScoredSources = 19;
constexpr std::size_t kCorpusBlindScoredSources = 18;

/// The corpus rows, computed once per process (every serve file is a simulation: the report, the band table and the
/// visible checks share them).
const std::vector<Row>& cached_corpus_rows() {
  static const std::vector<Row> rows = corpus_rows(kCorpus);
  return rows;
}

std::vector<double> errors(const std::vector<Row>& rows, bool native, bool absolute,
                           const std::function<bool(const Row&)>& keep) {
  std::vector<double> e;
  for (const Row& r : rows) {
    if (!keep(r)) continue;
    const double x = native ? r.native_error() : r.time_error();
    e.push_back(absolute ? std::abs(x) : x);
  }
  return e;
}

std::vector<Row> reference_rows() {
  std::vector<Row> rows;
  for (auto part : {vidur_op_rows(kRef), vidur_allreduce_rows(kRef), llamacpp_rows(kRef)})
    rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}

/// Writes a one-row set file and returns the error message of loading it ("" when it loads).
std::string load_error(const std::string& row, const std::string& name = "bad.csv") {
  const fs::path dir = fs::temp_directory_path() / ("llmsim_validation_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ifstream good(kSets / "gpt_fast.csv");
  std::string header;
  std::getline(good, header);
  const fs::path file = dir / name;
  std::ofstream(file) << header << "\n" << row << "\n";
  std::string what;
  try {
    load_set(file);
  } catch (const ConfigError& e) {
    what = e.what();
  }
  fs::remove_all(dir);
  return what;
}

}  // namespace

TEST_CASE("the repository's measurement sets parse and every scored row is predicted", "[validation]") {
  const auto rows = repo_set_rows(kSets);
  REQUIRE(rows.size() >= 100);
  std::map<std::string, int> per_set;
  int scored = 0;
  for (const Row& r : rows) {
    INFO(r.where);
    ++per_set[r.set];
    CHECK(r.measured > 0);
    if (r.scored) {
      ++scored;
      CHECK(std::isfinite(r.predicted));
      CHECK(r.predicted > 0);
    } else {
      CHECK_FALSE(r.note.empty());  // an excluded row says why
    }
  }
  CHECK(per_set.size() >= 5);
  CHECK(scored >= 80);
}

namespace {

/// Per corpus source: rows, scored, and the unscored reasons counted (the report's "why not" per source).
void print_corpus_sources(std::FILE* out, const std::vector<Row>& rows) {
  struct Tally {
    std::string url;
    int rows = 0, scored = 0;
    std::map<std::string, int> why;
  };
  std::map<std::string, Tally> t;
  for (const Row& r : rows) {
    Tally& x = t[r.set];
    x.url = r.source_url;
    ++x.rows;
    if (r.scored) ++x.scored;
    else ++x.why[r.note];
  }
  int n = 0, scored = 0, sources = 0;
  for (const auto& [set, x] : t) {
    n += x.rows;
    scored += x.scored;
    sources += x.scored > 0 ? 1 : 0;
  }
  std::fprintf(out, "Blind corpus (data/validation/corpus): %d values from %zu sources, %d scored from %d sources\n", n,
               t.size(), scored, sources);
  for (const auto& [set, x] : t) {
    std::fprintf(out, "  %-40s %5d rows %5d scored  %s\n", set.c_str(), x.rows, x.scored,
                 perf::is_blind_source(set, x.url) ? "BLIND" : "developed on");
    std::vector<std::pair<int, std::string>> why;
    for (const auto& [w, c] : x.why) why.emplace_back(c, w);
    std::sort(why.rbegin(), why.rend());
    for (const auto& [c, w] : why) std::fprintf(out, "      %5d unscored: %.220s\n", c, w.c_str());
  }
}

}  // namespace

TEST_CASE("the blind corpus parses and its representable runs are predicted", "[validation]") {
  const auto& rows = cached_corpus_rows();
  std::map<std::string, int> scored_per_source;
  std::set<std::string> sources;
  int scored = 0;
  for (const Row& r : rows) {
    INFO(r.where << " " << r.metric);
    sources.insert(r.set);
    CHECK(std::isfinite(r.measured));
    CHECK_FALSE(r.source_url.empty());
    if (r.scored) {
      ++scored;
      ++scored_per_source[r.set];
      CHECK(std::isfinite(r.predicted));
      CHECK(r.predicted > 0);
      CHECK(r.measured > 0);
      CHECK_FALSE(r.runtime.empty());
    } else {
      CHECK_FALSE(r.note.empty());  // an unscored value says why
    }
  }
  print_corpus_sources(stdout, rows);
  CHECK(sources.size() == kCorpusSources);
  CHECK(scored >= 1000);
  CHECK(scored_per_source.size() >= kCorpusScoredSources);
  std::size_t blind = 0;
  for (const auto& entry : scored_per_source) {
    const std::string& set = entry.first;  // not a structured binding: clang 14 cannot capture one in a lambda
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.set == set; });
    if (perf::is_blind_source(set, it->source_url)) ++blind;
  }
  CHECK(blind >= kCorpusBlindScoredSources);
}

TEST_CASE("the Ray Serve runs are scored as a fleet: a client's throughput is the fleet's over the clients",
          "[validation]") {
  // anyscale-rayserve-gptoss-h100: R replicas behind the router, R parallel clients of C requests each. Every replica
  // carries about C requests whatever R is, so a client's predicted output throughput must not grow with R (it
  // would grow R-fold if the fleet's throughput were compared with one client's file). Every file's prediction counts,
  // scored or not (a client that lost requests is unscored, its prediction kept).
  std::map<std::int64_t, std::map<int, double>> by_batch;  // C -> replicas -> mean predicted output tok/s
  std::map<std::int64_t, std::map<int, int>> count;
  for (const Row& r : cached_corpus_rows()) {
    if (r.set != "anyscale-rayserve-gptoss-h100" || r.metric != "output_throughput" || !(r.predicted > 0)) continue;
    const auto x = r.where.find("rayoss251-x");
    REQUIRE(x != std::string::npos);
    const int replicas = std::stoi(r.where.substr(x + 11));
    by_batch[r.batch][replicas] += r.predicted;
    ++count[r.batch][replicas];
  }
  REQUIRE(by_batch.size() >= 3);
  for (auto& [c, per] : by_batch) {
    REQUIRE(per.size() >= 2);
    double lo = 1e300, hi = 0;
    for (auto& [rep, sum] : per) {
      const double mean = sum / count[c][rep];
      lo = std::min(lo, mean);
      hi = std::max(hi, mean);
    }
    INFO("per-replica concurrency " << c);
    CHECK(hi / lo < 1.3);
  }
}

TEST_CASE("a static batch measured faster than streaming its weights once per decode step is not scored",
          "[validation]") {
  // The floor is physics, not a tolerance: (out − 1) decode steps each read the GPU's weight shard at least once at
  // no more than the datasheet's peak bandwidth. zjuici's 13B fp16 batch-1 rows at 2,048-token prompts "decode"
  // 1,024–2,048 tokens at under 1 ms per token (an A100 needs >= 16 ms to read 26 GB): requests that ended early.
  int below = 0, kept = 0;
  for (const Row& r : cached_corpus_rows()) {
    if (r.note.find("streaming the weights") != std::string::npos) {
      INFO(r.where << " " << r.metric << " " << r.note);
      CHECK_FALSE(r.scored);
      ++below;
    }
    if (r.set == "zjuici-vllm025-a100-40gb" && r.batch == 1 && r.scored && r.model == "llama-2-13b" &&
        r.weights == "fp16")
      ++kept;
  }
  CHECK(below >= 3);  // 2048/512, 2048/1024, 2048/2048 at least
  CHECK(kept >= 10);  // the same source's physically possible rows stay scored
  // The rule's arithmetic on one case: 13B fp16 on an A100 40GB, 2,048 tokens in 1.7 s is impossible, in 60 s not.
  corpus::Source src;
  src.name = "test";
  const corpus::StaticRun st{"a100-40gb-sxm", "llama-2-13b", "fp16", "auto", 1, spec::Runtime::vllm_v0_paged, 0};
  CHECK_THAT(corpus::below_weight_stream(src, st, 2048, 2048, 1.7), Catch::Contains("ended before"));
  CHECK(corpus::below_weight_stream(src, st, 2048, 2048, 60.0).empty());
}

TEST_CASE("AccelMark batch-1 runs: TTFT is scored only where the prompt length is known; TPOT everywhere",
          "[validation]") {
  // accelmark-interactive: the prompt lengths are the dataset's counts plus the Llama-3 chat template's tokens. For
  // Mixtral and Qwen2.5 (other tokenizers and templates) the prompt length is unknown: their TTFT stays unscored with
  // that reason (its prediction kept for the record), their TPOT is scored. The TP8 runs are simulated at TP8.
  int ttft_scored = 0, ttft_unscored = 0, tpot_scored = 0, tp8 = 0;
  std::set<std::string> tp8_gpus;
  for (const Row& r : cached_corpus_rows()) {
    if (r.set != "accelmark-interactive") continue;
    INFO(r.where << " " << r.metric << " " << r.model);
    const bool llama3 = r.model.starts_with("llama-3.1-");
    if (r.metric.find("ttft") != std::string::npos) {
      CHECK(r.scored == llama3);
      if (!llama3) {
        CHECK_THAT(r.note, Catch::Contains("prompt length unknown"));
        CHECK(r.predicted > 0);
      }
      (r.scored ? ttft_scored : ttft_unscored)++;
    } else if (r.metric.find("tpot") != std::string::npos) {
      CHECK(r.scored);
      ++tpot_scored;
    }
    CHECK(r.batch == 1);
    if (r.scored && r.tp == 8) {
      ++tp8;
      tp8_gpus.insert(r.gpu);
    }
  }
  CHECK(ttft_scored > 0);
  CHECK(ttft_unscored > 0);
  CHECK(tpot_scored > ttft_scored);
  CHECK(tp8 > 0);
  CHECK(tp8_gpus.count("h200-141gb-sxm") == 1);
}

TEST_CASE("inference-perf stages: scored as a prompt pool where the run is known, TPOT and ITL by inference-perf's "
          "definitions", "[validation]") {
  // inference-sim-training-h100-vllm015 (tests/validation/corpus/inference_perf.cpp): the stages without failures have
  // their TTFT, TPOT, E2E statistics and ITL mean and p75-p99.9 scored (metrics/inference_perf_stats.hpp); the
  // overloaded reasoning stages, the extremes (min/max), ITL's median and lower percentiles (the client's own gaps
  // between a data line and its blank line), the normalized TPOT and the re-tokenized output rates stay unscored,
  // each with its reason.
  std::map<std::string, double> median;  // "<file> <metric>" -> predicted
  int scored = 0, reasoning_scored = 0;
  for (const Row& r : cached_corpus_rows()) {
    if (r.set != "inference-sim-training-h100-vllm015") continue;
    INFO(r.where << " " << r.metric << " " << r.note);
    const bool reasoning = r.where.find("reasoning") != std::string::npos;
    const bool latency = r.metric.find("_ttft_ms") != std::string::npos || r.metric.find("_tpot_ms") != std::string::npos ||
                         r.metric.find("_e2el_ms") != std::string::npos;
    const bool extreme = r.metric.starts_with("min_") || r.metric.starts_with("max_");
    const bool length = r.metric.starts_with("prompt_len.") || r.metric.starts_with("output_len.");
    if (reasoning && !length) CHECK_THAT(r.note, Catch::Contains("overloaded"));
    if (!reasoning && latency && !extreme) CHECK(r.scored);
    if (reasoning || extreme) CHECK_FALSE(r.scored);
    if (extreme && !reasoning) CHECK_THAT(r.note, Catch::Contains("extreme"));
    if (!reasoning && !extreme && r.metric.find("_itl_ms") != std::string::npos) {
      const bool token_gap = r.metric.starts_with("mean_") || r.metric.starts_with("p75_") ||
                             r.metric.starts_with("p90_") || r.metric.starts_with("p95_") ||
                             r.metric.starts_with("p99_") || r.metric.starts_with("p99.9_");
      CHECK(r.scored == token_gap);
      if (!token_gap) CHECK_THAT(r.note, Catch::Contains("blank separators"));
    }
    if (!reasoning && !extreme && (r.metric.find("ntpot") != std::string::npos || r.metric == "output_tokens_per_sec"))
      CHECK_THAT(r.note, Catch::Contains("re-tokenized"));
    if (r.scored) {
      ++scored;
      reasoning_scored += reasoning;
      CHECK_FALSE(r.runtime.empty());
      if (r.metric.starts_with("median_") || r.metric.starts_with("mean_") || r.metric.starts_with("p75_"))
        median[r.where + " " + r.metric] = r.predicted;
    }
  }
  // 20 stages x (TTFT, TPOT, E2E: mean, median, 10 percentiles; ITL: mean, p75-p99.9; request throughput)
  CHECK(scored >= 820);
  CHECK(reasoning_scored == 0);
  // TPOT spans (last token − first token) over 2n + 1 stamps, where vLLM's (e2e − ttft) / (n − 1) is about twice it.
  int checked = 0;
  for (const auto& [key, tpot] : median) {
    const auto at = key.find(" median_tpot_ms");
    if (at == std::string::npos) continue;
    const std::string where = key.substr(0, at);
    const double e2e = median[where + " median_e2el_ms"], ttft = median[where + " median_ttft_ms"];
    REQUIRE(e2e > ttft);
    const double n = 248;  // every output_len of the source is 247..251
    const double vllm_tpot = (e2e - ttft) / (n - 1);
    CHECK(tpot / vllm_tpot > 0.45);
    CHECK(tpot / vllm_tpot < 0.55);
    // ITL: the mean spreads the same spans over the same 2n + 1 gaps as TPOT; p75 is a token gap (about vLLM's
    // median ITL, twice inference-perf's TPOT), not one of the client's microsecond gaps.
    const double mean_itl = median.at(where + " mean_itl_ms"), mean_tpot = median.at(where + " mean_tpot_ms");
    CHECK(mean_itl == Approx(mean_tpot).epsilon(0.03));
    const double p75_itl = median.at(where + " p75_itl_ms");
    CHECK(p75_itl / vllm_tpot > 0.9);
    CHECK(p75_itl / vllm_tpot < 1.1);
    ++checked;
  }
  CHECK(checked >= 15);
}

TEST_CASE("a CSV field in quotes may span lines (RFC 4180); the row keeps its first line number", "[validation]") {
  // xiongjiedai-llamacpp/table.csv quotes a notebook cell of two lines as its `command`.
  const fs::path file = fs::temp_directory_path() / ("llmsim_csv_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(file) << "a,command,b\n1,\"# comment\n./llama-bench -p 512\",x\n2,plain,y\n";
  const CsvTable t(file);
  fs::remove(file);
  REQUIRE(t.rows() == 2);
  CHECK(t.text(0, "command") == "# comment\n./llama-bench -p 512");
  CHECK(t.text(0, "b") == "x");
  CHECK(t.where(1).find(":4") != std::string::npos);
  CHECK(t.text(1, "a") == "2");
}

TEST_CASE("the residual dump writes one tab-separated line per row with its error and blind flag", "[validation]") {
  Row fast;
  fast.set = "src";
  fast.where = "dir/run.jsonl:3:runs[0]";
  fast.runtime = "vllm-v0";
  fast.metric = "mean_tpot_ms";
  fast.note = "a\tnote\nwith breaks";
  fast.measured = 80;
  fast.predicted = 60;  // llmsim faster: time error -25 %
  Row tput = fast;
  tput.metric = "output_throughput";
  tput.higher_is_better = true;
  tput.measured = 1000;
  tput.predicted = 1250;  // more tokens/s predicted: also faster, -20 % on the time scale
  tput.scored = false;
  const fs::path file = fs::temp_directory_path() / ("llmsim_rows_" + std::to_string(::getpid()) + ".tsv");
  write_rows_tsv(file.string(), {fast, tput}, {true, false});
  std::ifstream in(file);
  std::vector<std::vector<std::string>> lines;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::size_t a = 0;
    for (std::size_t b; (b = line.find('\t', a)) != std::string::npos; a = b + 1) f.push_back(line.substr(a, b - a));
    f.push_back(line.substr(a));
    lines.push_back(f);
  }
  fs::remove(file);
  REQUIRE(lines.size() == 3);  // header + 2 rows: the note's tab and newline did not split its row
  const auto col = [&](const std::string& name) {
    const auto it = std::find(lines[0].begin(), lines[0].end(), name);
    REQUIRE(it != lines[0].end());
    return static_cast<std::size_t>(it - lines[0].begin());
  };
  for (const auto& l : lines) CHECK(l.size() == lines[0].size());
  CHECK(lines[1][col("where")] == "dir/run.jsonl:3:runs[0]");
  CHECK(lines[1][col("blind")] == "1");
  CHECK(lines[2][col("blind")] == "0");
  CHECK(lines[1][col("runtime")] == "vllm-v0");
  CHECK(std::stod(lines[1][col("time_error")]) == Approx(-0.25));
  CHECK(std::stod(lines[2][col("time_error")]) == Approx(-0.20));
  CHECK(lines[1][col("scored")] == "1");
  CHECK(lines[2][col("scored")] == "0");
  CHECK(lines[1][col("note")] == "a note with breaks");
  CHECK_THROWS_WITH(write_rows_tsv("/nonexistent-dir/rows.tsv", {fast}, {true}),
                    Catch::Contains("LLMSIM_VALIDATE_TSV") && Catch::Contains("/nonexistent-dir/rows.tsv"));
}

TEST_CASE("a malformed set row is refused naming the file, line, column and value", "[validation]") {
  const std::string ok =
      "src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,,,,yes,output_tok_per_s,100,tok/s,,";
  CHECK(load_error(ok).empty());
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,,,,yes,output_tok_per_s,fast,tok/s,,"),
             Catch::Contains("bad.csv:2: value") && Catch::Contains("'fast'"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,,,,yes,output_tok_per_s,100,s,,"),
             Catch::Contains("bad.csv:2: unit") && Catch::Contains("tok/s"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,,,,yes,tokens,100,tok/s,,"),
             Catch::Contains("unknown metric 'tokens'") && Catch::Contains("output_tok_per_s"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,0,5,200,,,,yes,output_tok_per_s,100,tok/s,,"),
             Catch::Contains("bad.csv:2: batch") && Catch::Contains("'0'"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,2,1,llama-2-7b,fp16,fp16,1,5,200,,,,yes,output_tok_per_s,100,tok/s,,"),
             Catch::Contains("bad.csv:2: gpus"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp99,fp16,1,5,200,,,,yes,output_tok_per_s,100,tok/s,,"),
             Catch::Contains("bad.csv:2") && Catch::Contains("fp99"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,,,,maybe,output_tok_per_s,100,tok/s,,"),
             Catch::Contains("cuda_graphs") && Catch::Contains("'maybe'"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v9,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,,,,yes,output_tok_per_s,100,tok/s,,"),
             Catch::Contains("bad.csv:2: runtime") && Catch::Contains("vllm-v9") && Catch::Contains("lmdeploy-turbomind"));
  CHECK_THAT(load_error(",vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,,,,yes,output_tok_per_s,100,tok/s,,"),
             Catch::Contains("source"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1"), Catch::Contains("bad.csv:2") && Catch::Contains("fields"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,-3,,,yes,output_tok_per_s,100,tok/s,,"),
             Catch::Contains("bad.csv:2: requests") && Catch::Contains("'-3'"));
  CHECK_THAT(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,fp16,fp16,1,5,200,,,4096,yes,output_tok_per_s,100,tok/s,,"),
             Catch::Contains("bad.csv:2: message_bytes"));
  // An excluded row is kept for the record but not predicted: an unknown format there is no error.
  CHECK(load_error("src,vllm,v1,vllm-v1,a100-80gb-sxm,1,1,llama-2-7b,int4-g32,fp16,1,5,200,,,,yes,output_tok_per_s,100,tok/s,"
                   "no catalogue format,")
            .empty());
}

TEST_CASE("grouped statistics: median, p90 and signed median on the time scale", "[validation]") {
  std::vector<Row> rows;
  auto add = [&](double pred, double meas, bool tput, std::int64_t batch, int tp) {
    Row r;
    r.set = "s";
    r.engine = "vllm";
    r.gpu = "g";
    r.weights = "fp16";
    r.metric = tput ? "output_tok_per_s" : "batch_latency_s";
    r.higher_is_better = tput;
    r.batch = batch;
    r.tp = tp;
    r.context = 100;
    r.predicted = pred;
    r.measured = meas;
    rows.push_back(r);
  };
  // Times: +10 %, +20 %, −10 %; a throughput predicted 2x the measurement is a time error of −50 %.
  add(1.1, 1.0, false, 1, 1);
  add(1.2, 1.0, false, 1, 1);
  add(0.9, 1.0, false, 64, 2);
  add(200, 100, true, 64, 2);
  Row excluded = rows.front();
  excluded.scored = false;
  excluded.predicted = 100;  // would dominate every group if it were counted
  rows.push_back(excluded);
  CHECK(rows[3].time_error() == Approx(-0.5));
  const auto groups = group_stats(rows);
  auto find = [&](const std::string& d, const std::string& v) {
    for (const auto& g : groups)
      if (g.dimension == d && g.value == v) return g;
    FAIL("no group " << d << "=" << v);
    return GroupStats{};
  };
  const auto all = find("engine.all", "all");
  CHECK(all.n == 4);
  CHECK(all.signed_median == Approx(0.0).margin(1e-12));  // (−0.1 + 0.1) / 2
  CHECK(all.median_abs == Approx(0.15));               // |e| = 0.1 0.1 0.2 0.5
  CHECK(all.p90_abs == Approx(0.5));
  CHECK(find("batch", "1").signed_median == Approx(0.15));
  CHECK(find("batch", "64+").signed_median == Approx(-0.3));
  CHECK(find("tp", "2").n == 2);
  CHECK(find("context", "<=256").n == 4);
  // Bounds: a group is judged only from min_points on.
  Bounds b;
  b.min_points = 2;
  b.engine_median_abs = 0.10;
  const auto v = violations(groups, b);
  CHECK(std::any_of(v.begin(), v.end(), [](const std::string& s) { return s.find("batch=64+") != std::string::npos; }));
  CHECK(std::any_of(v.begin(), v.end(), [](const std::string& s) { return s.find("overall") != std::string::npos; }));
  b.min_points = 10;
  b.engine_median_abs = 0.2;
  b.engine_p90_abs = 0.6;
  CHECK(violations(groups, b).empty());
  CHECK(batch_bucket(1) == "1");
  CHECK(batch_bucket(31) == "16-31");
  CHECK(context_bucket(2048) == "1025-2048");
  CHECK(size_bucket(8.0 * 1024 * 1024) == "8-64MiB");
}

TEST_CASE("a known gap is held to its ratchet, every other group to the general bound", "[validation]") {
  Bounds b;
  b.known_gaps = {{"gpu", "rtx4090-24gb", 0.08, "test"}};
  auto group = [](const std::string& value, double signed_median) {
    return GroupStats{"gpu", value, 13, std::abs(signed_median), std::abs(signed_median), signed_median};
  };
  CHECK(violations({group("rtx4090-24gb", 0.076)}, b).empty());  // open, at today's size
  CHECK(violations({group("rtx4090-24gb", -0.079)}, b).empty());
  const auto grew = violations({group("rtx4090-24gb", 0.085)}, b);  // the gap grew: CI fails
  REQUIRE(grew.size() == 1);
  CHECK(grew[0].find("ratchet") != std::string::npos);
  CHECK(violations({group("rtx3090-24gb", 0.076)}, b).size() == 1);  // any other group: the general 5 %
  CHECK(b.gap("gpu", "rtx4090-24gb") != nullptr);
  CHECK(b.gap("gpu", "rtx3090-24gb") == nullptr);
  CHECK(Bounds{}.known_gaps.size() <= 1);  // a gap is an open issue, not a place to park failing groups
}

TEST_CASE("the all-reduce probe reads one all-reduce off the cost model", "[validation]") {
  CHECK(allreduce_s("a100-80gb-sxm", 1, 1e6) == 0);
  const double small = allreduce_s("a100-80gb-sxm", 8, 64 * 1024), large = allreduce_s("a100-80gb-sxm", 8, 64e6);
  CHECK(small > 0);
  CHECK(large > small);
  // A real model's decode step runs two all-reduces per layer of batch × hidden × 2 bytes and one more for the
  // embedding: the probe must charge exactly one of those 2L + 1 for the same message.
  const auto gpu = spec::Catalog::builtin().gpu("a100-80gb-sxm");
  spec::Quantization q;
  q.weights = spec::weight_format("bf16");
  const auto model = spec::Catalog::builtin().model("llama-3.1-8b");
  const perf::CostModel cm(model, q, gpu, perf::default_profile(gpu), spec::ParallelConfig{2, 1});
  perf::BatchShape b;
  b.decode_seqs = 16;
  b.decode_context = 16 * 100;
  double op = 0;
  for (const auto& o : cm.breakdown(b).ops)
    if (o.name == "tp_allreduce") op = o.time_s;
  CHECK(op == Approx((2.0 * model.num_layers + 1) * allreduce_s("a100-80gb-sxm", 2, 16.0 * model.hidden_size * 2)));
}

namespace {

/// One tolerance a set has always been held to (moved from tests/perf/test_reference.cpp, not loosened).
struct SetCheck {
  std::string what;
  std::size_t n = 0, min_n = 0;
  double value = 0, low = -1e300, high = 1e300;  ///< passes when min_n <= n and low < value < high
  bool ok() const { return n >= min_n && value > low && value < high; }
};

std::vector<SetCheck> set_checks(const std::vector<Row>& rows) {
  std::vector<SetCheck> c;
  auto add = [&](std::string what, const std::vector<double>& e, double value, double low, double high,
                 std::size_t min_n) { c.push_back({std::move(what), e.size(), min_n, value, low, high}); };
  // Vidur GEMMs: the default A100/H100 GEMM efficiencies were fitted to these profiles (docs/cost-model.md), so this
  // checks that one roofline per op holds across models, TP and M = 1..32k: 10 % median / 25 % p90 catch a broken
  // formula without flagging tile quantization. Element-wise kernels: the right size only.
  for (const std::string gpu : {"a100-80gb-sxm", "h100-80gb-sxm"}) {
    const auto gemm = errors(rows, true, true, [&](const Row& r) { return r.set == "vidur-ops" && r.gpu == gpu && r.scored; });
    const auto norms = errors(rows, true, true, [&](const Row& r) {
      return r.set == "vidur-ops" && r.gpu == gpu && r.metric == "norms_rotary_act";
    });
    add("Vidur " + gpu + " GEMM ops, median |err|", gemm, median(gemm), -1, 0.10, 1001);
    add("Vidur " + gpu + " GEMM ops, p90 |err|", gemm, percentile(gemm, 0.9), -1, 0.25, 1001);
    add("Vidur " + gpu + " element-wise (M >= 1024), median |err|", norms, median(norms), -1, 0.6, 1);
  }
  // llama.cpp (errors on tokens/s, as always): GeForce/L40S F16 decode within 15 %, prefill 30 %; on A100/H100
  // llama.cpp reaches 33-55 % of HBM bandwidth while llmsim models a vLLM-class ~70 %: faster by a bounded margin.
  auto f16 = [](bool scored, const char* metric) {
    return [=](const Row& r) {
      return r.set == "llamacpp" && r.weights == "fp16" && r.scored == scored && r.metric == metric;
    };
  };
  const auto gddr_decode = errors(rows, true, true, f16(true, "decode_tok_per_s"));
  const auto gddr_prefill = errors(rows, true, true, f16(true, "prefill_tok_per_s"));
  const auto hbm_decode = errors(rows, true, false, f16(false, "decode_tok_per_s"));
  add("llama.cpp F16 decode, GDDR cards, median |err|", gddr_decode, median(gddr_decode), -1, 0.15, 8);
  add("llama.cpp F16 prefill, GDDR cards, median |err|", gddr_prefill, median(gddr_prefill), -1, 0.30, 1);
  add("llama.cpp F16 decode, HBM cards, median signed (tok/s)", hbm_decode, median(hbm_decode), 0.1, 1.5, 8);
  // GGUF Q4_K_M: without the 1e14 FLOP/s plateau the A100/H100/L40S prefill was 2-3x too fast.
  auto gguf = [](const char* metric) {
    return [=](const Row& r) { return r.set == "llamacpp" && r.weights == "gguf-q4_k_m" && r.metric == metric; };
  };
  const auto gguf_prefill = errors(rows, true, true, gguf("prefill_tok_per_s"));
  const auto gguf_decode = errors(rows, true, true, gguf("decode_tok_per_s"));
  add("llama.cpp GGUF Q4_K_M prefill, median |err|", gguf_prefill, median(gguf_prefill), -1, 0.15, 8);
  add("llama.cpp GGUF Q4_K_M decode, median |err|", gguf_decode, median(gguf_decode), -1, 0.25, 8);
  return c;
}

}  // namespace

TEST_CASE("without the reference folder the reference producers return no rows", "[validation]") {
  // What a user's checkout sees: the report then WARNs and judges the repository's sets alone.
  const fs::path absent = fs::temp_directory_path() / "llmsim-no-such-reference-folder";
  REQUIRE_FALSE(fs::exists(absent));
  CHECK(vidur_op_rows(absent).empty());
  CHECK(vidur_allreduce_rows(absent).empty());
  CHECK(llamacpp_rows(absent).empty());
}

TEST_CASE("reference sets stay within the tolerances they have always been held to", "[validation]") {
  const auto rows = reference_rows();
  if (rows.empty()) {
    WARN("reference data not found at " << kRef.string() << "; skipping the reference comparisons");
    return;
  }
  for (const auto& c : set_checks(rows)) {
    INFO(c.what << ": n=" << c.n << " value " << c.value << " bounds (" << c.low << ", " << c.high << ")");
    CHECK(c.ok());
  }
}

TEST_CASE("the GDDR decode-GEMV priors reproduce the unscored llama.cpp cards they come from", "[validation]") {
  // docs/cost-model.md "GDDR dies": Ada 0.915 and GA102 0.85 (x 15/16 with ECC) were read off llama.cpp's F16 decode
  // on cards the catalogue lacks, so llmsim never scores them. This re-runs that derivation: each card is its
  // catalogue die (4090: AD10x, 3090: GA102) with its own datasheet bandwidth and SM count, and the default profile
  // must predict its tg512 within 5 % (median within 3 %). It fails when a change elsewhere in the model (the ~2 ms of
  // non-GEMV time per token the derivation took off) makes the priors stale.
  const fs::path file = kRef / "llamacpp-gpu-benchmarks.csv";
  if (!fs::exists(file)) {
    WARN("reference data not found at " << kRef.string() << "; skipping the GDDR prior derivation check");
    return;
  }
  struct Card {
    const char* name;
    const char* die;
    double gb_per_s;
    int sms;
    bool ecc;
  };
  const std::vector<Card> cards = {{"RTX 4080 16GB", "rtx4090-24gb", 716.8, 76, false},
                                   {"RTX 4000 Ada 20GB", "rtx4090-24gb", 360, 48, false},
                                   {"RTX 5000 Ada 32GB", "rtx4090-24gb", 576, 100, false},
                                   {"RTX 6000 Ada 48GB", "rtx4090-24gb", 960, 142, false},
                                   {"RTX A6000 48GB", "rtx3090-24gb", 768, 84, false},
                                   {"A40 48GB", "rtx3090-24gb", 696, 84, true}};
  const CsvTable csv(file);
  const auto model = spec::Catalog::builtin().model("llama-3.1-8b");
  spec::Quantization q;
  q.weights = spec::weight_format("fp16");
  std::vector<double> abs_err;
  for (const Card& c : cards) {
    spec::GpuSpec g = spec::Catalog::builtin().gpu(c.die);
    g.memory_bandwidth = c.gb_per_s * 1e9;
    g.sm_count = c.sms;
    g.ecc = c.ecc;
    const perf::CostModel cm(model, q, g, perf::default_profile(g), spec::ParallelConfig{1, 1}, true, 0,
                             perf::Runtime::llama_cpp);
    const double predicted = 512.0 / analysis::decode_run_s(cm, 1, 0, 512);
    bool found = false;
    for (std::size_t r = 0; r < csv.rows(); ++r) {
      if (csv.text(r, "gpu") != c.name || csv.text(r, "num_gpus") != "1" || csv.text(r, "model") != "Llama-3-8B" ||
          csv.text(r, "precision").rfind("F16", 0) != 0 || csv.text(r, "metric") != "decode_throughput_tg" ||
          csv.text(r, "output_len") != "512")
        continue;
      found = true;
      const double err = csv.number(r, "value") / predicted - 1;  // on the time scale: + = llmsim slower
      INFO(c.name << ": measured " << csv.number(r, "value") << " tok/s, predicted " << predicted);
      CHECK(std::fabs(err) < 0.05);
      abs_err.push_back(std::fabs(err));
    }
    CHECK(found);
  }
  std::sort(abs_err.begin(), abs_err.end());
  REQUIRE(!abs_err.empty());
  CHECK(abs_err[abs_err.size() / 2] < 0.03);
}

TEST_CASE("vLLM H100 batch 1-16 latencies stay within 15 % median and 30 % worst case", "[validation]") {
  // The end-to-end claim tests/perf/test_reference.cpp held for these points (PR #23197 via quantization.md).
  const auto rows = load_set(kSets / "vllm_pr23197.csv");
  const auto e = errors(rows, false, true, [](const Row& r) { return r.scored; });
  REQUIRE(e.size() == 8);
  CHECK(median(e) < 0.15);
  CHECK(percentile(e, 1.0) < 0.30);
}

TEST_CASE("validation report", "[.validate]") {
  std::vector<Row> rows = repo_set_rows(kSets);
  const auto& corpus = cached_corpus_rows();
  rows.insert(rows.end(), corpus.begin(), corpus.end());
  const auto ref = reference_rows();
  if (ref.empty()) WARN("reference data not found at " << kRef.string() << "; reporting the repository's sets only");
  rows.insert(rows.end(), ref.begin(), ref.end());
  std::printf("\nllmsim validation report: %zu measurements (%zu scored)\n\n", rows.size(),
              static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.scored; })));
  std::map<std::string, std::pair<int, int>> per_set;  // rows, scored
  for (const Row& r : rows) {
    ++per_set[r.set].first;
    per_set[r.set].second += r.scored ? 1 : 0;
  }
  for (const auto& entry : per_set) {
    // A named variable, not a structured binding: clang 14 (the sanitizer tree) cannot capture one in a lambda.
    const std::string& set = entry.first;
    std::printf("  %-28s %6d rows, %6d scored  %s\n", set.c_str(), entry.second.first, entry.second.second,
                row_is_blind(*std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.set == set; }))
                    ? "BLIND"
                    : "developed on");
  }
  std::printf("\n");
  print_corpus_sources(stdout, corpus);
  std::printf("\n");
  print_rows(stdout, rows);
  // The headline (issue 27): the sources that set no constant and were not developed on. Their targets are printed,
  // not yet enforced; the development sources below keep the bounds they have always been held to.
  // Corpus folders of a development source (xiongjiedai-llamacpp is the reference set "llamacpp" again, from the
  // same repository) are printed on their own and not judged a second time: the reference set keeps its tolerances.
  std::vector<Row> blind, developed, corpus_developed;
  std::set<std::string> corpus_sets;
  for (const Row& r : corpus) corpus_sets.insert(r.set);
  for (const Row& r : rows) {
    if (row_is_blind(r)) blind.push_back(r);
    else if (corpus_sets.count(r.set)) corpus_developed.push_back(r);
    else developed.push_back(r);
  }
  if (const char* tsv = std::getenv("LLMSIM_VALIDATE_TSV"); tsv && *tsv) {
    std::vector<bool> is_blind;
    for (const Row& r : rows) is_blind.push_back(row_is_blind(r));
    write_rows_tsv(tsv, rows, is_blind);
  }
  print_blind_headline(stdout, blind);
  if (!corpus_developed.empty()) {
    std::printf("\nCorpus folders of development sources (same data as a development set; printed, not judged):\n");
    print_groups(stdout, group_stats(corpus_developed), Bounds{});
  }
  std::printf("\nSources the model was developed on (their errors show fit, not transfer):\n");
  rows = developed;
  const Bounds bounds;
  const auto groups = group_stats(rows);
  print_groups(stdout, groups, bounds);
  if (!bounds.known_gaps.empty()) {
    std::printf("\nKnown gaps (open issues; held to a ratchet at today's size instead of +-%.0f%%):\n",
                100 * bounds.max_signed_median);
    for (const auto& g : bounds.known_gaps)
      std::printf("  %s=%s: |signed median| <= %.0f%%: %s\n", g.dimension.c_str(), g.value.c_str(),
                  100 * g.max_signed_median, g.why.c_str());
  }
  if (!ref.empty()) {
    std::printf("\nReference sets against the tolerances they have always been held to\n");
    for (const auto& c : set_checks(ref))
      std::printf("  %-62s n=%-6zu %+7.1f%%  bounds (%s, %s)  %s\n", c.what.c_str(), c.n, 100 * c.value,
                  c.low <= -1 ? "-" : (std::to_string(static_cast<int>(std::lround(100 * c.low))) + "%").c_str(),
                  (std::to_string(static_cast<int>(std::lround(100 * c.high))) + "%").c_str(), c.ok() ? "ok" : "VIOLATED");
  }
  auto v = violations(groups, bounds);
  if (!ref.empty())
    for (const auto& c : set_checks(ref))
      if (!c.ok()) v.push_back("reference set: " + c.what);
  std::printf("\n%s\n", v.empty() ? "validate: every judged group within its bounds" : "validate: bounds violated:");
  for (const auto& s : v) std::printf("  %s\n", s.c_str());
  std::fflush(stdout);
  for (const auto& s : v) FAIL_CHECK(s);
}

namespace {

/// The rows the error-band table is computed from: the repository's own sets and the corpus (never
/// ../shared/reference, which a user's checkout lacks), so the committed table is reproducible from the repository
/// alone.
std::vector<Row> band_rows() {
  std::vector<Row> rows = repo_set_rows(kSets);
  const auto& corpus = cached_corpus_rows();
  rows.insert(rows.end(), corpus.begin(), corpus.end());
  return rows;
}

std::string bands_text(const std::vector<analysis::ErrorBandGroup>& g) {
  return analysis::error_bands_to_json(g, "make error-bands (tests/validation, the repository's sets and corpus)").dump(1) + "\n";
}

}  // namespace

TEST_CASE("the committed error-band table is the validation's residuals", "[validation]") {
  // data/error_bands.json is compiled in and read by every band llmsim prints: it must be what the sets give today.
  const std::string computed = bands_text(band_groups(band_rows()));
  std::ifstream in(kSets.parent_path() / "error_bands.json");
  const std::string committed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO("data/error_bands.json is stale: run `make error-bands` and commit it");
  CHECK(committed == computed);
  // The compiled-in table is the committed one (the build embeds the file).
  CHECK(analysis::error_band_table().size() == band_groups(band_rows()).size());
}

TEST_CASE("write the error-band table", "[.write_error_bands]") {
  const auto path = kSets.parent_path() / "error_bands.json";
  std::ofstream(path) << bands_text(band_groups(band_rows()));
  std::printf("wrote %s\n", path.string().c_str());
}
