// docs/result-format.md documents every name llmsim writes: the keys of `simulate --json` (with tenant classes
// and an SLO percentile of its own), of capacity/compare rows and the compare envelope, and the columns of the
// sweep, per-request and per-iteration CSV files. A new field without its line in the doc fails here.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "cli_util.hpp"
#include "llmsim/core/json_view.hpp"

using llmsim::test::read_file;
using llmsim::test::run;
using llmsim::test::temp_file;

namespace {

// Every `backticked` name in the doc, and each dot-separated part of it (`throughput.requests_per_s` also
// documents `throughput` and `requests_per_s`).
std::set<std::string> documented() {
  const std::string doc = read_file(std::filesystem::path(LLMSIM_SOURCE_DIR) / "docs" / "result-format.md");
  REQUIRE_FALSE(doc.empty());
  std::set<std::string> names;
  const std::regex code("`([^`]+)`");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), code); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    names.insert(name);
    std::stringstream parts(name);
    for (std::string part; std::getline(parts, part, '.');) names.insert(part);
  }
  return names;
}

// An SLO's own percentile ("p99.9", vLLM's "p99.9_ttft_ms") is documented once, as `pQ` / `pQ_ttft_ms`.
bool is_documented(const std::set<std::string>& doc, const std::string& key) {
  static const std::regex percentile(R"(p[0-9]+(\.[0-9]+)?)");
  static const std::regex vllm_percentile(R"(p[0-9]+(\.[0-9]+)?(_[a-z0-9]+_ms))");
  std::smatch m;
  if (std::regex_match(key, m, vllm_percentile) && doc.count("pQ" + m[2].str())) return true;
  return doc.count(key) || (std::regex_match(key, percentile) && doc.count("pQ"));
}

void check_keys(const std::set<std::string>& doc, const llmsim::Json& j, const std::string& where) {
  if (j.is_array()) {
    for (const auto& e : j) check_keys(doc, e, where + "[]");
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      INFO(where << "." << it.key() << " is not in docs/result-format.md");
      CHECK(is_documented(doc, it.key()));
      if (it.key() != "grid") check_keys(doc, it.value(), where + "." + it.key());  // grid keys are user paths
    }
  }
}

void check_csv_header(const std::set<std::string>& doc, const std::filesystem::path& file, bool whole_names) {
  std::stringstream header(read_file(file).substr(0, read_file(file).find('\n')));
  int columns = 0;
  for (std::string col; std::getline(header, col, ',');) {
    ++columns;
    INFO(file.filename().string() << " column " << col << " is not in docs/result-format.md");
    if (whole_names) {
      CHECK(doc.count(col));
    } else {
      std::stringstream parts(col);
      for (std::string part; std::getline(parts, part, '.');) CHECK(is_documented(doc, part));
    }
  }
  CHECK(columns > 5);
}

}  // namespace

TEST_CASE("docs/result-format.md documents every field and column llmsim writes") {
  const auto doc = documented();
  const auto sc = temp_file("format-scenario.json", R"({"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
    "workload": {"num_requests": 200, "warmup_requests": 20,
      "classes": [{"name": "chat", "arrival": {"process": "poisson", "rate": 2}, "slo": {"ttft_ms": {"p99.9": 3000}}},
                  {"name": "batch", "arrival": {"process": "poisson", "rate": 1}}]},
    "slo": {"ttft_ms": {"p95": 2000}, "tpot_ms": {"p95": 100}}, "metrics": {"percentiles": [75]}})");
  const std::string s = "'" + sc.string() + "'";
  const auto dir = llmsim::test::scratch_dir();

  auto r = run("simulate " + s + " --json --requests-csv '" + (dir / "requests.csv").string() + "' --iterations-csv '" +
                   (dir / "iterations.csv").string() + "'",
               false);
  REQUIRE(r.code == 0);
  const auto summary = llmsim::parse_json(r.out, "simulate");
  REQUIRE(summary.contains("classes"));
  REQUIRE(summary["classes"][0]["ttft_ms"].contains("p99.9"));
  REQUIRE(summary["itl_ms"].contains("p75"));  // metrics.percentiles: documented as pQ / pQ_itl_ms
  REQUIRE(summary.contains("p75_itl_ms"));
  check_keys(doc, summary, "simulate");
  check_csv_header(doc, dir / "requests.csv", true);
  check_csv_header(doc, dir / "iterations.csv", true);

  // A disaggregated scenario adds its own object (docs/disaggregation.md).
  const auto dis = temp_file("format-disagg.json", R"({"model": "llama-3.1-8b", "engine": {"max_model_len": 8192},
    "disaggregation": {"prefill": {"gpu": "a100-80gb-sxm"}, "decode": {"gpu": "rtx4090-24gb"},
                       "link": {"kind": "ethernet", "bandwidth_gbps": 100}},
    "workload": {"num_requests": 100, "warmup_requests": 10}})");
  r = run("simulate '" + dis.string() + "' --json", false);
  REQUIRE(r.code == 0);
  const auto disagg = llmsim::parse_json(r.out, "simulate");
  REQUIRE(disagg.contains("disaggregation"));
  check_keys(doc, disagg, "simulate");

  r = run("capacity " + s + " --json --requests 200 --replications 2", false);
  REQUIRE(r.code == 0);
  check_keys(doc, llmsim::parse_json(r.out, "capacity"), "capacity");

  r = run("compare " + s + " --gpus a100-80gb-sxm,2xa100-80gb-sxm --requests 200 --replications 1 --json", false);
  REQUIRE(r.code == 0);
  check_keys(doc, llmsim::parse_json(r.out, "compare"), "compare");

  temp_file("format-grid.json", R"({"base": "format-scenario.json", "grid": {"hardware.gpu": ["a100-80gb-sxm"]}})");
  r = run("sweep '" + (dir / "format-grid.json").string() + "' --out '" + (dir / "rows.csv").string() + "'");
  REQUIRE(r.code == 0);
  check_csv_header(doc, dir / "rows.csv", false);
}
