#pragma once
// The page `llmsim report` writes: one self-contained HTML document (inline CSS and SVG, no script, no network) that
// answers the buyer's question for a manager — a headline sentence, the question, the options table, the winner and
// why the others lost, cost at the user's load and at capacity, latency against load, cost against capacity, and the
// assumptions, with placeholder prices flagged wherever they are used.
#include <string>
#include <vector>

#include "llmsim/analysis/compare.hpp"
#include "llmsim/spec/scenario.hpp"
#include "report/load_curves.hpp"

namespace llmsim::cli::report {

struct ReportInput {
  const spec::Scenario& base;                 ///< the user's scenario (after --set / --target-qps)
  const analysis::CompareResult& result;      ///< analysis::compare over the options
  const std::vector<LoadCurve>& curves;       ///< load_curves() of the same options
  const analysis::CompareOptions& options;    ///< what was compared and how accurately
  std::string source;                         ///< the scenario file as given (shown, escaped)
};

/// The one-sentence answer: which option to rent, its monthly bill and token cost at the target load, and how many
/// options met the SLO — or that none did and why. Plain text (escape before putting it in HTML).
std::string headline(const ReportInput& in);

/// True when a fitting option was priced at a catalogue placeholder, not a price the user gave.
bool uses_placeholder_prices(const analysis::CompareResult& result);

/// The whole HTML document.
std::string render_report(const ReportInput& in);

}  // namespace llmsim::cli::report
