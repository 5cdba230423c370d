// SGLang's decode CUDA-graph limit and chunk size by release, card and TP (spec::sglang_cuda_graph_max_bs,
// spec::sglang_defaults; read from server_args.py and cuda_graph_runner.py, docs/cost-model.md "SGLang's CUDA
// graphs"), the server flags that set it, and the scenario field they land in.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/scenario.hpp"
#include "llmsim/spec/sglang_args.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace sglang_graphs_spec_test {

int graph_bs(const std::string& gpu, const std::string& release, int tp = 1, std::optional<int> asked = std::nullopt) {
  return sglang_cuda_graph_max_bs(Catalog::builtin().gpu(gpu),
                                  release.empty() ? std::nullopt : std::optional<std::string>("sglang==" + release),
                                  tp, asked);
}

int chunk(const std::string& gpu, const std::string& release) {
  return sglang_defaults(Catalog::builtin().gpu(gpu), std::optional<std::string>("sglang==" + release))
      .chunked_prefill_size;
}

Scenario sg_scenario(const std::string& runtime, const std::string& engine_extra, const std::string& gpu = "a100-40gb-sxm",
                     int tp = 1) {
  return scenario_from_text(R"({"model": "llama-3.1-8b", "hardware": {"gpu": ")" + gpu + R"(", "tp": )" +
                                std::to_string(tp) + R"(}, "engine": {"runtime": ")" + runtime + "\"" + engine_extra +
                                "}}",
                            "s.json");
}

}  // namespace sglang_graphs_spec_test

using namespace sglang_graphs_spec_test;

TEST_CASE("SGLang's cuda_graph_max_bs by release, card and TP", "[sglang_graphs]") {
  // 0.3.x: the capture list [1, 2, 4] + 8..160 on every card.
  CHECK(graph_bs("a10-24gb", "0.3.5") == 160);
  CHECK(graph_bs("h200-141gb-sxm", "0.3.6") == 160);
  // 0.4.0: 8 below 25,000 MiB (sglang#2268); 0.4.0.post1: 80 there at TP >= 4 (#2360).
  CHECK(graph_bs("a10-24gb", "0.4.0", 4) == 8);
  CHECK(graph_bs("a10-24gb", "0.4.0.post1", 1) == 8);
  CHECK(graph_bs("a10-24gb", "0.4.0.post1", 4) == 80);
  CHECK(graph_bs("a100-40gb-sxm", "0.4.5") == 160);
  // The list grows on large cards: 0.4.6 above 120 GiB (#5604); 0.4.7 above 96 GiB, and to 512 above 180,000 MiB.
  CHECK(graph_bs("h200-141gb-sxm", "0.4.5") == 160);
  CHECK(graph_bs("h200-141gb-sxm", "0.4.6") == 256);
  CHECK(graph_bs("b200-180gb-sxm", "0.4.6") == 256);
  CHECK(graph_bs("b200-180gb-sxm", "0.4.7") == 512);
  CHECK(graph_bs("h20-96gb", "0.4.7") == 160);  // 96 GiB is not above 96 GiB
  CHECK(graph_bs("h100-80gb-sxm", "0.4.7.post1", 8) == 160);
  // The small-card bound: 25,000 MiB through 0.4.7, 35 GiB from 0.4.7.post1 (a 32 GB RTX 5090).
  CHECK(graph_bs("rtx5090-32gb", "0.4.7") == 160);
  CHECK(graph_bs("rtx5090-32gb", "0.4.7.post1") == 8);
  CHECK(graph_bs("rtx5090-32gb", "0.5.2", 4) == 80);
  // The 40 GB A100 keeps 160 through 0.5.2 ...
  CHECK(graph_bs("a100-40gb-sxm", "0.4.7.post1") == 160);
  CHECK(graph_bs("a100-40gb-sxm", "0.5.2") == 160);
  // ... and 0.5.3's tiers (_handle_gpu_memory_settings) give it 32 at TP < 4, 160 at TP >= 4.
  CHECK(graph_bs("a100-40gb-sxm", "0.5.3") == 32);
  CHECK(graph_bs("a100-40gb-sxm", "0.5.3", 4) == 160);
  CHECK(graph_bs("l4-24gb", "0.5.3") == 24);
  CHECK(graph_bs("l4-24gb", "0.5.3", 8) == 80);
  CHECK(graph_bs("h100-80gb-sxm", "0.5.3") == 256);
  CHECK(graph_bs("h100-80gb-sxm", "0.5.4", 8) == 512);
  CHECK(graph_bs("h200-141gb-sxm", "0.5.3", 2) == 256);
  CHECK(graph_bs("b200-180gb-sxm", "0.5.3") == 512);
  // No release: the newest line modelled.
  CHECK(graph_bs("a100-40gb-sxm", "") == 32);
  CHECK(graph_bs("h100-80gb-sxm", "") == 256);
}

