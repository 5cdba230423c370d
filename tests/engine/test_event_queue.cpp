#include <catch2/catch.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/event_queue.hpp"

using namespace llmsim::engine;

TEST_CASE("event queue orders by time, then phase, then insertion") {
  EventQueue q;
  q.schedule(2.0, EventKind::arrival, 1);
  q.schedule(1.0, EventKind::arrival, 2);
  q.schedule(1.0, EventKind::iteration_done, 3);  // same time, earlier phase: runs before the arrival
  q.schedule(1.0, EventKind::arrival, 4);         // same time and phase: after target 2 (scheduled earlier)
  q.schedule(0.5, EventKind::arrival, 5);
  q.schedule(1.0, EventKind::replica_start, 6);  // scheduled before arrival 7 but runs after every arrival at 1.0
  q.schedule(1.0, EventKind::arrival, 7);
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.pop().target);
  REQUIRE(order == std::vector<int>{5, 3, 2, 4, 7, 6, 1});
  REQUIRE(q.now() == 2.0);
}

TEST_CASE("event queue refuses events in the past and empty pops") {
  EventQueue q;
  q.schedule(1.0, EventKind::arrival, 0);
  q.pop();
  REQUIRE_THROWS_AS(q.schedule(0.5, EventKind::arrival, 0), llmsim::InternalError);
  REQUIRE_NOTHROW(q.schedule(1.0, EventKind::arrival, 0));  // zero delay: same time, later sequence
  q.pop();
  REQUIRE_THROWS_AS(q.pop(), llmsim::InternalError);
  REQUIRE_THROWS_AS(q.peek(), llmsim::InternalError);
}

TEST_CASE("two queues are independent (no global sequence counter)") {
  EventQueue a, b;
  a.schedule(1.0, EventKind::arrival, 0);
  b.schedule(1.0, EventKind::arrival, 0);
  REQUIRE(a.pop().seq == 0);
  REQUIRE(b.pop().seq == 0);
}
