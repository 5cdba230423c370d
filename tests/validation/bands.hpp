#pragma once
// The error-band table (analysis/error_band.hpp) from validation rows: scored engine rows grouped by GPU family ×
// runtime × batch bucket × metric family at every level of the band lookup, blind sources apart from the ones the
// model was developed on (perf/provenance.hpp).
#include <cstdio>
#include <string>
#include <vector>

#include "llmsim/analysis/error_band.hpp"
#include "validation_row.hpp"

namespace llmsim::validation {

/// The metric family of a row's metric: tokens/s and requests/s are throughput, prefill and TTFT are ttft, every
/// other time (batch latency, decode step, TPOT, ITL, E2E) is latency.
analysis::MetricFamily metric_family(const std::string& metric);

/// True when the row's source set no constant and was not developed on.
bool row_is_blind(const Row& r);

/// The groups of every level of the lookup (exact; without batch; without runtime; without family), each split
/// into blind and development rows, in a stable order. Groups with fewer than 3 rows are left out.
std::vector<analysis::ErrorBandGroup> band_groups(const std::vector<Row>& rows);

/// The headline of `make validate`: the blind rows' count, sources, median / p90 |error| and signed median overall
/// and per group, against the issue-27 targets (median <= 6 %, p90 <= 15 %, no group of >= 10 points biased beyond
/// +-5 %), each marked met or NOT MET. Prints that there are none when `blind` is empty.
void print_blind_headline(std::FILE* out, const std::vector<Row>& blind);

}  // namespace llmsim::validation
