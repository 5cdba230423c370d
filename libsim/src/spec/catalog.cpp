#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/published_name.hpp"

#include <filesystem>

#include "catalog_data.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"

namespace llmsim::spec {

namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0);
}

std::string file_stem(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
  return name;
}

// Errors inside a file name the file, so "model.hidden_size: missing" says which config.json.
[[noreturn]] void rethrow_in_file(const ConfigError& e, const std::string& file) {
  std::vector<std::string> problems;
  for (const auto& p : e.problems()) problems.push_back(p + " (in '" + file + "')");
  throw ConfigError(problems);
}

Catalog make_builtin() {
  Catalog c;
  for (std::size_t i = 0; i < detail::kGpuFilesCount; ++i) {
    const auto& f = detail::kGpuFiles[i];
    const Json doc = parse_json(f.text, std::string("data/gpus/") + f.name + ".json");
    GpuSpec g = gpu_spec_from_json(JsonView(doc, std::string("data/gpus/") + f.name));
    LLMSIM_CHECK(g.id == f.name, "data/gpus file name and id differ: " + std::string(f.name));
    c.add_gpu(std::move(g));
  }
  for (std::size_t i = 0; i < detail::kModelFilesCount; ++i) {
    const auto& f = detail::kModelFiles[i];
    // The Hub's files as published: Python's json writes Infinity (Nemotron-H's time_step_limit), as a user's own
    // config.json read below may carry it.
    const Json doc = parse_json(python_literals_to_json(f.text), std::string("data/models/") + f.name + ".json");
    c.add_model(model_spec_from_hf_config(JsonView(doc, std::string("data/models/") + f.name), f.name));
  }
  return c;
}

}  // namespace

const Catalog& Catalog::builtin() {
  // Built once, immutable afterwards; function-local static initialisation is thread-safe.
  static const Catalog catalog = make_builtin();
  return catalog;
}

void Catalog::add_gpu(GpuSpec gpu) {
  gpu.validate("gpu");
  std::string id = gpu.id;
  gpus_[id] = std::move(gpu);
}

void Catalog::add_model(ModelSpec model) {
  model.validate("model");
  if (model.id.empty()) throw ConfigError("model.id", "must not be empty");
  std::string id = model.id;
  models_[id] = std::move(model);
}

GpuSpec Catalog::gpu(const std::string& id_or_file, const std::string& path) const {
  if (id_or_file.empty()) throw ConfigError(path, "must name a GPU (valid: " + [&] {
    std::string s;
    for (const auto& id : gpu_ids()) s += (s.empty() ? "" : ", ") + id;
    return s;
  }() + ")");
  if (is_inline_json(id_or_file)) {  // a scenario's inline object: errors name its fields, e.g. hardware.gpu.id
    const Json doc = parse_json(id_or_file, path);
    return gpu_spec_from_json(JsonView(doc, path));
  }
  if (looks_like_path(id_or_file)) {
    const Json doc = parse_json(read_text_file(id_or_file, path), id_or_file);
    try {
      return gpu_spec_from_json(JsonView(doc, path));
    } catch (const ConfigError& e) {
      rethrow_in_file(e, id_or_file);
    }
  }
  const auto colon = id_or_file.find(':');
  const std::string base = id_or_file.substr(0, colon);
  auto it = gpus_.find(base);
  if (it == gpus_.end()) it = gpus_.find(to_lower(base));
  if (it == gpus_.end()) throw ConfigError(path, unknown_name_message("GPU", base, gpu_ids()));
  if (colon == std::string::npos) return it->second;
  const std::string profile = to_lower(id_or_file.substr(colon + 1));
  std::vector<std::string> names;
  for (const auto& m : it->second.mig_profiles) names.push_back(m.name);
  for (const auto& n : names) {
    if (n == profile) return it->second.mig_slice(n);
  }
  if (names.empty()) throw ConfigError(path, "'" + base + "' has no MIG profiles (asked for '" + profile + "')");
  throw ConfigError(path, unknown_name_message("MIG profile of " + base, profile, names));
}

