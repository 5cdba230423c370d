// Disaggregated prefill/decode (issue 16, docs/disaggregation.md): the KV transfer's physics on a lone request, the
// link's queueing, the scenario section's parsing and its errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/pool.hpp"
#include "llmsim/spec/scenario.hpp"
#include "engine_test_util.hpp"

using namespace llmsim;
using engine::SimulationOptions;
using engine::simulate;
using test::make;

namespace {

// llama-3.1-8b fp16, A100 prefill + RTX 4090 decode over `gbps` Gbit/s Ethernet, `n` requests of `input` + 16 tokens.
Json disagg(double gbps, const char* transfer = "after_prefill", int input = 2048, int n = 1, double rate = 0.1) {
  Json w = {{"arrival", {{"process", "poisson"}, {"rate", rate}}},
            {"input_tokens", {{"dist", "fixed"}, {"value", input}}},
            {"output_tokens", {{"dist", "fixed"}, {"value", 16}}},
            {"num_requests", n},
            {"warmup_requests", 0}};
  Json j = test::scenario(w);
  j.erase("hardware");  // the pools are the deployment: hardware beside them is refused
  j["disaggregation"] = {{"prefill", {{"gpu", "a100-80gb-sxm"}}},
                         {"decode", {{"gpu", "rtx4090-24gb"}}},
                         {"link", {{"kind", "ethernet"}, {"bandwidth_gbps", gbps}, {"latency_us", 20}}},
                         {"transfer", transfer}};
  return j;
}

// KV bytes of `tokens` tokens of a full-attention GQA model at 2 bytes per element, from the model's shape:
// K and V, every layer, every KV head.
double kv_bytes(const spec::ModelSpec& m, double tokens) {
  return 2.0 * m.num_layers * m.num_kv_heads * m.head_dim * 2.0 * tokens;
}

struct Lone {
  double ttft_s, prefill_s, decode_first_s;
  metrics::Summary summary;
};

Lone lone(const Json& j) {
  SimulationOptions o;
  o.record_iterations = true;
  o.record_requests = true;
  const auto r = simulate(make(j), o);
  REQUIRE(r.summary.fits);
  REQUIRE(r.requests.size() == 1);
  // Replica 0 is the prefill pool's, replica 1 the decode pool's.
  double prefill = 0, decode_first = -1;
  for (const auto& it : r.iterations) {
    if (it.replica == 0) prefill += it.duration_s;
    else if (decode_first < 0) decode_first = it.duration_s;
  }
  // The engine's TTFT: the caller's less V1's in-process hop to its EngineCore (perf/serving_path.hpp).
  return {r.requests[0].first_token_s - r.requests[0].arrival_s - test::in_process_hop_s(make(j)), prefill,
          decode_first, r.summary};
}

}  // namespace

TEST_CASE("a lone request's TTFT is its prefill, the KV transfer and the decode side's first step", "[disagg]") {
  const Json j = disagg(100);
  const auto rs = make(j);
  const auto l = lone(j);
  const double bytes = kv_bytes(rs.model, 2048);  // 2048 = 128 whole blocks of 16: all of it crosses
  const double wire = bytes / (100e9 / 8);
  REQUIRE(wire == Approx(0.0215).epsilon(0.01));  // 268 MB over 12.5 GB/s
  INFO("prefill " << l.prefill_s << " decode " << l.decode_first_s << " ttft " << l.ttft_s);
  REQUIRE(l.prefill_s > 0);
  REQUIRE(l.decode_first_s > 0);
  CHECK(l.ttft_s == Approx(l.prefill_s + 20e-6 + wire + l.decode_first_s).epsilon(1e-9));
  // The summary reports the transfer.
  REQUIRE(l.summary.disaggregation);
  CHECK(l.summary.disaggregation->transfer_ms.p50 == Approx((wire + 20e-6) * 1e3).epsilon(1e-3));
  CHECK(l.summary.disaggregation->mean_transfer_mb == Approx(bytes / 1e6).epsilon(1e-9));
  CHECK(l.summary.disaggregation->decode_wait_ms.max == Approx(0).margin(1e-9));
  REQUIRE(l.summary.disaggregation->pools.size() == 2);
  CHECK(l.summary.disaggregation->pools[0].gpu == "a100-80gb-sxm");
  CHECK(l.summary.disaggregation->pools[1].gpu == "rtx4090-24gb");

  SECTION("layerwise streaming leaves only the last layer's share after the prefill") {
    const auto lw = lone(disagg(100, "layerwise"));
    REQUIRE(lw.ttft_s < l.ttft_s);
    // The prefill (~0.1 s on an A100) is longer than the wire time: the stream keeps up, one layer's share remains.
    REQUIRE(lw.prefill_s > wire);
    CHECK(lw.ttft_s == Approx(lw.prefill_s + wire / rs.model.num_layers + 20e-6 + lw.decode_first_s).epsilon(1e-9));
  }
  SECTION("a slower link raises TTFT by the extra wire time") {
    const auto slow = lone(disagg(10));
    CHECK(slow.ttft_s - l.ttft_s == Approx(bytes / (10e9 / 8) - wire).epsilon(1e-6));
  }
  SECTION("a prompt shorter than a block moves nothing: the decode side recomputes it") {
    const auto tiny = lone(disagg(100, "after_prefill", 12));
    CHECK(tiny.summary.disaggregation->mean_transfer_mb == 0);
    CHECK(tiny.ttft_s == Approx(tiny.prefill_s + 20e-6 + tiny.decode_first_s).epsilon(1e-9));
  }
}

