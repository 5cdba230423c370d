#include "llmsim/analysis/sweep.hpp"

#include "llmsim/analysis/search.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "llmsim/analysis/capacity.hpp"
#include "llmsim/analysis/cost.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/gpu_option.hpp"

namespace llmsim::analysis {

namespace {

namespace fs = std::filesystem;

// Relative paths resolve against the grid file's folder first, then the working directory.
std::string locate(const std::string& path, const std::string& base_dir) {
  if (!base_dir.empty() && fs::path(path).is_relative()) {
    const fs::path candidate = fs::path(base_dir) / path;
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return path;
}

Json load_scenario_json(const JsonView& v, const std::string& base_dir) {
  if (v.json().is_string()) {
    const std::string file = locate(v.as_string(), base_dir);
    try {
      return read_json_file(file);
    } catch (const ConfigError& e) {
      throw ConfigError(v.path(), e.what());
    }
  }
  v.expect_object();
  return v.json();
}

std::string label_text(const std::vector<std::pair<std::string, Json>>& labels) {
  std::string s;
  for (const auto& [k, v] : labels) s += (s.empty() ? "" : ", ") + k + "=" + v.dump();
  return s;
}

// A scenario holding what a document names plainly (name, model, formats, card, split): the identity of the row of a
// point whose document does not read as a scenario.
spec::Scenario written_identity(const Json& doc) {
  spec::Scenario s;
  if (!doc.is_object()) return s;
  const auto text = [](const Json& j, const char* key, std::string& out) {
    if (j.is_object() && j.contains(key) && j[key].is_string()) out = j[key].get<std::string>();
  };
  const auto count = [](const Json& j, const char* key, int& out) {
    if (j.is_object() && j.contains(key) && j[key].is_number_integer()) {
      const auto v = j[key].get<std::int64_t>();
      if (v >= 1 && v <= 100000) out = static_cast<int>(v);
    }
  };
  text(doc, "name", s.name);
  text(doc, "model", s.model);
  if (doc.contains("quant")) {
    text(doc["quant"], "weights", s.weights);
    text(doc["quant"], "kv_cache", s.kv_cache);
  }
  if (doc.contains("hardware")) {
    const Json& h = doc["hardware"];
    text(h, "gpu", s.hardware.gpu);
    count(h, "tp", s.hardware.parallel.tp);
    count(h, "pp", s.hardware.parallel.pp);
    count(h, "replicas", s.hardware.replicas);
  }
  return s;
}

// The screening's rule (screen_points) over why each point does not read or resolve (`failed`, nullopt where it
// does): the reason of each point whose values contradict each other, "" elsewhere; a ConfigError for the first point
// carrying a value that runs nowhere.
std::vector<std::string> judge_points(const std::vector<SweepPoint>& points,
                                      const std::vector<std::optional<std::string>>& failed) {
  // The values that run somewhere: a label's path -> its values in points that read and resolve.
  std::map<std::string, std::set<std::string>> runs;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!failed[i] && points[i].cannot_run.empty())
      for (const auto& [path, value] : points[i].labels) runs[path].insert(value.dump());
  std::vector<std::string> reasons(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].cannot_run.empty()) {
      reasons[i] = points[i].cannot_run;
      continue;
    }
    if (!failed[i]) continue;
    const auto& labels = points[i].labels;
    // A contradiction between the point's values, when each of them runs elsewhere in the grid; a value that runs
    // nowhere is bad on its own (a typo in point 900 fails in milliseconds, not after 899 simulations).
    const bool combination = !labels.empty() && std::all_of(labels.begin(), labels.end(), [&](const auto& l) {
      const auto it = runs.find(l.first);
      return it != runs.end() && it->second.count(l.second.dump()) > 0;
    });
    if (!combination)
      throw ConfigError("grid point " + std::to_string(i) + (labels.empty() ? "" : " (" + label_text(labels) + ")"),
                        *failed[i]);
    reasons[i] = "cannot run: " + *failed[i];  // the row's labels name the values
  }
  return reasons;
}

// expand_grid's check: a point whose document does not read is kept only when its values contradict each other,
// with its reason (SweepPoint::cannot_run).
void judge_documents(std::vector<SweepPoint>& points) {
  std::vector<std::optional<std::string>> failed(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!points[i].problem.empty()) failed[i] = points[i].problem;
  const std::vector<std::string> reasons = judge_points(points, failed);
  for (std::size_t i = 0; i < points.size(); ++i) points[i].cannot_run = reasons[i];
}

}  // namespace