TEST_CASE("SGLang's cuda_graph_max_bs: the user's value wins, as each release honours it", "[sglang_graphs]") {
  CHECK(graph_bs("h100-80gb-sxm", "0.5.3", 1, 48) == 48);
  CHECK(graph_bs("a10-24gb", "0.4.7", 1, 48) == 48);  // above the small-card default
  CHECK(graph_bs("h100-80gb-sxm", "0.4.7", 1, 300) == 300);
  CHECK(graph_bs("h100-80gb-sxm", "0.4.6.post4", 1, 300) == 300);  // sglang#6201 extends the list to it
  // Before #6201 it only filtered the default list: nothing above 160 was captured.
  CHECK(graph_bs("h100-80gb-sxm", "0.4.6.post3", 1, 300) == 160);
  CHECK(graph_bs("h100-80gb-sxm", "0.4.5", 1, 300) == 160);
  CHECK(graph_bs("h100-80gb-sxm", "0.4.5", 1, 24) == 24);
}

TEST_CASE("SGLang's chunked_prefill_size by release and card", "[sglang_graphs]") {
  // 0.3-0.4.7: 2048 below 25,000 MiB, else 8192.
  CHECK(chunk("a10-24gb", "0.4.7") == 2048);
  CHECK(chunk("rtx5090-32gb", "0.4.7") == 8192);
  CHECK(chunk("b200-180gb-sxm", "0.4.7") == 8192);
  // 0.4.7.post1-0.5.2 (#7054's __post_init__): < 35 GiB 2048, < 160 GiB 8192, else 16384.
  CHECK(chunk("rtx5090-32gb", "0.4.7.post1") == 2048);
  CHECK(chunk("a100-40gb-sxm", "0.5.2") == 8192);
  CHECK(chunk("b200-180gb-sxm", "0.4.7.post1") == 16384);
  // 0.5.3+: a 4096 tier below 60 GiB.
  CHECK(chunk("a100-40gb-sxm", "0.5.3") == 4096);
  CHECK(chunk("h100-80gb-sxm", "0.5.3") == 8192);
}

TEST_CASE("--cuda-graph-max-bs and --cuda-graph-bs set engine.cuda_graph_max_bs", "[sglang_graphs]") {
  const auto a = parse_sglang_server_args("python -m sglang.launch_server --model-path m --cuda-graph-max-bs 48");
  CHECK(a.engine_args["cuda_graph_max_bs"] == 48);
  CHECK(a.not_modelled.empty());
  // A list captures exactly its sizes: the largest is the limit (at most --cuda-graph-max-bs where both are given).
  CHECK(parse_sglang_server_args("--model-path m --cuda-graph-bs 1 2 4 96 --tp 2").engine_args["cuda_graph_max_bs"] ==
        96);
  CHECK(parse_sglang_server_args("--model-path m --cuda-graph-bs 1,2,4,64").engine_args["cuda_graph_max_bs"] == 64);
  CHECK(parse_sglang_server_args("--model-path m --cuda-graph-bs 1 2 128 --cuda-graph-max-bs 32")
            .engine_args["cuda_graph_max_bs"] == 32);
  CHECK_THROWS_WITH(parse_sglang_server_args("--model-path m --cuda-graph-max-bs 0"),
                    Catch::Contains("--cuda-graph-max-bs") && Catch::Contains(">= 1"));
  CHECK_THROWS_WITH(parse_sglang_server_args("--model-path m --cuda-graph-bs 1 many"),
                    Catch::Contains("--cuda-graph-bs") && Catch::Contains("many"));
  CHECK_THROWS_WITH(parse_sglang_server_args("--model-path m --cuda-graph-bs --tp 2"),
                    Catch::Contains("--cuda-graph-bs"));
}

TEST_CASE("a scenario's SGLang engine resolves cuda_graph_max_bs; another runtime refuses it", "[sglang_graphs]") {
  const auto& cat = Catalog::builtin();
  CHECK(resolve(sg_scenario("sglang==0.5.3", ""), cat).scenario.engine.cuda_graph_max_bs == 32);
  CHECK(resolve(sg_scenario("sglang==0.4.7.post1", ""), cat).scenario.engine.cuda_graph_max_bs == 160);
  CHECK(resolve(sg_scenario("sglang==0.5.3", "", "h100-80gb-sxm", 4), cat).scenario.engine.cuda_graph_max_bs == 512);
  CHECK(resolve(sg_scenario("sglang==0.5.3", R"(, "cuda_graph_max_bs": 64)"), cat).scenario.engine.cuda_graph_max_bs ==
        64);
  // Written back, it reads as the same limit.
  const auto r = resolve(sg_scenario("sglang==0.4.5", ""), cat);
  CHECK(resolve(scenario_from_text(to_json(r.scenario).dump(), "back.json"), cat).scenario.engine.cuda_graph_max_bs ==
        r.scenario.engine.cuda_graph_max_bs);
  CHECK_FALSE(resolve(sg_scenario("vllm==0.10.1", ""), cat).scenario.engine.cuda_graph_max_bs);
  CHECK_THROWS_WITH(sg_scenario("vllm==0.10.1", R"(, "cuda_graph_max_bs": 64)"),
                    Catch::Contains("engine.cuda_graph_max_bs") && Catch::Contains("SGLang"));
  CHECK_THROWS_WITH(sg_scenario("sglang", R"(, "cuda_graph_max_bs": 0)"),
                    Catch::Contains("engine.cuda_graph_max_bs") && Catch::Contains("1..1000000"));
}