TEST_CASE("transfers from one prefill replica queue on its link", "[disagg]") {
  // Two requests arriving together over a slow link: the second's KV waits for the first's to cross.
  Json j = disagg(1, "after_prefill", 2048, 2, 1000);
  j["workload"]["arrival"] = {{"process", "constant"}, {"rate", 1e6}};
  SimulationOptions o;
  o.record_iterations = true;
  const auto r = simulate(make(j), o);
  REQUIRE(r.summary.completed_requests == 2);
  std::vector<double> prefill_ends;  // the prefill replica's steps, one prompt each
  for (const auto& it : r.iterations)
    if (it.replica == 0) prefill_ends.push_back(it.start_s + it.duration_s);
  REQUIRE(prefill_ends.size() == 2);
  const auto& d = *r.summary.disaggregation;
  const double wire = kv_bytes(make(j).model, 2048) / (1e9 / 8);  // 2.1 s each: longer than a prefill
  CHECK(d.transfer_ms.count == 2);
  CHECK(2 * d.transfer_ms.mean - d.transfer_ms.max == Approx((wire + 20e-6) * 1e3).epsilon(1e-3));  // the first: no wait
  // The second leaves when the first has crossed: prefill end 1 + 2 wire times, counted from its own prefill end.
  CHECK(d.transfer_ms.max == Approx((prefill_ends[0] + 2 * wire + 20e-6 - prefill_ends[1]) * 1e3).epsilon(1e-3));
  CHECK(r.kv_blocks_in_use_at_end == 0);  // both pools freed every block
}

TEST_CASE("the decode pool admits a request when its KV blocks are free", "[disagg]") {
  // A decode pool with room for few requests at once: later ones wait at its admission (counted), none is lost.
  Json j = disagg(400, "after_prefill", 4000, 40, 50);
  j["disaggregation"]["decode"]["engine"] = {{"gpu_memory_utilization", 0.72}};
  j["workload"]["output_tokens"] = {{"dist", "fixed"}, {"value", 400}};
  const auto r = simulate(make(j));
  REQUIRE(r.summary.fits);
  CHECK(r.summary.completed_requests == 40);
  CHECK(r.summary.disaggregation->decode_wait_ms.max > 0);
  CHECK(r.kv_blocks_in_use_at_end == 0);
}

