#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "llmsim/core/error.hpp"
#include "llmsim/engine/workload_source.hpp"

using namespace llmsim;
using namespace llmsim::engine;

TEST_CASE("trace layouts: plain, Azure (datetime), Splitwise") {
  auto plain = parse_trace("arrival_time_s,input_tokens,output_tokens\n1.5,100,20\n0.5,50,0\n", "t.csv");
  REQUIRE(plain.size() == 2);
  REQUIRE(plain[0].arrival_s == 0.0);  // sorted and shifted to start at 0
  REQUIRE(plain[0].input_tokens == 50);
  REQUIRE(plain[0].output_tokens == 1);  // zero generated tokens still take one step
  REQUIRE(plain[1].arrival_s == Approx(1.0));

  auto azure = parse_trace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44\r\n"
      "2023-11-16 18:15:50.9951690,396,109\r\n2023-11-17 00:00:00,10,1\r\n",
      "azure.csv");
  REQUIRE(azure.size() == 3);
  REQUIRE(azure[1].arrival_s == Approx(50.9951690 - 46.6805900).margin(1e-5));
  REQUIRE(azure[2].arrival_s == Approx((24 - 18) * 3600.0 - 15 * 60 - 46.68059).margin(1e-5));

  auto sw = parse_trace("arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,4808,10\n0.052,3180,8\n", "s.csv");
  REQUIRE(sw.size() == 2);
  REQUIRE(sw[1].input_tokens == 3180);
}

TEST_CASE("a bad trace row is reported with its line number") {
  const std::string text = "arrival_time_s,input_tokens,output_tokens\n0,10,10\n\n1,abc,10\n";
  try {
    parse_trace(text, "bad.csv");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("bad.csv:4") != std::string::npos);
    CHECK(msg.find("abc") != std::string::npos);
  }
  REQUIRE_THROWS_AS(parse_trace("arrival_time_s,input_tokens,output_tokens\n0,-5,10\n", "x"), ConfigError);
  REQUIRE_THROWS_AS(parse_trace("arrival_time_s,input_tokens,output_tokens\n0,10\n", "x"), ConfigError);
  REQUIRE_THROWS_AS(parse_trace("a,b,c\n0,10,10\n", "x"), ConfigError);
  REQUIRE_THROWS_AS(parse_trace("", "x"), ConfigError);
  REQUIRE_THROWS_AS(read_trace("/nonexistent/trace.csv"), ConfigError);
}

TEST_CASE("the public Splitwise traces parse", "[reference]") {
  const std::string path = std::string(LLMSIM_REFERENCE_DIR) + "/traces/splitwise_conv.csv";
  if (!std::ifstream(path)) {
    WARN("reference data absent: " << path);
    return;
  }
  const auto rows = read_trace(path);
  REQUIRE(rows.size() == 19366);  // workloads.md
  double in = 0;
  for (const auto& r : rows) in += static_cast<double>(r.input_tokens);
  REQUIRE(in / static_cast<double>(rows.size()) == Approx(1155).epsilon(0.01));
}

TEST_CASE("round_length is std::llround over drawn lengths: halves, powers of two, their neighbours, random values") {
  std::vector<double> xs;
  for (double n = 1; n <= 1e9; n = n < 4096 ? n + 1 : n * 1.37) {
    const double k = std::floor(n);
    for (double v : {k, k - 0.5, k + 0.5, std::ldexp(1.0, static_cast<int>(std::log2(k)))})
      for (double x : {v, std::nextafter(v, 0.0), std::nextafter(v, 2e9)})
        if (x >= 0.5) xs.push_back(x);
  }
  std::uint64_t state = 88172645463325252ull;
  for (int i = 0; i < 200000; ++i) {  // xorshift: uniform in log between 0.5 and 1e9
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    xs.push_back(0.5 * std::pow(2e9, static_cast<double>(state >> 11) * 0x1p-53));
  }
  std::size_t differ = 0;
  for (double x : xs) differ += round_length(x) != std::llround(x);
  CHECK(differ == 0);
  CHECK(xs.size() > 200000);
  CHECK(round_length(0.49999999999999994) == 1);  // below 0.5 it may differ (llround: 0); samplers clamp to >= 1
}

