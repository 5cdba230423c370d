#include "synthetic_service.hpp"

#include <algorithm>
#include <cmath>

#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>

#include "llmsim/core/error.hpp"

namespace llmsim::engine::detail {

std::int32_t SyntheticService::free_server() const {
  for (std::size_t k = 0; k < in_service_.size(); ++k)
    if (in_service_[k] < 0) return static_cast<std::int32_t>(k);
  return -1;
}

std::int64_t SyntheticService::busy_servers() const noexcept {
  return std::count_if(in_service_.begin(), in_service_.end(), [](std::int32_t s) { return s >= 0; });
}

double SyntheticService::start(std::int32_t server, std::int32_t seq) {
  double d = spec_.mean_s;
  switch (spec_.kind) {
    case spec::SyntheticService::Kind::fixed: break;
    case spec::SyntheticService::Kind::exponential:
      d = boost::random::exponential_distribution<double>(1.0 / spec_.mean_s)(rng_);
      break;
    case spec::SyntheticService::Kind::lognormal: {
      const double s2 = std::log1p(spec_.cv * spec_.cv);
      d = boost::random::lognormal_distribution<double>(std::log(spec_.mean_s) - s2 / 2, std::sqrt(s2))(rng_);
      break;
    }
  }
  d = std::max(d, 1e-12);  // a zero-length service would tie with its own start
  LLMSIM_CHECK(std::isfinite(d), "synthetic service time is not finite");
  in_service_[static_cast<std::size_t>(server)] = seq;
  busy_s_ += d;
  return d;
}

std::int32_t SyntheticService::finish(std::int32_t server) {
  const std::int32_t seq = in_service_[static_cast<std::size_t>(server)];
  LLMSIM_CHECK(seq >= 0, "synthetic service finished on an idle server");
  in_service_[static_cast<std::size_t>(server)] = -1;
  return seq;
}

}  // namespace llmsim::engine::detail
