// llmsim._core.spec: catalogues, scenario parsing and the loaders for user GPU specs and HF configs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "convert.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/gpu_option.hpp"
#include "llmsim/spec/quantization.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::python {

namespace {

// A model's HF config plus what llmsim derives from it (the catalogue table's columns).
Json model_entry(const spec::ModelSpec& m) {
  return Json{{"id", m.id},
              {"architecture", m.architecture},
              {"params", m.param_count()},
              {"active_params", m.active_param_count()},
              {"kv_bytes_per_token_fp16", m.kv_bytes_per_token(2.0)},
              {"config", spec::to_json(m)}};
}

// A GPU as a catalogue table row: units named in the keys (memory in GiB as the datasheet "GB" means, and in
// decimal GB), MIG profiles as a list of names.
Json gpu_entry(const spec::GpuSpec& g) {
  Json migs = Json::array();
  for (const auto& p : g.mig_profiles) migs.push_back(g.id + ":" + p.name);
  return Json{{"id", g.id},
              {"name", g.name},
              {"memory_gib", static_cast<double>(g.memory_bytes) / (1024.0 * 1024.0 * 1024.0)},
              {"memory_gb", static_cast<double>(g.memory_bytes) / 1e9},
              {"memory_bytes", g.memory_bytes},
              {"memory_bandwidth_gb_per_s", g.memory_bandwidth / 1e9},
              {"fp16_tflops", g.fp16_flops / 1e12},
              {"bf16_tflops", g.bf16_flops / 1e12},
              {"fp8_tflops", g.fp8_flops / 1e12},
              {"int8_tops", g.int8_ops / 1e12},
              {"int4_tops", g.int4_ops / 1e12},
              {"fp4_tflops", g.fp4_flops / 1e12},
              {"fp32_tflops", g.fp32_flops / 1e12},
              {"boost_clock_mhz", g.boost_clock_mhz > 0 ? Json(g.boost_clock_mhz) : Json(nullptr)},
              {"sustained_tensor_clock_mhz",
               g.sustained_tensor_clock_mhz > 0 ? Json(g.sustained_tensor_clock_mhz) : Json(nullptr)},
              {"sm_count", g.sm_count},
              {"l2_mb", static_cast<double>(g.l2_bytes) / 1e6},
              {"tdp_watts", g.tdp_watts},
              {"idle_watts", g.idle_watts > 0 ? Json(g.idle_watts) : Json(nullptr)},
              {"pcie_gen", g.pcie_gen},
              {"pcie_lanes", g.pcie_lanes},
              {"pcie_gb_per_s", g.pcie_bandwidth() / 1e9},
              {"nvlink_gb_per_s", g.nvlink_bandwidth / 1e9},
              {"nvlink_bridge_gb_per_s", g.nvlink_bridge_bandwidth / 1e9},
              {"p2p", g.p2p},
              {"ecc", g.ecc},
              {"inline_ecc", g.inline_ecc},
              {"mig_profiles", migs},
              {"price_per_hour", g.price_per_hour},
              {"price_is_placeholder", g.price_is_placeholder},
              {"purchase_price", g.purchase_price > 0 ? Json(g.purchase_price) : Json(nullptr)},
              {"purchase_price_is_placeholder", g.purchase_price_is_placeholder},
              {"source", g.source}};
}

spec::Scenario scenario_of(const std::string& text) {
  Json doc = parse_text(text, "scenario");
  return spec::scenario_from_json(JsonView(doc, ""));
}

}  // namespace