ModelSpec Catalog::model(const std::string& id_or_file, const std::string& path) const {
  if (is_inline_json(id_or_file)) {  // an inline HF config: named after its _name_or_path, as a snapshot folder is
    const Json doc = parse_json(id_or_file, path);
    std::string id = "inline-model";
    if (doc.is_object() && doc.contains("_name_or_path") && doc["_name_or_path"].is_string()) {
      const std::string name = doc["_name_or_path"].get<std::string>();
      const std::string tail = name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
      if (!tail.empty()) id = tail;
    }
    return model_spec_from_hf_config(JsonView(doc, path), id);
  }
  // A bare folder name ("Qwen3-8B", as `vllm serve Qwen3-8B` reads a local folder) is a path when it is no catalogue
  // id and holds a config.json.
  std::error_code folder_ec;
  const bool local_folder = !models_.count(id_or_file) &&
                            std::filesystem::is_regular_file(std::filesystem::path(id_or_file) / "config.json", folder_ec);
  if (looks_like_path(id_or_file) || local_folder) {
    // A config.json, or a checkpoint directory / Hub snapshot holding one, read as vLLM does: config.json, and
    // NVIDIA ModelOpt's hf_quant_config.json beside it when config.json carries no quantization_config.
    std::error_code ec;
    // No such file, but a published checkpoint name ("meta-llama/Llama-3.1-8B-Instruct", as `vllm serve` takes it):
    // say which catalogue model it is a checkpoint of, rather than only that no file has that name.
    if (!std::filesystem::exists(id_or_file, ec)) {
      if (const auto known = catalogue_model_for(id_or_file, *this)) {
        const std::string format = weight_format_in_name(id_or_file);
        const std::string weights = format.empty() ? "" : " with " + format + " weights";
        const std::string name_both = format.empty() ? "" : " and the weights '" + format + "'";
        throw ConfigError(path, "no such file '" + printable(id_or_file) + "'; as a published checkpoint it is " +
                                    "catalogue model '" + *known + "'" + weights + ": name the model '" + *known +
                                    "'" + name_both + ", or give the server's command line (`vllm serve " +
                                    printable(id_or_file) + "`), which reads the name so");
      }
    }
    std::string config = id_or_file, id;
    if (std::filesystem::is_directory(id_or_file, ec)) {
      std::string dir = id_or_file;
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      config = dir + "/config.json";
      id = file_stem(dir);
      if (!std::filesystem::is_regular_file(config, ec))
        throw ConfigError(path, "'" + id_or_file + "' is a directory without config.json: llmsim reads a "
                                "checkpoint directory's config.json (and hf_quant_config.json)");
    } else {
      id = file_stem(id_or_file) == "config" ? id_or_file : file_stem(id_or_file);
    }
    const Json doc = parse_json(python_literals_to_json(read_text_file(config, path)), config);
    ModelSpec m;
    try {
      m = model_spec_from_hf_config(JsonView(doc, path), id);
    } catch (const ConfigError& e) {
      rethrow_in_file(e, config);
    }
    const auto modelopt = std::filesystem::path(config).parent_path() / "hf_quant_config.json";
    if (file_stem(config) == "config" && std::filesystem::is_regular_file(modelopt, ec)) {
      const Json q = parse_json(python_literals_to_json(read_text_file(modelopt.string(), path)), modelopt.string());
      try {
        if (m.quantization.format.empty()) {
          m.quantization = modelopt_quantization(JsonView(q, path + ".hf_quant_config"), m.notes);
          m.notes.push_back("weights as hf_quant_config.json says: " + m.quantization.description);
        } else {
          m.notes.push_back("hf_quant_config.json beside config.json ignored: config.json's quantization_config (" +
                            m.quantization.description + ") takes precedence, as in vLLM");
        }
      } catch (const ConfigError& e) {
        rethrow_in_file(e, modelopt.string());
      }
    }
    return m;
  }
  auto it = models_.find(id_or_file);
  if (it == models_.end()) it = models_.find(to_lower(id_or_file));
  if (it == models_.end()) throw ConfigError(path, unknown_name_message("model", id_or_file, model_ids()));
  return it->second;
}

std::vector<std::string> Catalog::gpu_ids() const {
  std::vector<std::string> out;
  for (const auto& [id, g] : gpus_) out.push_back(id);
  return out;
}

std::vector<std::string> Catalog::model_ids() const {
  std::vector<std::string> out;
  for (const auto& [id, m] : models_) out.push_back(id);
  return out;
}

}  // namespace llmsim::spec
