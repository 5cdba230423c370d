#pragma once
// The options of `llmsim compare` — which GPUs, formats and knobs to put side by side, prices, the target load and
// the capacity search's accuracy — shared by every command that runs a comparison (`compare`, `report`), so the two
// read the same flags the same way.
#include <boost/program_options.hpp>
#include <string>

#include "llmsim/analysis/compare.hpp"
#include "llmsim/analysis/row.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/spec/scenario.hpp"

namespace llmsim::cli {

/// Adds --gpus, --quants, --policies, --max-num-seqs, --max-num-batched-tokens, --prices, --purchase-prices,
/// --target-qps, --rank-by, --jobs, --replications, --rel-tol and --requests.
void add_compare_options(boost::program_options::options_description& opts);

/// Writes --target-qps into the scenario document (cost.target_qps) before it is parsed.
void apply_target_qps(Json& scenario, const boost::program_options::variables_map& vm);

/// The comparison the flags ask for. ConfigError naming the flag for an empty list, a count that is not a positive
/// integer or a price that is not gpu=NUMBER (unknown GPU ids are analysis::compare's ConfigError, before it runs).
analysis::CompareOptions compare_options(const boost::program_options::variables_map& vm);

/// Why a row has no numbers, or what to know about its fleet at the target load ("" when nothing): the note
/// column of the compare table and of the report.
std::string row_note(const analysis::Row& row, const spec::Scenario& base);

}  // namespace llmsim::cli
