#include <catch2/catch.hpp>

#include "llmsim/core/names.hpp"

using namespace llmsim;

TEST_CASE("close_matches finds typos and substrings") {
  std::vector<std::string> gpus{"rtx4090-24gb", "rtx4090-48gb", "a100-80gb-sxm", "h100-80gb-sxm"};
  auto m = close_matches("rtx4090", gpus);
  REQUIRE(m.size() >= 2);
  CHECK(m[0].rfind("rtx4090", 0) == 0);
  CHECK(close_matches("a100-80gb-smx", gpus).at(0) == "a100-80gb-sxm");
  CHECK(close_matches("zzzzzzzzzzzz", gpus).empty());
}

TEST_CASE("unknown_name_message lists valid names") {
  auto msg = unknown_name_message("GPU", "rtx4900-24gb", {"rtx4090-24gb", "a100-80gb-sxm"});
  CHECK(msg.find("did you mean 'rtx4090-24gb'") != std::string::npos);
  CHECK(msg.find("valid: rtx4090-24gb, a100-80gb-sxm") != std::string::npos);
}
