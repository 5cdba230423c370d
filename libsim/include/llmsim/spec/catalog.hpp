#pragma once
// The shipped catalogues of GPUs and models (embedded at build time from data/gpus and data/models),
// plus whatever a user adds. Lookups by id accept "<gpu>:mig-<profile>" and file paths.
#include <map>
#include <string>
#include <vector>

#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::spec {

class Catalog {
 public:
  /// The catalogue compiled into the library from data/ (no file I/O).
  static const Catalog& builtin();
  /// An empty catalogue (add entries yourself).
  Catalog() = default;

  /// Adds or replaces entries; validate() runs first (ConfigError).
  void add_gpu(GpuSpec gpu);
  void add_model(ModelSpec model);

  /// A GPU by id ("rtx4090-24gb", "a100-80gb-sxm:mig-3g.40gb") or by path to a GPU spec JSON file
  /// (anything containing '/' or ending in ".json"). ConfigError at `path` with close matches when unknown.
  GpuSpec gpu(const std::string& id_or_file, const std::string& path = "hardware.gpu") const;
  /// A model by id or by path to a Hugging Face config.json.
  ModelSpec model(const std::string& id_or_file, const std::string& path = "model") const;

  std::vector<std::string> gpu_ids() const;    ///< without MIG variants
  std::vector<std::string> model_ids() const;
  const std::map<std::string, GpuSpec>& gpus() const noexcept { return gpus_; }
  const std::map<std::string, ModelSpec>& models() const noexcept { return models_; }

 private:
  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, ModelSpec> models_;
};

}  // namespace llmsim::spec