SweepPoint sweep_point(const Json& doc, std::vector<std::pair<std::string, Json>> labels) {
  SweepPoint p;
  p.labels = std::move(labels);
  try {
    p.scenario = spec::scenario_from_json(JsonView(doc, ""));
  } catch (const ConfigError& e) {
    p.problem = e.what();
    p.written = doc;
    p.scenario = written_identity(doc);
  }
  return p;
}

void judge_sets(Grid& grid, const std::vector<bool>& read_before) {
  for (std::size_t i = 0; i < grid.points.size(); ++i) {
    SweepPoint& p = grid.points[i];
    if (!p.problem.empty() && i < read_before.size() && read_before[i] && p.cannot_run.empty())
      p.cannot_run = "cannot run: " + p.problem + " (with what is set on every point)";
  }
  judge_documents(grid.points);
}

void refuse_capacity_options_without_capacity(bool capacity, const std::vector<std::string>& given,
                                              const std::string& capacity_flag) {
  if (capacity || given.empty()) return;
  std::string names;
  for (const auto& g : given) names += (names.empty() ? "" : ", ") + g;
  throw ConfigError(names, "given without " + capacity_flag + " (" + (given.size() > 1 ? "they configure" : "it configures") +
                               " the per-point capacity search, which does not run without it)");
}

bool fields_overlap(const std::string& a, const std::string& b) {
  const std::size_t n = std::min(a.size(), b.size());
  return a.compare(0, n, b, 0, n) == 0 && (a.size() == b.size() || (a.size() > n ? a[n] : b[n]) == '.');
}

namespace {
// The llmsim fields grid axis `k` writes over its values, so that a vLLM name (max_num_seqs) meets its field
// (engine.max_num_seqs), and a section (workload.arrival) meets its fields (workload.arrival.rate).
std::vector<std::string> axis_fields_of(const Grid& grid, std::size_t k) {
  const std::string& axis = grid.label_paths[k];
  std::vector<std::string> fields;
  std::vector<std::string> seen;  // the fields a vLLM name writes can depend on its value (dtype, quantization)
  for (const auto& p : grid.points) {
    if (k >= p.labels.size() || p.labels[k].second.is_null()) continue;
    const std::string text = p.labels[k].second.dump();
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    seen.push_back(text);
    for (auto& f : spec::merged_json_fields(axis, p.labels[k].second)) fields.push_back(std::move(f));
  }
  if (fields.empty()) fields.push_back(axis);
  return fields;
}
}  // namespace

void refuse_sets_on_axes(const Grid& grid, const std::vector<std::pair<std::string, Json>>& sets,
                         const std::string& where) {
  const auto overlap = [](const std::string& a, const std::string& b) { return fields_overlap(a, b); };
  for (std::size_t k = 0; k < grid.label_paths.size(); ++k) {
    const std::string& axis = grid.label_paths[k];
    const std::vector<std::string> axis_fields = axis_fields_of(grid, k);
    for (const auto& [path, value] : sets)
      for (const auto& set_field : spec::json_path_fields(path, value))
        for (const auto& axis_field : axis_fields)
          if (overlap(set_field, axis_field))
            throw ConfigError(
                where, "'" + path + "'" +
                           (path == axis ? std::string(" is an axis of this grid")
                                         : " overlaps the grid axis '" + axis + "' (" +
                                               (set_field.size() < axis_field.size()
                                                    ? "'" + set_field + "' holds '" + axis_field + "'"
                                                : set_field.size() > axis_field.size()
                                                    ? "'" + set_field + "' is a field of '" + axis_field + "'"
                                                    : "both set '" + set_field + "'") +
                                               ")") +
                           ": it would override the axis in every row, and rows would be labelled with values they "
                           "did not run; change the axis's values in the grid instead");
  }
}

