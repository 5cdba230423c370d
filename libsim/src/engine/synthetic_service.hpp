#pragma once
// Synthetic service (private to the engine; engine.synthetic_service): c servers (c = replicas), each serving
// one request at a time for a drawn duration (fixed, exponential or lognormal), fed by one central FIFO queue
// served by the first free server — exactly M/G/c, for checking the engine against queueing theory.
#include <cstdint>
#include <vector>

#include "llmsim/core/rng.hpp"
#include "llmsim/spec/engine_config.hpp"
#include "replica.hpp"

namespace llmsim::engine::detail {

class SyntheticService {
 public:
  SyntheticService(const spec::SyntheticService& spec, int servers, RandomEngine rng)
      : spec_(spec), rng_(rng), in_service_(static_cast<std::size_t>(servers), -1) {}

  /// A free server, or -1 when all are busy.
  std::int32_t free_server() const;
  /// Starts request `seq` on `server`; returns the drawn service time (> 0).
  double start(std::int32_t server, std::int32_t seq);
  /// Ends the service on `server`; returns the request it served.
  std::int32_t finish(std::int32_t server);
  IndexRing& queue() noexcept { return queue_; }
  std::int64_t waiting() const noexcept { return static_cast<std::int64_t>(queue_.size()); }
  std::int64_t busy_servers() const noexcept;
  double busy_s() const noexcept { return busy_s_; }

 private:
  spec::SyntheticService spec_;
  RandomEngine rng_;
  IndexRing queue_;
  std::vector<std::int32_t> in_service_;  ///< request per server, -1 = idle
  double busy_s_ = 0;
};

}  // namespace llmsim::engine::detail
