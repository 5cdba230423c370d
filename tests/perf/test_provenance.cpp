// Every constant has a provenance (issue 27): each field of every family's default profile and each trait a runtime
// sets must have an entry in perf::constant_provenance(), a value recorded there must be the value in use, and a
// "set while looking at" entry must name the validation sources it looked at (which are then not blind).
#include <catch2/catch.hpp>

#include <algorithm>

#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/provenance.hpp"
#include "llmsim/perf/runtime.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;
using namespace llmsim::perf;

namespace {

const ConstantProvenance* find(const std::string& field, const std::string& scope) {
  const auto& t = constant_provenance();
  for (const auto& e : t)
    if (e.field == field && e.scope == scope) return &e;
  for (const auto& e : t)
    if (e.field == field && e.scope == "all") return &e;
  return nullptr;
}

/// The traits a runtime sets away from RuntimeTraits{}'s defaults, by name, with their numeric value where numeric.
std::vector<std::pair<std::string, double>> set_traits(const RuntimeTraits& t) {
  const RuntimeTraits d;
  std::vector<std::pair<std::string, double>> out;
  if (t.graphs != d.graphs) out.push_back({"graphs", 0});
  if (t.max_graph_batch != d.max_graph_batch) out.push_back({"max_graph_batch", t.max_graph_batch});
  if (t.max_graph_seq_len != d.max_graph_seq_len)
    out.push_back({"max_graph_seq_len", static_cast<double>(t.max_graph_seq_len)});
  if (t.host_runs_ahead != d.host_runs_ahead) out.push_back({"host_runs_ahead", 0});
  if (t.cpu != d.cpu) out.push_back({"cpu", 0});
  if (t.cpu_per_iter_s != d.cpu_per_iter_s) out.push_back({"cpu_per_iter_s", t.cpu_per_iter_s});
  if (t.cpu_per_seq_s != d.cpu_per_seq_s) out.push_back({"cpu_per_seq_s", t.cpu_per_seq_s});
  if (t.sync_output_per_seq_s != d.sync_output_per_seq_s) out.push_back({"sync_output_per_seq_s", t.sync_output_per_seq_s});
  if (t.allreduce != d.allreduce) out.push_back({"allreduce", 0});
  if (t.vocab_parallel != d.vocab_parallel) out.push_back({"vocab_parallel", 0});
  if (t.materialises_prefill_scores != d.materialises_prefill_scores) out.push_back({"materialises_prefill_scores", 0});
  if (t.fuses_fp8_input_quant != d.fuses_fp8_input_quant) out.push_back({"fuses_fp8_input_quant", 0});
  if (t.async_output_proc != d.async_output_proc) out.push_back({"async_output_proc", 0});
  if (t.api_server_s != d.api_server_s) out.push_back({"api_server_s", t.api_server_s});
  if (t.engine_client_s != d.engine_client_s) out.push_back({"engine_client_s", t.engine_client_s});
  if (t.served_step_per_seq_s != d.served_step_per_seq_s)
    out.push_back({"served_step_per_seq_s", t.served_step_per_seq_s});
  if (t.multiproc_per_iter_s != d.multiproc_per_iter_s) out.push_back({"multiproc_per_iter_s", t.multiproc_per_iter_s});
  if (t.multiproc_per_seq_s != d.multiproc_per_seq_s) out.push_back({"multiproc_per_seq_s", t.multiproc_per_seq_s});
  if (t.tokenise_per_token_s != d.tokenise_per_token_s) out.push_back({"tokenise_per_token_s", t.tokenise_per_token_s});
  if (t.eager_host_per_layer_s != d.eager_host_per_layer_s)
    out.push_back({"eager_host_per_layer_s", t.eager_host_per_layer_s});
  if (t.sampler_bytes_per_logit != d.sampler_bytes_per_logit)
    out.push_back({"sampler_bytes_per_logit", t.sampler_bytes_per_logit});
  return out;
}

}  // namespace

