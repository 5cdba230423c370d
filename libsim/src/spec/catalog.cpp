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

// One embedded data file, read as a user's own file is: errors name "data/gpus/<id>", and a file's id is its name.
GpuSpec read_gpu_file(const std::string& name, const char* text) {
  const Json doc = parse_json(text, "data/gpus/" + name + ".json");
  GpuSpec g = gpu_spec_from_json(JsonView(doc, "data/gpus/" + name));
  LLMSIM_CHECK(g.id == name, "data/gpus file name and id differ: " + name);
  g.validate("gpu");
  return g;
}

ModelSpec read_model_file(const std::string& name, const char* text) {
  // The Hub's files as published: Python's json writes Infinity (Nemotron-H's time_step_limit), as a user's own
  // config.json read below may carry it.
  const Json doc = parse_json(python_literals_to_json(text), "data/models/" + name + ".json");
  ModelSpec m = model_spec_from_hf_config(JsonView(doc, "data/models/" + name), name);
  m.validate("model");
  LLMSIM_CHECK(m.id == name, "data/models file name and id differ: " + name);
  return m;
}

// The entry `id` of `read`, reading it from `unread` first (then it moves over); nullopt when neither has it. A file
// that fails to read throws and stays unread.
template <class Spec, class Reader>
std::optional<Spec> find_entry(std::map<std::string, Spec>& read, std::map<std::string, const char*>& unread,
                               const std::string& id, Reader reader) {
  if (auto it = read.find(id); it != read.end()) return it->second;
  const auto u = unread.find(id);
  if (u == unread.end()) return std::nullopt;
  Spec spec = reader(id, u->second);
  unread.erase(u);
  return read.emplace(id, std::move(spec)).first->second;
}

template <class Spec, class Reader>
void read_entries(std::map<std::string, Spec>& read, std::map<std::string, const char*>& unread, Reader reader) {
  while (!unread.empty()) {
    const auto u = unread.begin();
    Spec spec = reader(u->first, u->second);
    read.emplace(u->first, std::move(spec));
    unread.erase(u);
  }
}

}  // namespace

namespace detail {

Catalog catalog_of_files(const EmbeddedFile* gpus, std::size_t gpu_count, const EmbeddedFile* models,
                         std::size_t model_count) {
  Catalog c;
  for (std::size_t i = 0; i < gpu_count; ++i) c.unread_gpus_.emplace(gpus[i].name, gpus[i].text);
  for (std::size_t i = 0; i < model_count; ++i) c.unread_models_.emplace(models[i].name, models[i].text);
  return c;
}

}  // namespace detail

const Catalog& Catalog::builtin() {
  // The file list once (function-local static initialisation is thread-safe); entries are read as they are used.
  static const Catalog catalog =
      detail::catalog_of_files(detail::kGpuFiles, detail::kGpuFilesCount, detail::kModelFiles, detail::kModelFilesCount);
  return catalog;
}

Catalog::Catalog(const Catalog& other) {
  const std::lock_guard<std::mutex> lock(other.mutex_);
  gpus_ = other.gpus_;
  models_ = other.models_;
  unread_gpus_ = other.unread_gpus_;
  unread_models_ = other.unread_models_;
}

Catalog& Catalog::operator=(const Catalog& other) {
  if (this == &other) return *this;
  const std::scoped_lock lock(mutex_, other.mutex_);
  gpus_ = other.gpus_;
  models_ = other.models_;
  unread_gpus_ = other.unread_gpus_;
  unread_models_ = other.unread_models_;
  return *this;
}

std::optional<GpuSpec> Catalog::find_gpu(const std::string& id) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return find_entry(gpus_, unread_gpus_, id, read_gpu_file);
}

std::optional<ModelSpec> Catalog::find_model(const std::string& id) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return find_entry(models_, unread_models_, id, read_model_file);
}

bool Catalog::has_gpu(const std::string& id) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return gpus_.count(id) || unread_gpus_.count(id);
}

bool Catalog::has_model(const std::string& id) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return models_.count(id) || unread_models_.count(id);
}

const std::map<std::string, GpuSpec>& Catalog::gpus() const {
  // Once all are read nothing writes the maps again (only add_gpu/add_model, not const), so the reference stays valid
  // for readers without the lock.
  const std::lock_guard<std::mutex> lock(mutex_);
  read_entries(gpus_, unread_gpus_, read_gpu_file);
  return gpus_;
}

const std::map<std::string, ModelSpec>& Catalog::models() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  read_entries(models_, unread_models_, read_model_file);
  return models_;
}

void Catalog::add_gpu(GpuSpec gpu) {
  gpu.validate("gpu");
  std::string id = gpu.id;
  const std::lock_guard<std::mutex> lock(mutex_);
  unread_gpus_.erase(id);
  gpus_[id] = std::move(gpu);
}

void Catalog::add_model(ModelSpec model) {
  model.validate("model");
  if (model.id.empty()) throw ConfigError("model.id", "must not be empty");
  std::string id = model.id;
  const std::lock_guard<std::mutex> lock(mutex_);
  unread_models_.erase(id);
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
  auto found = find_gpu(base);
  if (!found) found = find_gpu(to_lower(base));
  if (!found) throw ConfigError(path, unknown_name_message("GPU", base, gpu_ids()));
  if (colon == std::string::npos) return std::move(*found);
  const std::string profile = to_lower(id_or_file.substr(colon + 1));
  std::vector<std::string> names;
  for (const auto& m : found->mig_profiles) names.push_back(m.name);
  for (const auto& n : names) {
    if (n == profile) return found->mig_slice(n);
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
  const bool local_folder = !has_model(id_or_file) &&
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
  auto found = find_model(id_or_file);
  if (!found) found = find_model(to_lower(id_or_file));
  if (!found) throw ConfigError(path, unknown_name_message("model", id_or_file, model_ids()));
  return std::move(*found);
}

std::vector<std::string> Catalog::gpu_ids() const {
  std::vector<std::string> out;
  for (const auto& [id, g] : gpus()) out.push_back(id);
  return out;
}

std::vector<std::string> Catalog::model_ids() const {
  std::vector<std::string> out;
  for (const auto& [id, m] : models()) out.push_back(id);
  return out;
}

}  // namespace llmsim::spec
