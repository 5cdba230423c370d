#pragma once
// Sweeps: a grid of scenarios (a base plus lists per dotted field, cartesian product; or an explicit list)
// run on a thread pool with deterministic, grid-ordered results.
//
//   {"base": "chat-8b.json",                       // path (relative to the grid file, else the cwd) or object
//    "grid": {"hardware.gpu": ["rtx4090-24gb", "a100-80gb-sxm"],
//             "workload.arrival.rate": [1, 2, 4, 8]}}
//   {"scenarios": [{...scenario...}, "other.json"]}           // explicit list
//   {"base": {...}, "scenarios": [{"hardware.gpu": "l4", "engine.max_num_seqs": 64}, ...]}  // base + overrides
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmsim/analysis/parallel.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::analysis {

struct SweepPoint {
  std::vector<std::pair<std::string, Json>> labels;  ///< the grid values of this point, in grid order
  spec::Scenario scenario;                           ///< parsed and validated
  /// A point whose document does not read as a scenario (spec::scenario_from_json): the problem. `written` is then that
  /// document as merged and `scenario` only what it names plainly (model, card, formats, split: its row's identity).
  /// Screening decides whether its values contradict each other (a row that cannot run) or one is bad (an error).
  std::string problem;
  Json written;
  /// Set when the whole grid's judgement (expand_grid, judge_sets, screen_points) found that this point's values
  /// contradict each other: run_sweep then makes it a fits = false row with this reason without resolving it. Empty:
  /// run_sweep screens the point itself. (A part of a grid run elsewhere, such as Python's Dask chunks or a resumed
  /// sweep, carries the whole grid's verdict.)
  std::string cannot_run;
};

/// A grid point from its merged document: parsed, or (when it does not read as a scenario) kept with its problem for
/// the screening to judge (SweepPoint::problem).
SweepPoint sweep_point(const Json& doc, std::vector<std::pair<std::string, Json>> labels);

struct Grid {
  std::vector<std::string> label_paths;  ///< the swept dotted paths, in grid order
  std::vector<SweepPoint> points;        ///< cartesian product, last path varying fastest
};

/// Largest grid expand_grid() accepts (a typo such as a 10^9-point product is an error, not a hang).
inline constexpr std::size_t kMaxGridPoints = 1'000'000;

/// Expands a grid object. `base_dir` resolves relative paths (base or list entries) before the cwd. An axis value
/// (or a per-point override) applies by spec::merge_json_path: an object over a section merges into the base's.
/// A point whose values contradict each other while each reads in another point is kept (SweepPoint::problem; its row
/// cannot run). ConfigError for an empty grid or list, an unknown field path, a bad value (naming the point), more
/// than kMaxGridPoints points, or two swept paths of which one lies inside the other ("workload.arrival" and
/// "workload.arrival.rate": one would overwrite the other, and rows would be labelled with values they did not
/// run). A parsed Json object has lost its key order, so the axes run in
/// `axis_order` when given (every grid key once), else sorted by path.
/// `judge` false keeps every point that does not read, for judge_sets after what is set on top of every point.
Grid expand_grid(const JsonView& grid, const std::string& base_dir = "",
                 const std::vector<std::string>& axis_order = {}, bool judge = true);
/// After something is set on top of every point of `grid` (`llmsim sweep --set`, a server line, Python's keyword
/// overrides), each point read again (sweep_point): a point that read before (`read_before[i]`) and does not now
/// contradicts what was set (a "2xrtx4090-24gb@pp" card under --set hardware.tp=2): kept, its row cannot run
/// (SweepPoint::cannot_run). The others are judged as expand_grid judges them (a bad value is a ConfigError).
void judge_sets(Grid& grid, const std::vector<bool>& read_before);
/// Parses grid text and expands it with the axes in the order the text writes them.
Grid parse_grid(std::string_view text, const std::string& source, const std::string& base_dir = "");
/// Reads and expands a grid file (relative paths inside resolve against its folder first), axes in file order.
Grid load_grid(const std::string& path);

/// ConfigError at `where` when one of `paths` lies inside another (a path and one of its sub-fields).
void refuse_overlapping_paths(const std::vector<std::string>& paths, const std::string& where = "grid");
/// ConfigError at `where` when an override (PATH, VALUE) touches a grid axis: the axis itself, a section holding it
/// or a field inside it, vLLM names compared as the llmsim fields they set. `llmsim sweep --set` applies overrides to
/// every point, so such an override would run every row at one value under labels saying otherwise.
void refuse_sets_on_axes(const Grid& grid, const std::vector<std::pair<std::string, Json>>& sets,
                         const std::string& where = "--set");
/// After overrides (`llmsim sweep --set`, a server line's -tp/-pp) set the tensor or pipeline split of every point of a
/// grid whose axis names the card (hardware.gpu, or whole scenarios): appends the label columns hardware.tp and
/// hardware.pp holding the split each point runs (spec::split_for on its GPU option), so that a row labelled
/// "a100-80gb-sxm" that ran on 2 GPUs at tp 2 says tp 2, not the one card its label names. Nothing otherwise; a
/// column already an axis is left as it is (such a set is refused by refuse_sets_on_axes).
void label_split_of_sets(Grid& grid, const std::vector<std::pair<std::string, Json>>& sets);

/// Options of the per-point capacity search (`given`, named as the caller spells them: "--rel-tol", "rel_tol") while
/// no search runs (`capacity` false) are a ConfigError naming them, never ignored silently. `capacity_flag` is how the
/// caller asks for the search ("--capacity", "capacity=True"). The rule of `llmsim sweep` and Python's sweep().
void refuse_capacity_options_without_capacity(bool capacity, const std::vector<std::string>& given,
                                              const std::string& capacity_flag);

struct SweepOptions {
  RowOptions row;                          ///< capacity search per point, or one simulation (and row.cancel)
  const spec::Catalog* catalog = nullptr;  ///< nullptr = spec::Catalog::builtin()
  /// Each finished row with its point index, on the calling thread, in completion order (a sweep writes its
  /// rows as they finish, so an interrupted one keeps them). An exception from it stops the sweep.
  std::function<void(std::size_t index, const Row& row)> on_row;
  std::function<void(const std::string&)> on_warning;  ///< e.g. fewer threads than `jobs` could be started
};

/// Which points of a grid cannot run because their values contradict each other (a "2xrtx4090-24gb@pp" card with
/// a tp axis's 2: the card is a pipeline of two, tp 2 would need four): their reasons, "" for a point that resolves.
/// A point that does not read or resolve is such a row only when every value it carries (each label) also runs in
/// another point; otherwise a value is bad on its own (an unknown card, a split no point can take) and the first
/// such point is a ConfigError naming it and its labels, before any simulation runs. Points already marked
/// (SweepPoint::cannot_run) keep their reason and count as not running.
std::vector<std::string> screen_points(const std::vector<SweepPoint>& points,
                                       const spec::Catalog& catalog = spec::Catalog::builtin());

/// Resolves every point first (ConfigError naming the first bad point; a point whose values only contradict each
/// other is a fits = false row instead: screen_points), then evaluates them on `jobs`
/// threads. Rows come back in point order whatever `jobs` is, identical for any thread count. A point
/// the engine rejects as impossible (e.g. a format the GPU cannot run) becomes a fits = false row.
/// With options.row.cancel set, throws llmsim::Cancelled promptly (the finished rows went to on_row).
std::vector<Row> run_sweep(const std::vector<SweepPoint>& points, int jobs, const Progress& progress = {},
                           const SweepOptions& options = {});

}  // namespace llmsim::analysis