TEST_CASE("length samplers: means, bounds, validation") {
  auto rng = rng_stream(3, "lengths");
  LengthSampler ln(spec::LogNormalLength{512, 0.8}, "w.input_tokens", 0);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(ln.sample(rng));
  REQUIRE(sum / n == Approx(512).epsilon(0.02));

  LengthSampler u(spec::UniformLength{3, 7}, "w.output_tokens", 0);
  std::int64_t lo = 100, hi = 0;
  for (int i = 0; i < 10000; ++i) {
    const auto x = u.sample(rng);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  REQUIRE(lo == 3);
  REQUIRE(hi == 7);

  LengthSampler nm(spec::NormalLength{10, 50, 1, 0}, "w.input_tokens", 64);
  for (int i = 0; i < 10000; ++i) {
    const auto x = nm.sample(rng);
    REQUIRE(x >= 1);
    REQUIRE(x <= 64);
  }

  LengthSampler emp(spec::EmpiricalLength{{5, 9}, "", ""}, "w.input_tokens", 0);
  for (int i = 0; i < 100; ++i) {
    const auto x = emp.sample(rng);
    REQUIRE((x == 5 || x == 9));
  }
  REQUIRE_THROWS_AS(LengthSampler(spec::UniformLength{8, 3}, "w.input_tokens", 0), ConfigError);
  REQUIRE_THROWS_AS(LengthSampler(spec::FixedLength{0}, "w.input_tokens", 0), ConfigError);
  REQUIRE_THROWS_AS(LengthSampler(spec::EmpiricalLength{}, "w.input_tokens", 0), ConfigError);
  REQUIRE_THROWS_WITH(LengthSampler(spec::LogNormalLength{-1, 0.5}, "w.input_tokens", 0),
                      Catch::Contains("w.input_tokens.mean"));
}

TEST_CASE("empirical lengths from a CSV column") {
  const std::string path = "/tmp/llmsim_test_empirical.csv";
  {
    std::ofstream f(path);
    f << "id,prompt_len\n1,100\n2,300\n";
  }
  LengthSampler s(spec::EmpiricalLength{{}, path, "prompt_len"}, "w.input_tokens", 0);
  REQUIRE(s.mean() == Approx(200));
  REQUIRE_THROWS_WITH(LengthSampler(spec::EmpiricalLength{{}, path, "nope"}, "w.input_tokens", 0),
                      Catch::Contains("w.input_tokens.column"));
}

TEST_CASE("a piecewise arrival sampler remembers its segment without changing a draw") {
  // Hourly rates with a silent hour: a sampler that has drawn its way through the day (and
  // so starts each search from the last arrival's segment) gives the same next arrival as a fresh one, from any time,
  // earlier ones included.
  const spec::PiecewiseArrivals p{{{0.0, 2.0}, {3600.0, 0.0}, {7200.0, 5.0}, {9000.0, 1.0}, {10800.0, 3.0}}};
  ArrivalSampler used(p, "a");
  auto rng = rng_stream(7, "arrivals");
  for (double t = 0; t < 12000;) t = used.next(t, rng);
  std::size_t compared = 0;
  for (const double now : {11000.0, 10800.0, 0.0, 3599.5, 3600.0, 5000.0, 7200.0, 9000.0, 10799.99, 1.0, 20000.0}) {
    ArrivalSampler fresh(p, "a");
    auto a = rng_stream(11, std::to_string(now)), b = a;
    const double x = used.next(now, a), y = fresh.next(now, b);
    CHECK(x == y);
    CHECK(x >= now);
    CHECK(!(x >= 3600.0 && x < 7200.0));  // nothing arrives in the silent hour
    ++compared;
  }
  REQUIRE(compared == 11);
}

TEST_CASE("arrival samplers: Poisson and Gamma rates and CV, constant, on/off") {
  auto rng = rng_stream(5, "arrivals");
  const int n = 200000;
  auto stats = [&](ArrivalSampler a) {
    double t = 0, s = 0, s2 = 0;
    for (int i = 0; i < n; ++i) {
      const double nt = a.next(t, rng);
      const double g = nt - t;
      s += g;
      s2 += g * g;
      t = nt;
    }
    const double mean = s / n;
    return std::pair{1.0 / mean, std::sqrt(std::max(0.0, s2 / n - mean * mean)) / mean};
  };
  auto [pr, pcv] = stats(ArrivalSampler(spec::PoissonArrivals{4.0}, "a"));
  REQUIRE(pr == Approx(4.0).epsilon(0.01));
  REQUIRE(pcv == Approx(1.0).epsilon(0.02));
  auto [gr, gcv] = stats(ArrivalSampler(spec::GammaArrivals{2.0, 3.0}, "a"));
  REQUIRE(gr == Approx(2.0).epsilon(0.03));
  REQUIRE(gcv == Approx(3.0).epsilon(0.05));
  auto [cr, ccv] = stats(ArrivalSampler(spec::ConstantArrivals{10.0}, "a"));
  REQUIRE(cr == Approx(10.0));
  REQUIRE(ccv < 1e-6);
  // On/off: 10/s for 1 s, nothing for 3 s -> 2.5/s on average, and no arrival in an off phase.
  ArrivalSampler oo(spec::OnOffArrivals{10.0, 1.0, 3.0, 0.0}, "a");
  double t = 0;
  int count = 0;
  while (t < 4000) {
    t = oo.next(t, rng);
    REQUIRE(std::fmod(t, 4.0) < 1.0);
    ++count;
  }
  REQUIRE(count / 4000.0 == Approx(2.5).epsilon(0.05));
  REQUIRE_THROWS_WITH(ArrivalSampler(spec::PoissonArrivals{0.0}, "workload.arrival"),
                      Catch::Contains("workload.arrival.rate"));
  REQUIRE_THROWS_AS(ArrivalSampler(spec::GammaArrivals{-1.0, 2.0}, "a"), ConfigError);
}
