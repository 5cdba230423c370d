// The expected span of a workload's open-loop arrivals (workload_rate.cpp), shared with workload.cpp's checks.
#pragma once

#include <optional>
#include <vector>

#include "llmsim/spec/workload.hpp"

namespace llmsim::spec::detail {

/// Seconds until the open-loop classes together have issued `n` requests on average (the classes share
/// num_requests); nullopt when a class is not rate-driven. A schedule that ends for every class (a daily profile's
/// days) ends the span there when fewer than `n` arrive.
std::optional<double> workload_span(const std::vector<TenantClass>& classes, double n);

}  // namespace llmsim::spec::detail
