// The calibration fit: least squares, raw-file checks, and that the committed public A100 raw file
// reproduces the committed profile (data/profiles/a100-80gb-sxm-public.json).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "fit/least_squares.hpp"
#include "fit/profile_fit.hpp"
#include "fit/raw_results.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;
using namespace llmsim::calibration;

namespace {

const std::string kRaw = std::string(LLMSIM_DATA_DIR) + "/profiles/raw/a100-80gb-sxm-public.json";
const std::string kProfile = std::string(LLMSIM_DATA_DIR) + "/profiles/a100-80gb-sxm-public.json";

std::string raw_text() { return read_text_file(kRaw, "raw results"); }

std::string minimal_raw(const std::string& measurements, int count) {
  return R"({"format": "llmsim-calibration-raw", "version": 1, "gpu_id": "a100-80gb-sxm", "source": "test",
             "date": "today", "device": {"name": "test card"}, "measurement_count": )" +
         std::to_string(count) + R"(, "measurements": [)" + measurements + "]}";
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const CalibrationDataError& e) {
    return e.what();
  }
  return "no CalibrationDataError";
}

// Compares two JSON values, numbers to a relative tolerance (fits may differ in the last bits across
// compilers and Eigen versions).
void require_close(const Json& a, const Json& b, const std::string& path) {
  INFO(path);
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    REQUIRE(std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)) + 1e-300);
    return;
  }
  REQUIRE(a.type_name() == std::string(b.type_name()));
  if (a.is_object()) {
    REQUIRE(a.size() == b.size());
    for (const auto& [k, v] : a.items()) {
      REQUIRE(b.contains(k));
      require_close(v, b.at(k), path + "." + k);
    }
  } else if (a.is_array()) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) require_close(a[i], b[i], path + "[" + std::to_string(i) + "]");
  } else {
    REQUIRE(a == b);
  }
}

}  // namespace

TEST_CASE("relative least squares recovers a fixed cost and a rate") {
  // T = 3 us + V / 1.5 TB/s, with ±1% alternating noise.
  std::vector<double> v, t;
  for (int i = 0; i < 12; ++i) {
    const double bytes = 4096.0 * std::pow(4.0, i);
    v.push_back(bytes);
    t.push_back((3e-6 + bytes / 1.5e12) * (i % 2 ? 1.01 : 0.99));
  }
  const auto f = fit_affine_rate(v, t);
  CHECK(f.intercept_fitted);
  CHECK(f.a == Approx(3e-6).epsilon(0.03));
  CHECK(f.b == Approx(1.5e12).epsilon(0.03));
  const auto s = summarize_residuals(f.rel_residuals);
  CHECK(s.n == 12);
  CHECK(s.max_abs < 0.03);
  CHECK(s.max_abs > 0.001);  // the noise is visible in the residuals
}

TEST_CASE("one size gives a rate without a fixed cost") {
  const auto f = fit_affine_rate({1e9}, {1e9 / 2e12});
  CHECK_FALSE(f.intercept_fitted);
  CHECK(f.a == 0);
  CHECK(f.b == Approx(2e12));
}

TEST_CASE("truncated and foreign raw files are rejected clearly") {
  const std::string text = raw_text();
  SECTION("cut in the middle") {
    const auto msg = error_of([&] { parse_raw_results(text.substr(0, text.size() / 2), "raw.json"); });
    CHECK(msg.find("raw.json") != std::string::npos);
    CHECK(msg.find("truncated") != std::string::npos);
  }
  SECTION("records missing against the declared count") {
    const auto msg = error_of([&] {
      parse_raw_results(minimal_raw(R"({"test": "launch", "mode": "stream", "kernels": 10, "time_us_median": 30})", 2),
                        "raw.json");
    });
    CHECK(msg.find("truncated: measurement_count says 2 records, the file holds 1") != std::string::npos);
  }
  SECTION("a hardware profile passed by mistake") {
    const auto msg = error_of([&] { parse_raw_results(read_text_file(kProfile, "profile"), "profile.json"); });
    CHECK(msg.find("not an llmsim calibration raw file") != std::string::npos);
    CHECK(msg.find("llmsim-hardware-profile/1") != std::string::npos);
  }
  SECTION("some other JSON") {
    const auto msg = error_of([&] { parse_raw_results("[1, 2, 3]", "x.json"); });
    CHECK(msg.find("not an llmsim calibration raw file") != std::string::npos);
  }
  SECTION("a record with a non-positive time") {
    const auto msg = error_of([&] {
      parse_raw_results(minimal_raw(R"({"test": "copy", "kind": "h2d", "bytes": 4096, "time_us_median": 0})", 1),
                        "raw.json");
    });
    CHECK(msg.find("measurements[0].time_us_median: must be a positive number, got 0") != std::string::npos);
  }
  SECTION("a newer version") {
    std::string t = minimal_raw("", 0);
    t.replace(t.find("\"version\": 1"), 12, "\"version\": 9");
    CHECK(error_of([&] { parse_raw_results(t, "raw.json"); }).find("version 9 is not supported") != std::string::npos);
  }
}

