// SGLang's gpt-oss below Hopper (issue 27, perf::sglang_mxfp4_unmodelled_path): SGLang 0.5.x runs MXFP4 experts through
// triton_kernels' matmul_ogs (StridedLayout, upcast in the kernel) and attention through its Triton backend there,
// where vLLM runs FP4 Marlin, the kernel llmsim prices. The rule names the run as not modelled on A100 and Ada, and
// leaves Hopper (the path llmsim prices: matmul_ogs with FA3), vLLM and other formats alone.
#include <catch2/catch.hpp>

#include <string>

#include "llmsim/analysis/evaluate.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/moe_kernels.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;

namespace {

spec::ResolvedScenario sgl_mx_resolved(const std::string& model, const std::string& gpu, const std::string& runtime) {
  Json j = {{"model", model}, {"hardware", {{"gpu", gpu}}}, {"engine", {{"runtime", runtime}}}};
  return spec::resolve(spec::scenario_from_json(JsonView(j, "")), spec::Catalog::builtin());
}

bool sgl_mx_warns(const spec::ResolvedScenario& r) {
  for (const auto& w : analysis::scenario_warnings(r))
    if (w.find("triton_kernels' matmul_ogs") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("SGLang's gpt-oss MXFP4 experts below Hopper are a path llmsim does not model", "[analysis][sglang][moe]") {
  // GPUStack's pages: SGLang 0.5.4.post2 (gpt-oss-20b) and 0.5.3 (gpt-oss-120b) on one A100 SXM.
  for (const char* model : {"gpt-oss-20b", "gpt-oss-120b"}) {
    for (const char* release : {"sglang==0.5.4.post2", "sglang==0.5.3", "sglang"}) {
      INFO(model << " " << release);
      const auto a100 = sgl_mx_resolved(model, "a100-80gb-sxm", release);
      REQUIRE(a100.quant.weights.id.rfind("mxfp4", 0) == 0);
      const auto why = analysis::unmodelled_engine_path(a100);
      REQUIRE(why);
      CHECK(why->find("a100-80gb-sxm") != std::string::npos);
      CHECK(why->find("Marlin") != std::string::npos);
      CHECK(sgl_mx_warns(a100));
      // Hopper: SGLang runs matmul_ogs with FA3, the kernels llmsim prices for it; no warning.
      const auto h100 = sgl_mx_resolved(model, "h100-80gb-sxm", release);
      CHECK_FALSE(analysis::unmodelled_engine_path(h100));
      CHECK_FALSE(sgl_mx_warns(h100));
    }
    // vLLM on the same card runs FP4 Marlin: modelled.
    const auto vllm = sgl_mx_resolved(model, "a100-80gb-sxm", "vllm==0.11.0");
    CHECK_FALSE(analysis::unmodelled_engine_path(vllm));
    CHECK_FALSE(sgl_mx_warns(vllm));
  }
  // A 16-bit model on SGLang below Hopper is modelled (FlashInfer attention, no MXFP4 experts).
  CHECK_FALSE(analysis::unmodelled_engine_path(sgl_mx_resolved("qwen3-14b", "a100-80gb-sxm", "sglang==0.5.4.post2")));
  // Ada (sm89: FP8 tensor cores, not Hopper) takes the same branch as Ampere; Blackwell (FP4 tensor cores) runs
  // FlashInfer's MXFP4 MoE, which is not this path.
  const auto& cat = spec::Catalog::builtin();
  const auto mx = spec::weight_format("mxfp4-experts");
  CHECK(perf::sglang_mxfp4_unmodelled_path(mx, cat.gpu("l40s-48gb"), spec::Runtime::sglang));
  CHECK_FALSE(perf::sglang_mxfp4_unmodelled_path(mx, cat.gpu("b200-180gb-sxm"), spec::Runtime::sglang));
  CHECK_FALSE(perf::sglang_mxfp4_unmodelled_path(mx, cat.gpu("a100-80gb-sxm"), spec::Runtime::vllm_v1));
}
