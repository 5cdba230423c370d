// `--fields auto` (calibration/fit/run_fit.cpp): forward selection of field groups by their leave-one-run-out error.
// It ranks each candidate group by that error alone, without the fit of all runs that only a chosen group's report
// reads, and fits the groups it keeps in full once, at the end (FitDepth; issue 30). Here the search that fitted every
// candidate in full, as fit_runs did before, is written out with fit_runs on each candidate and a cache of its own:
// the same groups, chosen in the same order at the same errors, and the same report, to the bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fit/run_fit.hpp"
#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "synthetic_runs.hpp"

using namespace llmsim;

namespace {

/// The auto search of fit_runs, each candidate group fitted in full by its own fit_runs call (as fit_runs did before
/// it ranked them without the full fit): the groups chosen, and the note fit_runs writes of them.
struct FullSearch {
  std::vector<std::string> chosen;
  std::string note;
};

FullSearch search_in_full(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu,
                          const perf::HardwareProfile& base) {
  calibration::RunFitOptions all;
  all.cross_validate = false;
  all.min_runs_per_field = 1;
  all.max_iterations = 1;
  std::vector<std::string> groups;
  for (const auto& f : calibration::fit_runs(runs, gpu, base, all).fields) {
    const std::string g = f.field.substr(0, f.field.find('['));
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  FullSearch out;
  std::string path;
  double best = INFINITY, before = INFINITY;
  bool have = false;
  while (true) {
    std::string pick;
    double pick_cv = INFINITY;
    for (const auto& g : groups) {
      if (std::find(out.chosen.begin(), out.chosen.end(), g) != out.chosen.end()) continue;
      calibration::RunFitOptions t;
      t.fields = out.chosen;
      t.fields.push_back(g);
      try {
        const auto r = calibration::fit_runs(runs, gpu, base, t);
        if (!have) best = before = std::min(best, r.rms_before);
        if (r.rms_cv < pick_cv) {
          pick_cv = r.rms_cv;
          pick = g;
        }
      } catch (const ConfigError&) {
        // too few runs for this group with the others: not a candidate
      }
    }
    if (pick.empty() || !(pick_cv < 0.99 * best)) break;
    out.chosen.push_back(pick);
    path += (path.empty() ? "" : ", then ") + pick + " (leave-one-out RMS " + std::to_string(pick_cv) + ")";
    best = pick_cv;
    have = true;
  }
  out.note = "fields chosen by leave-one-run-out error (from " + std::to_string(before) + " with none): " + path;
  return out;
}

}  // namespace

TEST_CASE("run fit: fields auto chooses and fits what the search fitting every candidate in full does",
          "[calibration][runs][auto]") {
  const auto gpu = spec::Catalog::builtin().gpu("a100-80gb-sxm");
  const test::Batch1HostAttentionCase c(gpu);
  test::Synth synth;
  synth.noise = 0.01;  // a benchmark's scatter: the error the search weighs each group by is not zero
  test::TempDir dir("runfit-auto");
  const auto runs = analysis::read_bench_runs(test::synthetic_runs(dir, gpu.id, c.shapes, c.truth, synth)).runs;

  calibration::RunFitOptions o;
  o.fields = {"auto"};
  const auto rep = calibration::fit_runs(runs, gpu, c.base, o);
  const FullSearch full = search_in_full(runs, gpu, c.base);
  INFO(rep.notes.front());
  // More than one round: a later round ranks its candidates with the groups kept before.
  REQUIRE(full.chosen.size() >= 2);
  // The same groups, in the same order, at the same leave-one-out errors (the note prints them).
  CHECK(rep.notes.front() == full.note);
  // The same report as those groups fitted in full by themselves: profile, fields, runs, errors and notes.
  calibration::RunFitOptions t;
  t.fields = full.chosen;
  const auto alone = calibration::fit_runs(runs, gpu, c.base, t);
  Json got = calibration::to_json(rep), want = calibration::to_json(alone);
  REQUIRE(got["notes"].size() == want["notes"].size() + 1);
  got["notes"].erase(0);  // the choice's note, checked above
  CHECK(got.dump() == want.dump());
  CHECK(perf::to_json(rep.profile).dump() == perf::to_json(alone.profile).dump());
}
