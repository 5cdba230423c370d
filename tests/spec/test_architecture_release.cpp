// Architectures by release (spec/architecture_release.hpp): every catalogue model's architecture has a row, every
// row's first release serves its models and the release before it is refused, naming model, release and first
// release; a local build is simulated with a note; no release, a runtime name or another engine are unchanged.
#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/architecture_release.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/runtime_version.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;
using namespace llmsim::spec;
using Catch::Contains;

namespace {

// The release just before `v` ("0.6.6" -> "0.6.5", "0.11.0" -> "0.10.99"), "" when there is none.
std::string release_before_text(const std::string& engine, const std::string& v) {
  auto n = parse_engine_version(engine + "==" + v).numbers;
  n.resize(3, 0);
  if (n[2] > 0) --n[2];
  else if (n[1] > 0) { --n[1]; n[2] = 99; }
  else return "";
  return std::to_string(n[0]) + "." + std::to_string(n[1]) + "." + std::to_string(n[2]);
}

std::string refusal(const ModelSpec& m, const std::string& release) {
  try {
    check_release_serves(m, release);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

Scenario arch_on(const std::string& model, const std::string& runtime) {
  const Json j = {{"model", model}, {"engine", {{"runtime", runtime}}}, {"hardware", {{"gpu", "8xh200-141gb-sxm"}}}};
  return scenario_from_json(JsonView(j, ""));
}

std::string arch_resolve_error(const Scenario& s) {
  try {
    resolve(s, Catalog::builtin());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every catalogue model's architecture has a row, and every row a source per engine", "[architecture]") {
  for (const auto& [id, m] : Catalog::builtin().models()) {
    const std::string model_id = id;
    CAPTURE(model_id, m.architecture);
    CHECK(architecture_release(m.architecture) != nullptr);
  }
  for (const auto& r : architecture_releases()) {
    CAPTURE(r.architecture);
    for (const EngineFirst* f : {&r.vllm, &r.sglang}) {
      CHECK(std::string(f->source).size() > 20);
      const bool versioned = f->kind == FirstRelease::release || f->kind == FirstRelease::not_before;
      CHECK(versioned == !std::string(f->version).empty());
    }
  }
}

TEST_CASE("every catalogue model x the table's releases: the first release serves it, the one before is refused",
          "[architecture]") {
  int refused = 0;
  for (const auto& [id, m] : Catalog::builtin().models()) {
    const std::string model_id = id;
    const ArchitectureRelease* row = architecture_release(m.architecture);
    REQUIRE(row);
    for (const std::string engine : {"vllm", "sglang"}) {
      const EngineFirst& f = engine == "vllm" ? row->vllm : row->sglang;
      CAPTURE(model_id, engine, f.version);
      // The oldest release llmsim models of each engine is refused only where the table says so.
      const std::string oldest = engine == "vllm" ? "vllm==0.2.0" : "sglang==0.1.0";
      const bool versioned = f.kind == FirstRelease::release || f.kind == FirstRelease::not_before;
      CHECK(refusal(m, oldest).empty() == !versioned);
      if (!versioned) continue;
      CHECK(refusal(m, engine + "==" + f.version).empty());
      CHECK(refusal(m, engine + "==" + f.version + ".post1").empty());
      const std::string before = release_before_text(engine, f.version);
      REQUIRE_FALSE(before.empty());
      const std::string e = refusal(m, engine + "==" + before);
      CHECK_THAT(e, Contains("engine.runtime") && Contains(engine + "==" + before) && Contains("'" + model_id + "'") &&
                        Contains(row->architecture) && Contains(f.version));
      ++refused;
    }
  }
  CHECK(refused >= 20);
}

TEST_CASE("a release before its model's architecture is refused by name on every path; a supported one runs",
          "[architecture]") {
  // vLLM: DeepSeek-V3 before 0.6.6 (vllm#11559), DeepSeek-V3.2 before 0.11.0 (the audit's silent plans).
  CHECK_THAT(arch_resolve_error(arch_on("deepseek-v3", "vllm==0.6.3")),
             Contains("engine.runtime: vllm==0.6.3 predates 'deepseek-v3'") && Contains("from 0.6.6"));
  CHECK_THAT(arch_resolve_error(arch_on("deepseek-v3.2", "vllm==0.10.0")),
             Contains("vllm==0.10.0 predates 'deepseek-v3.2'") && Contains("from 0.11.0"));
  CHECK_THAT(arch_resolve_error(arch_on("deepseek-v3.2", "vllm==0.6.3")), Contains("predates 'deepseek-v3.2'"));
  // SGLang: DeepSeek-V3.2 on 0.4.7 (only a bound is known: no release before 0.5.2), gpt-oss before 0.5.0.
  CHECK_THAT(arch_resolve_error(arch_on("deepseek-v3.2", "sglang==0.4.7")),
             Contains("sglang==0.4.7 predates 'deepseek-v3.2'") && Contains("no SGLang release before 0.5.2"));
  CHECK_THAT(arch_resolve_error(arch_on("gpt-oss-20b", "sglang==0.4.9")), Contains("SGLang serves it from 0.5.0"));
  // The supported releases resolve; so do a runtime name without a release and an architecture outside the table.
  CHECK(arch_resolve_error(arch_on("deepseek-v3", "vllm==0.6.6")).empty());
  CHECK(arch_resolve_error(arch_on("deepseek-v3.2", "vllm==0.11.0")).empty());
  CHECK(arch_resolve_error(arch_on("deepseek-v3.2", "sglang==0.5.6.post2")).empty());
  CHECK(arch_resolve_error(arch_on("gpt-oss-20b", "sglang==0.5.0rc2")).empty());
  CHECK(arch_resolve_error(arch_on("deepseek-v3.2", "vllm-v1")).empty());
  CHECK(arch_resolve_error(arch_on("llama-3.1-8b", "vllm==0.2.0")).empty());
  // A disaggregated pool's own release is checked as the pool's field.
  Json d = {{"model", "deepseek-v3"},
            {"engine", {{"runtime", "vllm==0.8.4"}}},
            {"disaggregation",
             {{"prefill", {{"gpu", "8xh200-141gb-sxm"}}},
              {"decode", {{"gpu", "8xh200-141gb-sxm"}, {"engine", {{"runtime", "vllm==0.6.4"}}}}},
              {"link", {{"kind", "infiniband"}, {"bandwidth_gbps", 400}}}}}};
  CHECK_THAT(arch_resolve_error(scenario_from_json(JsonView(d, ""))),
             Contains("disaggregation.decode.engine.runtime: vllm==0.6.4 predates 'deepseek-v3'"));
}

TEST_CASE("a local build of an older release may carry the support: simulated with a note, not refused",
          "[architecture]") {
  const auto r = resolve(arch_on("deepseek-v3", "vllm==0.6.3+ppu1.5.0"), Catalog::builtin());
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || (n.find("predates 'deepseek-v3'") != std::string::npos &&
                                                  n.find("local build ('+ppu1.5.0')") != std::string::npos);
  CHECK(noted);
  // The same release without the local part is refused.
  CHECK_FALSE(arch_resolve_error(arch_on("deepseek-v3", "vllm==0.6.3")).empty());
}