void label_split_of_sets(Grid& grid, const std::vector<std::pair<std::string, Json>>& sets) {
  bool split_set = false;
  for (const auto& [path, value] : sets)
    for (const auto& f : spec::json_path_fields(path, value))
      split_set = split_set || fields_overlap(f, "hardware.tp") || fields_overlap(f, "hardware.pp");
  if (!split_set) return;
  // Only where the rows differ in their card: a GPU option ("a100-80gb-sxm", "2xa100-80gb-sxm@pp") reads as a count
  // and a split that the set replaced. Whole scenarios of a list each name theirs.
  bool card_axis = false;
  for (std::size_t k = 0; k < grid.label_paths.size(); ++k) {
    if (grid.label_paths[k] == "scenario") card_axis = true;
    for (const auto& f : axis_fields_of(grid, k)) card_axis = card_axis || fields_overlap(f, "hardware.gpu");
  }
  if (!card_axis) return;
  for (const std::string field : {"hardware.tp", "hardware.pp"}) {
    if (std::find(grid.label_paths.begin(), grid.label_paths.end(), field) != grid.label_paths.end()) continue;
    grid.label_paths.push_back(field);
    for (auto& p : grid.points) {
      // The split the point runs: its GPU option's, given its tp and pp (spec::split_for, what resolve applies); the
      // scenario's own where that is a contradiction resolve reports, or a fleet (whose members carry theirs).
      const auto& h = p.scenario.hardware;
      spec::ParallelConfig split = h.parallel;
      if (h.fleet.empty()) {
        try {
          split = spec::split_for(spec::parse_gpu_option(h.gpu), h.parallel);
        } catch (const ConfigError&) {
        }
      }
      p.labels.emplace_back(field, field == "hardware.tp" ? split.tp : split.pp);
    }
  }
}

void refuse_overlapping_paths(const std::vector<std::string>& paths, const std::string& where) {
  for (std::size_t i = 0; i < paths.size(); ++i)
    for (std::size_t j = 0; j < paths.size(); ++j) {
      const std::string& a = paths[i];
      const std::string& b = paths[j];
      if (i < j && a == b)
        throw ConfigError(where, "'" + a + "' is given twice: one would overwrite the other and rows would be labelled "
                                 "with values they did not run; give it once");
      if (a.size() < b.size() && b.compare(0, a.size(), a) == 0 && b[a.size()] == '.')
        throw ConfigError(where, "'" + a + "' and '" + b + "' overlap: the second is a field of the first, so one "
                                 "would overwrite the other and rows would be labelled with values they did not run; "
                                 "vary one of them");
    }
}