TEST_CASE("disaggregation: the section round-trips and sweeps can set its fields", "[disagg][spec]") {
  const Json j = disagg(100, "layerwise");
  const auto s = spec::scenario_from_json(JsonView(j, ""));
  REQUIRE(s.disaggregation);
  CHECK(s.disaggregation->transfer == spec::KvTransferMode::layerwise);
  CHECK(s.disaggregation->link.latency_s() == Approx(20e-6));
  const Json out = spec::to_json(s);
  CHECK(spec::to_json(spec::scenario_from_json(JsonView(out, ""))) == out);

  Json k = j;
  spec::set_json_path(k, "disaggregation.link.bandwidth_gbps", 25);
  spec::set_json_path(k, "disaggregation.decode.replicas", 3);
  spec::set_json_path(k, "disaggregation.decode.engine.max_num_seqs", 64);
  spec::set_json_path(k, "disaggregation.transfer", "after_prefill");
  const auto rs = make(k);
  REQUIRE(rs.disagg_pools.size() == 2);
  CHECK(rs.scenario.disaggregation->link.bandwidth_gbps == 25);
  CHECK(rs.disagg_pools[1].scenario.hardware.replicas == 3);
  CHECK(rs.disagg_pools[1].scenario.engine.max_num_seqs == 64);
  CHECK(rs.disagg_pools[0].scenario.engine.max_num_seqs != 64);  // the patch is the decode pool's only
  CHECK_THROWS_WITH(spec::set_json_path(k, "disaggregation.link.speed", 1),
                    Catch::Contains("disaggregation.link.speed"));
  CHECK_THROWS_WITH(spec::set_json_path(k, "disaggregation.decode.engine.bogus", 1),
                    Catch::Contains("disaggregation.decode.engine.bogus"));

  // resolve_pool: the scenario on another pool's hardware with an engine patch.
  spec::Deployment hw;
  hw.gpu = "2xrtx4090-24gb";
  const Json patch = {{"max_num_seqs", 32}};
  const auto pool = spec::resolve_pool(s, hw, &patch, spec::Catalog::builtin());
  CHECK(pool.scenario.hardware.parallel.tp == 2);
  CHECK(pool.gpu.id == "rtx4090-24gb");
  CHECK(pool.scenario.engine.max_num_seqs == 32);
  CHECK_FALSE(pool.scenario.disaggregation);
}

