#include "corpus_sets.hpp"

#include <algorithm>
#include <map>

#include "corpus/common.hpp"
#include "corpus/readers.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"

namespace llmsim::validation {

namespace fs = std::filesystem;

namespace {

using namespace corpus;  // Source and the readers (corpus/common.hpp, corpus/readers.hpp)

using Handler = void (*)(const Source&, std::vector<Row>&);

const std::map<std::string, Handler>& handlers() {
  static const std::map<std::string, Handler> h = {
      {"accelmark-interactive", accelmark_interactive},
      {"anyscale-rayserve-gptoss-h100", anyscale},
      {"crusoe-l40s-fp8", crusoe},
      {"dstack-h100-405b-fp8", dstack},
      {"dstack-h200-deepseek-r1", dstack_r1},
      {"gpustack-perflab", gpustack},
      {"inference-sim-training-h100-vllm015", inference_sim},
      {"livinfly-a100pcie-vllm091-sglang047", livinfly},
      {"llamacpp-cuda-pr-tables", llamacpp_prs},
      {"llmservingsim-vllm019-rtx4090", llmservingsim},
      {"mlenergy-v3-h100", mlenergy},
      {"mtilyxuegao-sglang-a100-int8", mtilyxuegao},
      {"simonmo-r1bench-h200-deepseek-r1", simonmo},
      {"splitwise-sim-perf-model", splitwise},
      {"surajssd-aks-a100-vllm083", surajssd},
      {"vllm-pr3692-dbrx-h100", pr3692},
      {"wangraying-sglang035-a100-40gb", wangraying},
      {"wmx-l4-vllm023-qwen25", sweep_table},
      {"xiongjiedai-llamacpp", xiongjiedai},
      {"zhjunqin-vllm041-rtx3090", zhjunqin},
      {"zjuici-vllm025-a100-40gb", zjuici},
  };
  return h;
}

}  // namespace

std::vector<Row> corpus_rows(const fs::path& corpus_dir) {
  std::vector<fs::path> dirs;
  if (fs::is_directory(corpus_dir))
    for (const auto& e : fs::directory_iterator(corpus_dir))
      if (e.is_directory() && fs::exists(e.path() / "RUNS.json")) dirs.push_back(e.path());
  if (dirs.empty()) throw ConfigError(corpus_dir.string(), "holds no corpus source (a folder with RUNS.json)");
  std::sort(dirs.begin(), dirs.end());
  std::vector<Row> rows;
  for (const auto& d : dirs) {
    Source s;
    s.dir = d;
    s.models = corpus_dir.parent_path() / "models";
    s.top = read_json_file((d / "RUNS.json").string());
    if (s.top.value("format", "") != "llmsim-runs" || s.top.value("version", 0) != 1)
      throw ConfigError((d / "RUNS.json").string(), "format: expected \"llmsim-runs\" version 1");
    const Json src = s.top.value("source", Json::object());
    s.name = src.value("name", d.filename().string());
    s.url = src.value("url", "");
    const auto h = handlers().find(d.filename().string());
    if (h == handlers().end())
      throw ConfigError((d / "RUNS.json").string(), "no reader for source '" + d.filename().string() + "'");
    h->second(s, rows);
  }
  return rows;
}

}  // namespace llmsim::validation