Grid expand_grid(const JsonView& grid, const std::string& base_dir, const std::vector<std::string>& axis_order,
                 bool judge) {
  Grid out;
  if (grid.json().is_array()) {  // a bare list of scenarios
    Json wrapped = Json::object();
    wrapped["scenarios"] = grid.json();
    return expand_grid(JsonView(wrapped, grid.path()), base_dir, axis_order, judge);
  }
  // A scenario given where a grid is expected (`llmsim sweep SCENARIO.json`): say so, not just the first unknown field.
  if (!grid.has("base") && !grid.has("grid") && !grid.has("scenarios")) {
    const auto sections = spec::scenario_sections_in(grid.json());
    if (!sections.empty()) {
      std::string listed;
      for (const auto& k : sections) listed += (listed.empty() ? "'" : ", '") + k + "'";
      throw ConfigError(grid.path().empty() ? "grid" : grid.path(), "this looks like a scenario, not a grid (it has " + listed + " and no 'base', 'grid' or 'scenarios'); "
                "use `llmsim simulate FILE` to run it, or wrap it as the grid's base: {\"base\": \"FILE\", \"grid\": "
                "{\"workload.arrival.rate\": [1, 2, 4]}}");
    }
  }
  grid.allow_only({"base", "grid", "scenarios", "name", "description"});
  const bool has_grid = grid.has("grid"), has_list = grid.has("scenarios");
  if (has_grid && has_list) grid.fail("give either 'grid' (lists per field) or 'scenarios' (a list), not both");
  if (!has_grid && !has_list) grid.fail("empty grid: give 'base' and 'grid' (lists per field) or 'scenarios'");

  if (has_grid) {
    if (!grid.has("base")) grid.fail("'grid' needs a 'base' scenario (a path or an object)");
    const JsonView g = grid["grid"];
    g.expect_object();
    if (g.json().empty()) g.fail("empty grid: list at least one field path with its values");
    const Json base = load_scenario_json(grid["base"], base_dir);
    std::vector<std::string> keys;
    for (auto it = g.json().begin(); it != g.json().end(); ++it) keys.push_back(it.key());
    if (!axis_order.empty()) {
      std::vector<std::string> sorted_order = axis_order;
      std::sort(sorted_order.begin(), sorted_order.end());
      LLMSIM_CHECK(sorted_order == keys, "axis_order must list every grid key once");
      keys = axis_order;
    }
    refuse_overlapping_paths(keys, g.path().empty() ? "grid" : g.path());
    std::vector<std::pair<std::string, std::vector<Json>>> axes;
    std::size_t total = 1;
    for (const auto& key : keys) {
      const Json& values = g.json().at(key);
      const JsonView axis(values, g.child_path(key));
      if (!axis.json().is_array()) axis.fail("expected a list of values, got " + values.dump());
      if (axis.json().empty()) axis.fail("empty list: give at least one value");
      Json probe = base;
      try {
        spec::merge_json_path(probe, key, values.front());
      } catch (const ConfigError& e) {
        throw ConfigError(axis.path(), e.what());  // a path that is not a scenario field
      }
      axes.emplace_back(key, std::vector<Json>(values.begin(), values.end()));
      out.label_paths.push_back(key);
      if (total > kMaxGridPoints / axes.back().second.size())
        g.fail("the grid has more than " + std::to_string(kMaxGridPoints) + " points");
      total *= axes.back().second.size();
    }
    out.points.reserve(total);
    std::vector<std::size_t> idx(axes.size(), 0);
    for (std::size_t n = 0; n < total; ++n) {
      Json doc = base;
      SweepPoint p;
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const Json& value = axes[a].second[idx[a]];
        spec::merge_json_path(doc, axes[a].first, value);  // an object over a section merges into the base's
        p.labels.emplace_back(axes[a].first, value);
      }
      // The base's prices priced the base's cards: a point on another card (hardware.gpu, a disaggregated pool's gpu)
      // that prices none of its own is billed at that card's catalogue price, as compare and --gpu bill it.
      reprice_moved_cards(doc, base, p.labels, OverrideRule::merge);
      out.points.push_back(sweep_point(doc, std::move(p.labels)));
      for (std::size_t a = axes.size(); a-- > 0;) {  // last axis varies fastest
        if (++idx[a] < axes[a].second.size()) break;
        idx[a] = 0;
      }
    }
    if (judge) judge_documents(out.points);
    return out;
  }

  const JsonView list = grid["scenarios"];
  const auto entries = list.elements();
  if (entries.empty()) list.fail("empty grid: the list of scenarios is empty");
  if (entries.size() > kMaxGridPoints) list.fail("more than " + std::to_string(kMaxGridPoints) + " scenarios");
  if (grid.has("base")) {  // base + per-point overrides by dotted path
    const Json base = load_scenario_json(grid["base"], base_dir);
    for (const auto& e : entries) {
      e.expect_object();
      for (auto it = e.json().begin(); it != e.json().end(); ++it) {
        bool seen = false;
        for (const auto& p : out.label_paths) seen = seen || p == it.key();
        if (!seen) out.label_paths.push_back(it.key());
      }
    }
    refuse_overlapping_paths(out.label_paths, list.path().empty() ? "scenarios" : list.path());
    for (std::size_t n = 0; n < entries.size(); ++n) {
      Json doc = base;
      SweepPoint p;
      for (const auto& path : out.label_paths) {
        if (entries[n].has(path)) {
          try {
            spec::merge_json_path(doc, path, entries[n].json().at(path));
          } catch (const ConfigError& e) {  // named as judge_points names a point
            throw ConfigError("grid point " + std::to_string(n) + " (" + entries[n].path() + ")", e.what());
          }
          p.labels.emplace_back(path, entries[n].json().at(path));
        } else {
          p.labels.emplace_back(path, nullptr);
        }
      }
      // The base's prices priced the base's cards: a point on another card (hardware.gpu, a disaggregated pool's gpu)
      // that prices none of its own is billed at that card's catalogue price, as compare and --gpu bill it.
      reprice_moved_cards(doc, base, p.labels, OverrideRule::merge);
      out.points.push_back(sweep_point(doc, std::move(p.labels)));
    }
    if (judge) judge_documents(out.points);
    return out;
  }
  out.label_paths = {"scenario"};
  for (std::size_t n = 0; n < entries.size(); ++n) {
    const Json doc = load_scenario_json(entries[n], base_dir);
    SweepPoint p;
    p.labels.emplace_back("scenario", entries[n].json().is_string() ? entries[n].json() : Json(doc.value("name", std::to_string(n))));
    out.points.push_back(sweep_point(doc, std::move(p.labels)));
  }
  if (judge) judge_documents(out.points);
  return out;
}