TEST_CASE("disaggregation: bad input names the field", "[disagg][spec]") {
  auto err = [](Json j) -> std::string {
    try {
      (void)simulate(make(j));
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  Json j = disagg(100);
  j["disaggregation"]["link"].erase("bandwidth_gbps");
  CHECK_THAT(err(j), Catch::Contains("disaggregation.link.bandwidth_gbps") && Catch::Contains("missing"));
  for (double bad : {0.0, -5.0, 1e-300}) {  // 1e-300 Gbit/s would move one request's KV in ~1e300 s
    j = disagg(bad);
    CHECK_THAT(err(j), Catch::Contains("disaggregation.link.bandwidth_gbps") && Catch::Contains("must be in [0.001"));
  }
  j = disagg(100);
  j["disaggregation"]["link"]["kind"] = "carrier-pigeon";
  CHECK_THAT(err(j), Catch::Contains("disaggregation.link.kind") && Catch::Contains("ethernet"));
  j = disagg(100);
  j["disaggregation"]["transfer"] = "eventually";
  CHECK_THAT(err(j), Catch::Contains("disaggregation.transfer"));
  j = disagg(100);
  j["disaggregation"]["decode"]["tp"] = 3;
  CHECK_THAT(err(j), Catch::Contains("disaggregation.decode.tp"));
  j = disagg(100);
  j["disaggregation"]["prefill"]["engine"] = {{"max_num_seqs", 0}};
  CHECK_THAT(err(j), Catch::Contains("disaggregation.prefill.engine.max_num_seqs"));
  j = disagg(100);
  j["disaggregation"]["prefill"]["gpu"] = "2xa100-80gb-sxm@pp";
  CHECK_THAT(err(j), Catch::Contains("disaggregation.prefill.pp"));
  // A disaggregated scenario does not use hardware's card fields: setting one (a sweep axis, --set, compare) is an
  // error naming the pool paths, not a silent no-op that labels identical results with another card.
  j = disagg(100);
  CHECK_THROWS_WITH(spec::set_json_path(j, "hardware.gpu", "rtx4090-24gb"),
                    Catch::Contains("hardware.gpu") && Catch::Contains("disaggregation.<pool>.gpu"));
  // (Client timeouts were refused here; they are modelled now, mid-transfer included: test_lifecycle.cpp.)
  // NaN cannot be written in JSON; the struct's validate() refuses it.
  spec::DisaggregationSpec d;
  d.link.bandwidth_gbps = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(d.validate(), Catch::Contains("disaggregation.link.bandwidth_gbps"));
}

TEST_CASE("disaggregation: a pool that cannot hold the model or one request does not fit, saying why", "[disagg]") {
  // The 4090's 24 GB hold llama-3.1-8b's 16 GB of weights but not a 131072-token request's 16 GB of KV.
  Json j = disagg(100);
  j["engine"]["max_model_len"] = 131072;
  j["workload"]["input_tokens"] = {{"dist", "uniform"}, {"min", 100}, {"max", 130000}};
  auto r = simulate(make(j));
  CHECK_FALSE(r.summary.fits);
  CHECK_THAT(r.summary.reason, Catch::StartsWith("does not fit, because disaggregation.decode") &&
                                   Catch::Contains("max_model_len 131072"));
  // Weights: llama-3.1-70b fp16 (141 GB) on one 4090.
  j = disagg(100);
  j["model"] = "llama-3.1-70b";
  j["disaggregation"]["prefill"]["gpu"] = "4xh100-80gb-sxm";
  r = simulate(make(j));
  CHECK_FALSE(r.summary.fits);
  CHECK_THAT(r.summary.reason, Catch::StartsWith("does not fit, because disaggregation.decode") &&
                                   Catch::Contains("weights"));
}

TEST_CASE("after the prefill the decode side admits first, then reads the KV (vLLM's pull)", "[disagg]") {
  // Two prompts together; the decode replica's KV cache holds one request (194 blocks of 16 tokens at 0.673 of the
  // 4090's CUDA-visible 23.53 GiB; one request needs 129). vLLM's NixlConnector allocates the decode blocks when the
  // scheduler admits the request and only then reads the KV, so the second read starts when the first request has
  // finished and freed its blocks — its KV waits on the prefill replica, not on the decode one.
  Json j = disagg(10, "after_prefill", 2048, 2, 1000);
  j["workload"]["arrival"] = {{"process", "constant"}, {"rate", 1e6}};
  j["disaggregation"]["decode"]["engine"] = {{"gpu_memory_utilization", 0.673}, {"max_model_len", 2560}};
  SimulationOptions o;
  o.record_requests = true;
  o.record_iterations = true;
  const auto r = simulate(make(j), o);
  REQUIRE(r.summary.completed_requests == 2);
  auto a = r.requests[0], b = r.requests[1];
  if (b.finish_s < a.finish_s) std::swap(a, b);
  std::vector<double> prefill_ends;
  for (const auto& it : r.iterations)
    if (it.replica == 0) prefill_ends.push_back(it.start_s + it.duration_s);
  REQUIRE(prefill_ends.size() == 2);
  const double wire = kv_bytes(make(j).model, 2048) / (10e9 / 8);  // 0.21 s
  // The second read starts at the first's finish (its admission) and takes the wire time: nothing of it crossed
  // while the request waited.
  CHECK(b.first_token_s - a.finish_s > wire + 20e-6);
  const auto& d = *r.summary.disaggregation;
  CHECK(d.transfer_ms.max == Approx((wire + 20e-6) * 1e3).epsilon(1e-3));  // no link queue: the reads never overlap
  // The decode side admitted the second when the first ended in the engine (its caller's finish less the hop).
  CHECK(d.decode_wait_ms.max == Approx((a.finish_s - test::in_process_hop_s(make(j)) - prefill_ends[1]) * 1e3)
                                    .epsilon(1e-3));
  CHECK(r.kv_blocks_in_use_at_end == 0);  // the prefill replica freed each prompt's blocks when its read ended
}

TEST_CASE("prefill replicas sharing one link queue their transfers on it", "[disagg]") {
  // Two prefill replicas prefill two prompts at once; the decode replica reads both KVs from its first step. With a
  // link each the reads overlap; sharing one (link.shared: one NIC or uplink), the second waits for the first.
  Json j = disagg(10, "after_prefill", 2048, 2, 1000);
  j["workload"]["arrival"] = {{"process", "constant"}, {"rate", 1e6}};
  j["disaggregation"]["prefill"]["replicas"] = 2;
  const double wire = kv_bytes(make(j).model, 2048) / (10e9 / 8);
  auto slowest_ms = [&](bool shared) {
    j["disaggregation"]["link"]["shared"] = shared;
    const auto r = simulate(make(j));
    REQUIRE(r.summary.completed_requests == 2);
    return r.summary.disaggregation->transfer_ms.max;
  };
  CHECK(slowest_ms(false) == Approx((wire + 20e-6) * 1e3).epsilon(1e-3));
  CHECK(slowest_ms(true) == Approx((2 * wire + 20e-6) * 1e3).epsilon(1e-3));
  j["disaggregation"]["link"]["shared"] = "yes";
  CHECK_THROWS_WITH(make(j), Catch::Contains("disaggregation.link.shared"));
}
