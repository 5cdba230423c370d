#pragma once
// The shipped catalogues of GPUs and models (embedded at build time from data/gpus and data/models),
// plus whatever a user adds. Lookups by id accept "<gpu>:mig-<profile>" and file paths.
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "llmsim/spec/gpu_spec.hpp"
#include "llmsim/spec/model_spec.hpp"

namespace llmsim::spec {

class Catalog;
namespace detail {
struct EmbeddedFile;
/// A catalogue of data files held as text, each read on first use (spec/catalog_data.hpp).
Catalog catalog_of_files(const EmbeddedFile* gpus, std::size_t gpu_count, const EmbeddedFile* models,
                         std::size_t model_count);
}  // namespace detail

/// A lookup by id reads that entry's file on first use (a CLI call pays for the entries it uses, not all 75); a
/// listing (gpus(), models(), gpu_ids(), model_ids(), and so the "did you mean" of an unknown id) reads every one. A
/// bad data file is a ConfigError naming the file wherever it is read, and stays unread, so each use says so again.
/// Const member functions are safe to call from several threads (one lock guards the lazy reads).
class Catalog {
 public:
  /// The catalogue compiled into the library from data/ (no file I/O).
  static const Catalog& builtin();
  /// An empty catalogue (add entries yourself).
  Catalog() = default;
  Catalog(const Catalog& other);
  Catalog& operator=(const Catalog& other);

  /// Adds or replaces entries; validate() runs first (ConfigError).
  void add_gpu(GpuSpec gpu);
  void add_model(ModelSpec model);

  /// A GPU by id ("rtx4090-24gb", "a100-80gb-sxm:mig-3g.40gb") or by path to a GPU spec JSON file
  /// (anything containing '/' or ending in ".json"). ConfigError at `path` with close matches when unknown.
  GpuSpec gpu(const std::string& id_or_file, const std::string& path = "hardware.gpu") const;
  /// A model by id or by path to a Hugging Face config.json.
  ModelSpec model(const std::string& id_or_file, const std::string& path = "model") const;

  /// Whether `id` (exactly as spelled) names an entry; reads no file.
  bool has_gpu(const std::string& id) const;
  bool has_model(const std::string& id) const;

  std::vector<std::string> gpu_ids() const;    ///< without MIG variants
  std::vector<std::string> model_ids() const;
  const std::map<std::string, GpuSpec>& gpus() const;
  const std::map<std::string, ModelSpec>& models() const;

 private:
  friend Catalog detail::catalog_of_files(const detail::EmbeddedFile*, std::size_t, const detail::EmbeddedFile*,
                                          std::size_t);
  // The entry of id `id` (exact spelling), read from its file first if still unread; nullopt when there is none.
  std::optional<GpuSpec> find_gpu(const std::string& id) const;
  std::optional<ModelSpec> find_model(const std::string& id) const;

  mutable std::mutex mutex_;  // guards everything below: const lookups move entries from unread to read
  mutable std::map<std::string, GpuSpec> gpus_;
  mutable std::map<std::string, ModelSpec> models_;
  // Entries not read yet: id -> the file's text (static storage: the builtin's embedded files).
  mutable std::map<std::string, const char*> unread_gpus_;
  mutable std::map<std::string, const char*> unread_models_;
};

}  // namespace llmsim::spec
