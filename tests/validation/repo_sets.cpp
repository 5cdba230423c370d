#include "repo_sets.hpp"

#include <algorithm>

#include "csv_table.hpp"
#include "llmsim/analysis/static_batch.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/quantization.hpp"

namespace llmsim::validation {

namespace fs = std::filesystem;

const std::vector<std::pair<std::string, std::string>>& set_metrics() {
  // How each is predicted (docs/trust.md "How a row is predicted"):
  //   output_tok_per_s      batch × output / static_batch().total_s()      (LMDeploy profile_generation, gpt-fast)
  //   batch_latency_s       static_batch().total_s()                       (vLLM benchmark_latency, SGLang Total)
  //   prefill_s             static_batch().prefill_s                       (SGLang "Prefill. latency")
  //   decode_step_median_s  static_batch().median_decode_step_s()          (SGLang "Decode. median latency")
  static const std::vector<std::pair<std::string, std::string>> m = {{"output_tok_per_s", "tok/s"},
                                                                     {"batch_latency_s", "s"},
                                                                     {"prefill_s", "s"},
                                                                     {"decode_step_median_s", "s"}};
  return m;
}

perf::CostModel cost_model_for(const std::string& gpu_id, const std::string& model, const std::string& weights,
                               const std::string& kv_dtype, int tp, bool cuda_graphs, const fs::path& set_dir,
                               perf::Runtime runtime, const spec::QuantKernels& kernels) {
  const auto& catalog = spec::Catalog::builtin();
  const auto gpu = catalog.gpu(gpu_id, "gpu");
  const bool is_file = model.find('/') != std::string::npos || model.ends_with(".json");
  const auto spec = catalog.model(is_file ? (set_dir / model).string() : model, "model");
  spec::Quantization q;
  q.weights = spec::weight_format(weights, "weights");
  q.kv_dtype = spec::parse_kv_dtype(kv_dtype, "kv_dtype");
  q.kernels = kernels;
  return perf::CostModel(spec, q, gpu, perf::default_profile(gpu), spec::ParallelConfig{tp, 1}, cuda_graphs, 0,
                         runtime);
}

namespace {

bool yes_no(const CsvTable& t, std::size_t r, const std::string& column, bool empty) {
  const std::string& s = t.text(r, column);
  if (s.empty()) return empty;
  if (s == "yes") return true;
  if (s == "no") return false;
  throw ConfigError(t.where(r) + ": " + column, "must be yes, no or empty, got '" + s + "'");
}

Row read_row(const CsvTable& t, std::size_t r, const std::string& set) {
  Row row;
  row.set = set;
  row.where = t.where(r);
  row.kind = Kind::engine;
  row.engine = t.text(r, "engine");
  row.runtime = t.text(r, "runtime");
  (void)spec::parse_runtime(row.runtime, row.where + ": runtime");
  row.gpu = t.text(r, "gpu");
  row.model = t.text(r, "model");
  row.weights = t.text(r, "weights");
  row.kv_dtype = t.text(r, "kv_dtype");
  row.metric = t.text(r, "metric");
  row.tp = static_cast<int>(t.integer(r, "tp", 1));
  const auto gpus = t.integer(r, "gpus", 1);
  if (gpus != row.tp)
    throw ConfigError(row.where + ": gpus", "must equal tp (" + std::to_string(row.tp) + ") for the sets' "
                                            "tensor-parallel runs, got " + std::to_string(gpus));
  row.batch = t.integer(r, "batch", 1);
  row.input = t.integer(r, "input_len", 1);
  row.output = t.integer(r, "output_len", 1);
  row.measured = t.number(r, "value");
  if (!(row.measured > 0)) throw ConfigError(row.where + ": value", "must be > 0, got " + t.text(r, "value"));
  const auto& metrics = set_metrics();
  const auto m = std::find_if(metrics.begin(), metrics.end(), [&](const auto& p) { return p.first == row.metric; });
  if (m == metrics.end()) {
    std::string valid;
    for (const auto& p : metrics) valid += (valid.empty() ? "" : ", ") + p.first;
    throw ConfigError(row.where + ": metric", "unknown metric '" + row.metric + "' (valid: " + valid + ")");
  }
  if (t.text(r, "unit") != m->second)
    throw ConfigError(row.where + ": unit", "metric " + row.metric + " is in " + m->second + ", got '" +
                                                t.text(r, "unit") + "'");
  row.higher_is_better = m->second == "tok/s";
  // What the measured time is dominated by: the prompt for a prefill, else the mean decode context.
  row.context = row.metric == "prefill_s" ? static_cast<double>(row.input)
                                          : static_cast<double>(row.input) + static_cast<double>(row.output) / 2.0;
  (void)t.integer(r, "requests", 1, 0);  // serving rows only; empty for static batches
  if (!t.text(r, "message_bytes").empty())
    throw ConfigError(row.where + ": message_bytes", "is for collective rows; metric " + row.metric +
                                                         " needs it empty, got '" + t.text(r, "message_bytes") + "'");
  row.note = t.text(r, "exclude");
  row.scored = row.note.empty();
  return row;
}

double predict(const Row& row, const CsvTable& t, std::size_t r) {
  const perf::CostModel cm = cost_model_for(row.gpu, row.model, row.weights, row.kv_dtype, row.tp,
                                            yes_no(t, r, "cuda_graphs", true), t.file().parent_path(),
                                            spec::parse_runtime(row.runtime, row.where + ": runtime"));
  analysis::StaticBatchOptions o;
  o.max_batched_tokens = t.integer(r, "max_batched_tokens", 0, 0);
  const auto s = analysis::static_batch(cm, row.batch, row.input, row.output, o);
  if (row.metric == "output_tok_per_s") return s.output_tokens_per_s();
  if (row.metric == "batch_latency_s") return s.total_s();
  if (row.metric == "prefill_s") return s.prefill_s;
  return s.median_decode_step_s();
}

}  // namespace

std::vector<Row> load_set(const fs::path& csv) {
  const CsvTable t(csv);
  for (const char* c : {"source", "engine_version", "notes"}) (void)t.col(c);
  std::vector<Row> rows;
  const std::string set = csv.stem().string();
  for (std::size_t r = 0; r < t.rows(); ++r) {
    Row row = read_row(t, r, set);
    if (t.text(r, "source").empty()) throw ConfigError(row.where + ": source", "must name where the number comes from");
    if (row.scored) {
      try {
        row.predicted = predict(row, t, r);
      } catch (const ConfigError& e) {
        throw ConfigError(row.where, e.what());
      }
      if (!(row.predicted > 0)) throw InternalError(row.where + ": llmsim predicted " + format_value(row.predicted));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Row> repo_set_rows(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".csv") files.push_back(e.path());
  if (files.empty()) throw ConfigError(dir.string(), "holds no measurement set (*.csv)");
  std::sort(files.begin(), files.end());
  std::vector<Row> rows;
  for (const auto& f : files) {
    auto part = load_set(f);
    rows.insert(rows.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return rows;
}

}  // namespace llmsim::validation