TEST_CASE("every field of every family's default profile has a provenance with the value in use", "[provenance]") {
  // One card per family and die: HBM Ampere, Hopper, Ada GDDR (FP8), GA102 GDDR, an inline-ECC GDDR card; issue 30's
  // cards: Blackwell HBM (B200, GB200), the export-capped H20 and L20, Blackwell GDDR with MIG (RTX PRO 6000).
  for (const char* id : {"a100-80gb-sxm", "h100-80gb-sxm", "rtx4090-24gb", "rtx3090-24gb", "l40s-48gb", "a10-24gb",
                         "b200-180gb-sxm", "gb200-186gb", "h20-96gb", "l20-48gb", "rtxpro6000-96gb", "rtx5090d-32gb"}) {
    // The family's priors; a power-limited card's sustained clock scales its tensor efficiencies on top, with a
    // provenance of its own (next test case).
    auto gpu = spec::Catalog::builtin().gpu(id);
    gpu.sustained_tensor_clock_mhz = 0;
    const HardwareProfile p = default_profile(gpu);
    const std::string scope = family_name(gpu_family(gpu));
    const Json j = to_json(p);
    int fields = 0;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "format" || it.key() == "gpu_id" || it.key() == "source") continue;
      ++fields;
      INFO(id << " (" << scope << "): field " << it.key());
      const ConstantProvenance* e = find(it.key(), scope);
      REQUIRE(e != nullptr);  // a constant without a provenance fails here
      CHECK_FALSE(e->source.empty());
      if (e->value && it.value().is_number()) CHECK(it.value().get<double>() == Approx(*e->value).epsilon(1e-12));
      if (e->kind == Provenance::fitted) CHECK_FALSE(e->looked_at.empty());
    }
    CHECK(fields >= 20);
  }
}

TEST_CASE("every catalogue card's sustained tensor clock has a provenance with the value in use", "[provenance]") {
  int clocked = 0;
  for (const auto& [id, gpu] : spec::Catalog::builtin().gpus()) {
    if (!(gpu.sustained_tensor_clock_mhz > 0)) continue;
    ++clocked;
    INFO(id);
    const ConstantProvenance* e = nullptr;
    for (const auto& x : constant_provenance())
      if (x.field == "sustained_tensor_clock_mhz" && x.scope == id) e = &x;
    REQUIRE(e != nullptr);  // a clock without a provenance fails here
    REQUIRE(e->value.has_value());
    CHECK(*e->value == gpu.sustained_tensor_clock_mhz);
    CHECK(e->kind != Provenance::fitted);
    // What it does to the default profile: the family's tensor efficiencies times sustained / boost.
    spec::GpuSpec unclocked = gpu;
    unclocked.sustained_tensor_clock_mhz = 0;
    const double f = gpu.sustained_tensor_clock_mhz / gpu.boost_clock_mhz;
    CHECK(default_profile(gpu).attn_prefill_efficiency == Approx(default_profile(unclocked).attn_prefill_efficiency * f));
  }
  CHECK(clocked >= 4);  // A100 PCIe 40GB, L40S, L4, H100 PCIe
}

TEST_CASE("issue 30's cards land in the families their memory and tensor cores say", "[provenance]") {
  const auto& cat = spec::Catalog::builtin();
  auto fam = [&](const char* id) { return family_name(gpu_family(cat.gpu(id))); };
  CHECK(fam("b200-180gb-sxm") == "blackwell_hbm");  // HBM + FP4 tensor cores
  CHECK(fam("gb200-186gb") == "blackwell_hbm");
  CHECK(fam("b200-180gb-sxm:mig-3g.90gb") == "blackwell_hbm");
  CHECK(fam("h20-96gb") == "hopper_hbm");  // HBM + FP8, no FP4
  CHECK(fam("h200-141gb-sxm") == "hopper_hbm");  // "h200" contains "h20": still Hopper
  CHECK(fam("l20-48gb") == "gddr");
  CHECK(fam("rtxpro6000-96gb") == "gddr");  // GDDR7 with MIG: MIG alone no longer means HBM
  CHECK(fam("rtxpro6000-96gb:mig-1g.24gb") == "gddr");
  CHECK(fam("rtx5090-32gb") == "gddr");
  CHECK(fam("rtx4090d-24gb") == "gddr");
  // The Blackwell HBM profile is Hopper's but for the decode kernels' per-CTA streaming rate.
  const HardwareProfile b = default_profile(cat.gpu("b200-180gb-sxm"));
  const HardwareProfile h = default_profile(cat.gpu("h100-80gb-sxm"));
  CHECK(b.attn_decode_cta_bandwidth == Approx(32e9));
  CHECK(h.attn_decode_cta_bandwidth == Approx(13e9));
  CHECK(b.mem_bw_efficiency == h.mem_bw_efficiency);
  CHECK(b.gemm_bw_eff_vs_m.at(1) == h.gemm_bw_eff_vs_m.at(1));
  CHECK(b.link_bandwidth == Approx(0.9 * 900e9));  // NVLink 5, per direction
}