Grid parse_grid(std::string_view text, const std::string& source, const std::string& base_dir) {
  const Json doc = parse_json(text, source);  // ConfigError for bad syntax, with the source and offset
  // A grid is an object or a bare list of scenarios; the root has no field path, so its type error names the source.
  if (!doc.is_object() && !doc.is_array()) JsonView(doc, "grid (" + source + ")").expect_object();
  std::vector<std::string> order;
  if (doc.is_object() && doc.contains("grid") && doc["grid"].is_object()) {
    // Only the key order is taken from this second, order-keeping parse.
    const auto ordered = nlohmann::ordered_json::parse(text, nullptr, false);
    if (!ordered.is_discarded() && ordered.contains("grid"))
      for (auto it = ordered["grid"].begin(); it != ordered["grid"].end(); ++it) order.push_back(it.key());
    std::vector<std::string> sorted_order = order;
    std::sort(sorted_order.begin(), sorted_order.end());
    if (std::adjacent_find(sorted_order.begin(), sorted_order.end()) != sorted_order.end()) order.clear();
  }
  return expand_grid(JsonView(doc, ""), base_dir, order);
}

Grid load_grid(const std::string& path) {
  return parse_grid(read_text_file(path, "grid file"), path, fs::path(path).parent_path().string());
}

namespace {

// Every point resolved (nullopt where it does not read, does not resolve or was marked), with the screening's
// verdicts in `cannot_run` (screen_points).
std::vector<std::optional<spec::ResolvedScenario>> resolve_points(const std::vector<SweepPoint>& points,
                                                                  const spec::Catalog& catalog,
                                                                  std::vector<std::string>& cannot_run) {
  std::vector<std::optional<spec::ResolvedScenario>> resolved(points.size());
  std::vector<std::optional<std::string>> failed(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].cannot_run.empty()) continue;
    if (!points[i].problem.empty()) {
      failed[i] = points[i].problem;
      continue;
    }
    try {
      resolved[i] = spec::resolve(points[i].scenario, catalog);
    } catch (const ConfigError& e) {
      failed[i] = e.what();
    }
  }
  cannot_run = judge_points(points, failed);
  return resolved;
}

// A row for a point that could not be resolved: what its scenario names, as written.
Row unresolved_row(const SweepPoint& p, const std::string& reason) {
  const spec::Scenario& s = p.scenario;
  Row row;
  row.model = s.model;
  row.gpu = s.hardware.gpu;
  row.quant = s.weights;
  row.kv_cache = s.kv_cache;
  row.policy = spec::to_string(s.engine.policy);
  row.tp = s.hardware.parallel.tp;
  row.pp = s.hardware.parallel.pp;
  row.replicas = s.hardware.replicas;
  row.num_gpus = s.hardware.gpus_total();
  row.currency = s.cost.currency;
  row.slo_set = has_slo(s);
  row.name = !s.name.empty() ? s.name : row.gpu + " " + row.quant;
  row.fits = false;
  row.reason = reason;
  row.labels = p.labels;
  return row;
}

}  // namespace

std::vector<std::string> screen_points(const std::vector<SweepPoint>& points, const spec::Catalog& catalog) {
  std::vector<std::string> cannot_run;
  resolve_points(points, catalog, cannot_run);
  return cannot_run;
}

std::vector<Row> run_sweep(const std::vector<SweepPoint>& points, int jobs, const Progress& progress,
                           const SweepOptions& options) {
  if (points.empty()) throw ConfigError("grid", "empty grid: nothing to run");
  if (jobs < 1) throw ConfigError("--jobs", "must be >= 1, got " + std::to_string(jobs));
  const spec::Catalog& catalog = options.catalog ? *options.catalog : spec::Catalog::builtin();
  if (options.row.capacity) options.row.capacity_options.validate();

  // Resolve everything first: a typo in point 900 should fail in milliseconds, not after 899 simulations. A point
  // whose values only contradict each other is a row that cannot run (screen_points).
  std::vector<std::string> cannot_run;
  const std::vector<std::optional<spec::ResolvedScenario>> resolved = resolve_points(points, catalog, cannot_run);

  std::vector<Row> rows(points.size());
  ParallelHooks hooks;
  hooks.progress = progress;
  hooks.cancel = options.row.cancel;
  hooks.on_warning = options.on_warning;
  if (options.on_row) hooks.on_done = [&](std::size_t i) { options.on_row(i, rows[i]); };
  parallel_for(
      points.size(), jobs,
      [&](std::size_t i) {
        if (!resolved[i]) {
          rows[i] = unresolved_row(points[i], cannot_run[i]);
          return;
        }
        Row row;
        try {
          row = evaluate_row(*resolved[i], options.row);
        } catch (const ConfigError& e) {
          // The engine refused this combination (e.g. a split the model does not allow): a row that cannot run.
          row = row_identity(*resolved[i]);
          row.fits = false;
          row.reason = std::string("cannot run: ") + e.what();
        }
        row.labels = points[i].labels;
        rows[i] = std::move(row);
      },
      hooks);
  return rows;
}

}  // namespace llmsim::analysis