void register_spec(py::module_& m) {
  m.def("gpus", [] {
    Json out = Json::array();
    for (const auto& [id, g] : spec::Catalog::builtin().gpus()) out.push_back(gpu_entry(g));
    return dump(out);
  }, "JSON list of the built-in GPUs as table rows (decimal GB, GB/s, TFLOP/s).");

  m.def("models", [] {
    Json out = Json::array();
    for (const auto& [id, model] : spec::Catalog::builtin().models()) out.push_back(model_entry(model));
    return dump(out);
  }, "JSON list of the built-in models: id, params, KV bytes per token and the HF config.");

  m.def("quants", [] {
    Json out = Json::array();
    for (const auto& f : spec::weight_formats()) {
      out.push_back({{"id", f.id},
                     {"description", f.description},
                     {"bits_per_weight", f.bits_per_weight},
                     {"group_size", f.group_size},
                     {"weight_only", f.weight_only},
                     {"compute_dtype", std::string(spec::to_string(f.compute_dtype))},
                     {"lm_head_bits", f.lm_head_bits},
                     {"quantize_embeddings", f.quantize_embeddings}});
    }
    return dump(out);
  }, "JSON list of the weight formats.");

  m.def("gpu_from_json", [](const std::string& text) {
    Json doc = parse_text(text, "gpu");
    spec::GpuSpec g = spec::gpu_spec_from_json(JsonView(doc, "gpu"));
    g.validate("gpu");
    return dump(spec::to_json(g));
  }, py::arg("text"), "Validates a GPU spec (data/gpus format) and returns it with defaults filled.");

  m.def("model_from_hf_config", [](const std::string& text, const std::string& id) {
    Json doc = parse_text(text, "config.json");
    spec::ModelSpec model = spec::model_spec_from_hf_config(JsonView(doc, ""), id);
    model.validate("model");
    return dump(model_entry(model));
  }, py::arg("text"), py::arg("id"), "Reads a Hugging Face config.json; returns the catalogue entry form.");

  m.def("normalize_scenario", [](const std::string& text) { return dump(spec::to_json(scenario_of(text))); },
        py::arg("text"), "The scenario with every default filled (ConfigError with dotted paths).");

  m.def("resolve", [](const std::string& text) {
    spec::ResolvedScenario r = spec::resolve(scenario_of(text), spec::Catalog::builtin());
    return dump(Json{{"scenario", spec::to_json(r.scenario)},
                     {"model", model_entry(r.model)},
                     {"gpu", spec::to_json(r.gpu)},
                     {"price_per_gpu_hour", r.price_per_gpu_hour},
                     {"price_is_placeholder", r.price_is_placeholder},
                     {"purchase_price_per_gpu", r.purchase_price_per_gpu ? Json(*r.purchase_price_per_gpu) : Json(nullptr)},
                     {"interconnect", r.interconnect},
                     {"max_model_len", r.max_model_len}});
  }, py::arg("text"), "Looks up and validates everything a scenario names (ConfigError on any problem).");

  m.def("gpu_option", [](const std::string& text) {
    const spec::GpuOption o = spec::parse_gpu_option(text);
    return dump(Json{{"card", o.card},
                     {"count", o.count},
                     {"count_given", o.count_given},
                     {"pipeline", o.pipeline},
                     {"nvlink_bridge", o.nvlink_bridge},
                     {"kv_offload_gb", o.kv_offload_gb},
                     {"text", o.text}});
  }, py::arg("text"), "A GPU option string ('2xrtx4090-24gb@pp', '2xa100-80gb-pcie+nvlink') parsed by libsim's one parser.");

  m.def("split_for_count", [](int num_gpus, std::optional<int> tp, int pp) {
    const spec::ParallelConfig p = spec::split_for_count(num_gpus, tp, pp);
    return py::make_tuple(p.tp, p.pp);
  }, py::arg("num_gpus"), py::arg("tp"), py::arg("pp"),
     "One replica's (tp, pp) from a GPU count: tp = num_gpus / pp unless tp is given (then they must agree).");

  m.def("read_json", [](const std::string& path, const std::string& what) {
    // Python reads its JSON inputs here: regular files only, size-capped, strict (duplicate keys refused).
    return dump(parse_json(read_text_file(path, what), path));
  }, py::arg("path"), py::arg("what"),
     "The JSON file at `path` as compact JSON text (ConfigError naming `what` for a missing, special, huge or "
     "malformed file, or a duplicate key).");

  m.def("check_json", [](const std::string& text, const std::string& source) { return dump(parse_json(text, source)); },
        py::arg("text"), py::arg("source"), "Strictly parses JSON text and returns it compact (duplicate keys refused).");

  m.def("set_path", [](const std::string& scenario_text, const std::string& dotted, const std::string& value) {
    Json doc = parse_text(scenario_text, "scenario");
    spec::set_json_path(doc, dotted, parse_text(value, dotted));
    return dump(doc);
  }, py::arg("scenario"), py::arg("path"), py::arg("value"),
     "Sets a dotted scenario field in scenario JSON text, as sweep grids do.");
}

}  // namespace llmsim::python