TEST_CASE("a raw file for one GPU is not fitted against another") {
  const auto raw = parse_raw_results(raw_text(), kRaw);
  const auto h100 = spec::Catalog::builtin().gpu("h100-80gb-sxm");
  const auto msg = error_of([&] { fit_profile(raw, h100, perf::default_profile(h100)); });
  CHECK(msg.find("measured on 'a100-80gb-sxm'") != std::string::npos);
  CHECK(msg.find("'h100-80gb-sxm'") != std::string::npos);
}

TEST_CASE("the public A100 raw file fits with small residuals and reproduces the committed profile") {
  const auto raw = parse_raw_results(raw_text(), kRaw);
  CHECK(raw.gemm.size() > 500);
  const auto gpu = spec::Catalog::builtin().gpu(raw.gpu_id);
  const auto report = fit_profile(raw, gpu, perf::default_profile(gpu));

  // Every fitted term reports residuals; the fits are tight where the data are dense.
  REQUIRE(!report.terms.empty());
  for (const auto& t : report.terms) {
    INFO(t.field << " " << t.value);
    CHECK(t.points > 0);
    CHECK(std::isfinite(t.rms_rel_residual));
    if (t.field == "gemm_eff_vs_m.fp16") {
      CHECK(t.points == static_cast<int>(raw.gemm.size()));
      CHECK(t.rms_rel_residual < 0.25);
    }
  }
  // Measured values land where the public figures put them.
  CHECK(report.profile.mem_bw_efficiency == Approx(1610.0 / 2039.0).epsilon(1e-6));  // BabelStream copy
  CHECK(report.profile.kernel_launch_s == Approx(2.6e-6).epsilon(1e-6));
  CHECK(report.profile.graph_launch_s == Approx(1.4e-6).epsilon(1e-6));
  CHECK(report.profile.host_bandwidth == Approx(26.3e9).epsilon(1e-6));
  CHECK(report.profile.attn_prefill_efficiency == Approx(179.5 / 312.0).epsilon(0.01));
  CHECK(report.profile.link_bandwidth > 150e9);
  CHECK(report.profile.link_bandwidth < 300e9);
  // Vidur's FlashInfer decode timings: the kernel model's four terms land beside the A100 defaults (0.83 of
  // peak, 16 GB/s per CTA, 5 us per wave and per call), i.e. the defaults describe this kernel.
  const auto def = perf::default_profile(gpu);
  CHECK(report.profile.attn_decode_bw_efficiency == Approx(def.attn_decode_bw_efficiency).margin(0.06));
  CHECK(report.profile.attn_decode_cta_bandwidth > 12e9);
  CHECK(report.profile.attn_decode_cta_s < 1e-5);
  CHECK(report.profile.attn_decode_fixed_s < 1e-5);
  // Not measured: kept from the default profile, and said so.
  const auto& kept = report.kept_from_base;
  CHECK(std::find(kept.begin(), kept.end(), "cpu_overhead_per_iter_s") != kept.end());
  CHECK(report.profile.cpu_overhead_per_iter_s == perf::default_profile(gpu).cpu_overhead_per_iter_s);

  if (!std::ifstream(kProfile)) FAIL("missing " << kProfile << " (run llmsim calibrate-fit on " << kRaw << ")");
  const Json committed = read_json_file(kProfile);
  require_close(perf::to_json(report.profile), committed, "profile");
  // And the committed file loads as a profile.
  CHECK(perf::profile_from_json(JsonView(committed, kProfile)).gpu_id == "a100-80gb-sxm");
}