TEST_CASE("every trait a runtime sets has a provenance", "[provenance]") {
  for (const auto& name : spec::runtime_names()) {
    const auto r = spec::parse_runtime(name);
    for (const auto& [trait, value] : set_traits(runtime_traits(r))) {
      INFO(name << ": runtime." << trait);
      const ConstantProvenance* e = nullptr;
      for (const auto& x : constant_provenance())
        if (x.field == "runtime." + trait && x.scope == name) e = &x;
      REQUIRE(e != nullptr);
      if (e->value) CHECK(value == Approx(*e->value).epsilon(1e-12));
    }
  }
}

TEST_CASE("blind sources: none that a constant looked at, none the mechanisms were developed on", "[provenance]") {
  const auto non_blind = non_blind_sources();
  for (const auto& e : constant_provenance())
    for (const auto& s : e.looked_at) CHECK(non_blind.count(s) == 1);
  CHECK_FALSE(is_blind_source("vidur-ops"));
  CHECK_FALSE(is_blind_source("lmdeploy"));
  CHECK_FALSE(is_blind_source("lambdalabs"));
  CHECK(is_blind_source("some-new-public-source"));
  // The same data under another name is still not blind.
  CHECK_FALSE(is_blind_source("xiongjiedai-llamacpp", "https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference"));
  CHECK(is_blind_source("other", "https://github.com/someone/benchmarks"));
  // The table is not allowed to grow scopes nobody reads.
  for (const auto& e : constant_provenance()) {
    INFO(e.field << " @ " << e.scope);
    const auto& names = spec::runtime_names();
    const bool card = e.field == "sustained_tensor_clock_mhz" && spec::Catalog::builtin().gpus().count(e.scope) == 1;
    const bool known = e.scope == "all" || e.scope == "ampere_hbm" || e.scope == "hopper_hbm" || e.scope == "gddr" ||
                       e.scope == "blackwell_hbm" || card ||
                       std::find(names.begin(), names.end(), e.scope) != names.end();
    CHECK(known);
  }
}

TEST_CASE("SGLang's scheduler constants have provenances with the values in use", "[provenance]") {
  namespace sg = spec::sglang;
  const std::pair<const char*, double> used[] = {
      {"scheduler.init_new_token_ratio", sg::kInitNewTokenRatio},
      {"scheduler.min_new_token_ratio_factor", sg::kMinNewTokenRatioFactor},
      {"scheduler.new_token_ratio_decay_steps", sg::kNewTokenRatioDecaySteps},
      {"scheduler.clip_max_new_tokens", static_cast<double>(sg::kClipMaxNewTokens)},
      {"scheduler.retract_decode_steps", static_cast<double>(sg::kRetractDecodeSteps)},
      {"scheduler.ignore_eos_reserve_tokens", static_cast<double>(sg::kIgnoreEosReserveTokens)},
      {"scheduler.max_prefill_tokens", static_cast<double>(sg::kMaxPrefillTokens)},
      {"scheduler.max_running_requests", static_cast<double>(spec::SglangDefaults{}.max_running_requests)},
      {"memory.sglang_mamba.max_mamba_cache_size", static_cast<double>(sg::kMaxMambaCacheSize)},
      {"memory.sglang_mamba.full_memory_ratio", sg::kMambaFullMemoryRatio},
      {"memory.sglang_mamba.slots_per_running_request", static_cast<double>(sg::kMambaSlotsPerRunningRequest)},
      {"memory.sglang_mamba.ssm_state_bytes", sg::kMambaSsmStateBytes}};
  for (const auto& [field, value] : used) {
    INFO(field);
    const ConstantProvenance* e = find(field, "sglang");
    REQUIRE(e != nullptr);
    CHECK(e->kind == Provenance::engine_code);
    REQUIRE(e->value.has_value());
    CHECK(*e->value == value);
  }
  CHECK(find("scheduler.chunked_prefill_size", "sglang") != nullptr);
}

TEST_CASE("the profiling run's fused-MoE chunk has its engine-code provenance", "[provenance]") {
  // memory::detail::kFusedMoeChunkTokens (private to the memory layer; tests/memory/test_profile_run_peak.cpp checks
  // that the cache stops growing there).
  const ConstantProvenance* e = find("memory.profile_run.fused_moe_chunk", "vllm-v0");
  REQUIRE(e != nullptr);
  CHECK(e->kind == Provenance::engine_code);
  REQUIRE(e->value.has_value());
  CHECK(*e->value == 32768.0);
}
