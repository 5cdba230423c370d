// Real trace formats (BurstGPT CSV, Mooncake JSONL) and the prefix-cache hits Mooncake's block hashes drive.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "engine_test_util.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/kv_block_manager.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/engine/workload_source.hpp"
#include "llmsim/metrics/summary.hpp"

using namespace llmsim;
using namespace llmsim::engine;

namespace {

const std::string kData = std::string(LLMSIM_SOURCE_DIR) + "/tests/data/traces/";

spec::TraceReplay options(const std::string& file) {
  spec::TraceReplay t;
  t.path = kData + file;
  return t;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// A Mooncake trace with `n` requests `gap_ms` apart, each of `blocks` hash blocks of 512 tokens: all share the
// first `shared` blocks (ids 0..shared-1) when `share`, else every block id is new.
std::string mooncake(int n, int gap_ms, int blocks, int shared, bool share) {
  std::string text;
  long next = 1000;
  for (int i = 0; i < n; ++i) {
    std::string ids;
    for (int b = 0; b < blocks; ++b) {
      const long id = share && b < shared ? b : next++;
      ids += (b ? ", " : "") + std::to_string(id);
    }
    text += "{\"timestamp\": " + std::to_string(i * gap_ms) + ", \"input_length\": " + std::to_string(blocks * 512) +
            ", \"output_length\": 16, \"hash_ids\": [" + ids + "]}\n";
  }
  return text;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

SimulationResult run_trace(const std::string& path, std::int64_t n, Json engine = Json::object()) {
  Json w = {{"arrival", {{"process", "trace"}, {"path", path}}}, {"num_requests", n}, {"warmup_requests", 0}};
  SimulationOptions opt;
  opt.record_iterations = true;
  return simulate(test::make(test::scenario(w, engine)), opt);
}

double prefill_tokens(const SimulationResult& r) {
  double t = 0;
  for (const auto& it : r.iterations) t += it.prefill_tokens;
  return t;
}

}  // namespace

TEST_CASE("BurstGPT: times from the first row, failed rows dropped as the dataset's without_fails files") {
  const Trace t = load_trace(options("burstgpt_sample.csv"));
  CHECK(t.format == "burstgpt");
  REQUIRE(t.rows.size() == 8);  // 10 rows, 2 with Response tokens 0
  CHECK(t.rows[0].arrival_s == 0);
  CHECK(t.rows[1].arrival_s == 40);  // 45 − 5
  CHECK(t.rows[1].input_tokens == 1000);
  CHECK(t.rows[1].output_tokens == 200);
  CHECK(t.rows.back().arrival_s == 7225);
  CHECK(t.hash_ids.empty());

  auto keep = options("burstgpt_sample.csv");
  keep.keep_failed = true;
  const Trace all = load_trace(keep);
  REQUIRE(all.rows.size() == 10);
  CHECK(all.rows[3].input_tokens == 1303);
  CHECK(all.rows[3].output_tokens == 1);  // the prompt is replayed, the failed reply takes one step
}

TEST_CASE("BurstGPT: model and log-type filters, time and row windows") {
  auto gpt4 = options("burstgpt_sample.csv");
  gpt4.model = "GPT-4";
  const Trace g = load_trace(gpt4);
  REQUIRE(g.rows.size() == 3);  // 118, 152, 7230 (3650 failed)
  CHECK(g.rows[1].arrival_s == 152 - 118);

  auto api = options("burstgpt_sample.csv");
  api.log_type = "API";  // matches "API log"
  CHECK(load_trace(api).rows.size() == 3);  // 152, 171, 3702

  // The second hour of the trace's own clock (from its first row at 5 s): rows at 3605 .. 3702 s.
  auto hour = options("burstgpt_sample.csv");
  hour.start_s = 3600;
  hour.duration_s = 3600;
  const Trace h = load_trace(hour);
  REQUIRE(h.rows.size() == 2);  // 3605 and 3702 (3650 failed); 7230 is past the hour
  CHECK(h.rows[0].input_tokens == 654);
  CHECK(h.rows[1].arrival_s == 3702 - 3605);

  auto rows = options("burstgpt_sample.csv");
  rows.start_row = 2;
  rows.max_rows = 3;
  const Trace r = load_trace(rows);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].input_tokens == 400);
  CHECK(r.rows[2].input_tokens == 96);

  auto none = options("burstgpt_sample.csv");
  none.model = "GPT-5";
  CHECK_THROWS_WITH(load_trace(none), Catch::Contains("no request left") && Catch::Contains("model 'GPT-5'"));
}

TEST_CASE("BurstGPT: malformed rows name the file, line and column") {
  const std::string head = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n";
  spec::TraceReplay o;
  o.format = "burstgpt";
  CHECK_THROWS_WITH(parse_trace(head + "5,ChatGPT,472,18,490,Conversation log\n6,ChatGPT,\"1,000\",5,1005,API log\n", "b.csv", o),
                    Catch::Contains("b.csv:3:3: column Request tokens") && Catch::Contains("no thousands separators"));
  CHECK_THROWS_WITH(parse_trace(head + "5,ChatGPT,472,many,490,Conversation log\n", "b.csv", o),
                    Catch::Contains("b.csv:2:4: column Response tokens") && Catch::Contains("'many'"));
  CHECK_THROWS_WITH(parse_trace(head + "5,ChatGPT\n", "b.csv", o), Catch::Contains("b.csv:2") && Catch::Contains("columns"));
  // A format named explicitly must match the header.
  CHECK_THROWS_WITH(parse_trace("arrival_time_s,input_tokens,output_tokens\n0,1,1\n", "p.csv", o),
                    Catch::Contains("p.csv:1") && Catch::Contains("Request tokens"));
  spec::TraceReplay filter;
  filter.model = "ChatGPT";
  CHECK_THROWS_WITH(parse_trace("arrival_time_s,input_tokens,output_tokens\n0,1,1\n", "p.csv", filter),
                    Catch::Contains("filter BurstGPT traces"));
}

TEST_CASE("Mooncake: milliseconds, hash ids, rows that name their line and field") {
  const Trace t = load_trace(options("mooncake_sample.jsonl"));
  CHECK(t.format == "mooncake");
  CHECK(t.hash_block_tokens == 512);
  REQUIRE(t.rows.size() == 4);
  CHECK(t.rows[1].arrival_s == 10.0);
  CHECK(t.rows[2].hash_count == 3);
  CHECK(t.hash_ids[static_cast<std::size_t>(t.rows[2].hash_begin)] == 5);

  spec::TraceReplay o;
  const std::string good = "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 3, \"hash_ids\": [1, 2]}\n";
  CHECK_THROWS_WITH(parse_trace(good + "{\"timestamp\": 5, \"input_length\": \"many\", \"output_length\": 3, \"hash_ids\": [1]}\n", "m.jsonl", o),
                    Catch::Contains("m.jsonl:2: field input_length") && Catch::Contains("'many'"));
  CHECK_THROWS_WITH(parse_trace(good + "{\"timestamp\": 5, \"input_length\": 600, \"output_length\": 3}\n", "m.jsonl", o),
                    Catch::Contains("m.jsonl:2") && Catch::Contains("missing field hash_ids"));
  CHECK_THROWS_WITH(parse_trace(good + "{\"timestamp\": 5, \"input_length\": 1100, \"output_length\": 3, \"hash_ids\": [1, 2]}\n", "m.jsonl", o),
                    Catch::Contains("m.jsonl:2: field hash_ids") && Catch::Contains("too short") && Catch::Contains("3 blocks"));
  CHECK_THROWS_WITH(parse_trace(good + "{\"timestamp\": 5, \"input_length\": 600,\n", "m.jsonl", o),
                    Catch::Contains("m.jsonl:2") && Catch::Contains("invalid JSON"));
  CHECK_THROWS_WITH(parse_trace(good + "{\"timestamp\": -1, \"input_length\": 600, \"output_length\": 3, \"hash_ids\": [1, 2]}\n", "m.jsonl", o),
                    Catch::Contains("m.jsonl:2: field timestamp"));
  CHECK_THROWS_WITH(parse_trace(good + "{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 3, \"hash_ids\": [1, -2]}\n", "m.jsonl", o),
                    Catch::Contains("hash_ids[1]"));
  // The scenario names the file in its error when it cannot be read.
  CHECK_THAT(message_of([] {
               spec::TraceReplay bad;
               bad.path = "/nonexistent/m.jsonl";
               load_trace(bad);
             }),
             Catch::Contains("workload.arrival.path"));
}

TEST_CASE("KV block manager: hashed blocks are shared, kept when released, evicted least recently used") {
  KvBlockManager kv(4, 16, 0.0, 0);
  const auto a = KvBlockManager::block_key(KvBlockManager::chain_hash(0, 1), 0);
  const auto b = KvBlockManager::block_key(KvBlockManager::chain_hash(0, 2), 0);
  // Two one-block chains (a sequence's view: its keys from block 0).
  const std::uint64_t ka[] = {a}, kb[] = {b};
  const KvBlockManager::ChainKeys ca{ka}, cb{kb};
  kv.allocate(2);
  REQUIRE(kv.publish_chain(ca, 0, 1) == 1);
  REQUIRE(kv.publish_chain(cb, 0, 1) == 1);
  CHECK(kv.publish_chain(ca, 0, 1) == 0);  // already cached
  CHECK(kv.block_state(a) == 1);
  kv.release_chain(cb, 1);                 // b first: a is released later, so more recently
  kv.release_chain(ca, 1);
  CHECK(kv.used() == 0);
  CHECK(kv.cached_free() == 2);
  CHECK(kv.block_state(a) == 0);
  std::int64_t referenced = -1;
  CHECK(kv.chain_cached(ca, 1, &referenced) == 1);
  CHECK(referenced == 0);
  kv.acquire_chain(ca, 1);                 // a hit: back to referenced
  CHECK(kv.used() == 1);
  kv.allocate(3);                    // needs one cached block: b, the only unreferenced one, goes
  CHECK(kv.block_state(b) == -1);
  CHECK(kv.block_state(a) == 1);
  CHECK(kv.cache_entries() == 1);
}

TEST_CASE("Mooncake hash ids drive prefix-cache hits: the hand count, the chain rule") {
  // tests/data/traces/README.md: 4 requests of 1100 tokens 10 s apart (each done before the next), 16-token blocks.
  const auto r = run_trace(kData + "mooncake_sample.jsonl", 4);
  const auto& kv = r.summary.kv;
  CHECK(kv.prefix_cache_query_tokens == 4400);
  // 0 (first), 1024 (blocks 0-1 of 512 shared = 64 engine blocks), 0 (first block differs: the later shared
  // blocks do not count), 1088 (the whole prompt but its last partial block and last token).
  CHECK(kv.prefix_cache_hit_tokens == 2112);
  CHECK(metrics::to_json(r.summary)["kv"]["prefix_cache_hit_rate"].get<double>() == Approx(2112.0 / 4400));
  CHECK(prefill_tokens(r) == 4400 - 2112);

  // With prefix caching off the same trace computes every prompt token and reports no hit rate.
  const auto off = run_trace(kData + "mooncake_sample.jsonl", 4, {{"enable_prefix_caching", false}});
  CHECK(prefill_tokens(off) == 4400);
  CHECK(metrics::to_json(off.summary)["kv"]["prefix_cache_hit_rate"].is_null());
}

TEST_CASE("Mooncake: shared prefixes cut TTFT and prefill work against the same trace with distinct ids") {
  // 40 requests of 8 hash blocks (4096 tokens), 7 of them shared, 200 ms apart.
  const auto shared = run_trace(write_temp("llmsim_mc_shared.jsonl", mooncake(40, 200, 8, 7, true)), 40);
  const auto distinct = run_trace(write_temp("llmsim_mc_distinct.jsonl", mooncake(40, 200, 8, 7, false)), 40);
  REQUIRE(shared.summary.completed_requests == 40);
  REQUIRE(distinct.summary.completed_requests == 40);
  CHECK(distinct.summary.kv.prefix_cache_hit_tokens == 0);
  // Every request but the first hits the 7 shared blocks of 512 tokens: 39 × 3584 of 40 × 4096.
  CHECK(shared.summary.kv.prefix_cache_hit_tokens == 39 * 3584);
  CHECK(prefill_tokens(shared) == 40 * 4096 - 39 * 3584);
  CHECK(prefill_tokens(distinct) == 40 * 4096);
  // Prefill of 512 tokens instead of 4096: TTFT falls by several times.
  CHECK(shared.summary.ttft_ms.mean < 0.5 * distinct.summary.ttft_ms.mean);
}

TEST_CASE("Mooncake under KV pressure: evicted prefixes miss, the run stays consistent") {
  // A KV pool of a few hundred blocks (gpu_memory_utilization just above the weights) under 6 system prompts and
  // private tails arriving faster than they are served: cached blocks are evicted and requests preempted, yet
  // every request finishes, every block comes back, and some hits remain.
  std::string text;
  long next = 100000;
  for (int i = 0; i < 120; ++i) {
    std::string ids = std::to_string(i % 6);  // 6 system prompts
    for (int b = 1; b < 6; ++b) ids += ", " + std::to_string(b < 3 ? (i % 6) * 10 + b : next++);
    text += "{\"timestamp\": " + std::to_string(i * 20) + ", \"input_length\": 3000, \"output_length\": 200, \"hash_ids\": [" + ids + "]}\n";
  }
  const auto r = run_trace(write_temp("llmsim_mc_pressure.jsonl", text), 120, {{"gpu_memory_utilization", 0.245}});
  INFO("KV tokens " << r.summary.kv.capacity_tokens << ", preemptions " << r.summary.preemptions << ", hits "
                    << r.summary.kv.prefix_cache_hit_tokens);
  CHECK(r.summary.preemptions > 0);
  CHECK(r.summary.completed_requests == 120);
  CHECK(r.kv_blocks_in_use_at_end == 0);
  CHECK(r.summary.kv.prefix_cache_hit_tokens > 0);
  CHECK(r.summary.kv.prefix_cache_hit_tokens < r.summary.kv.prefix_cache_query_tokens);
}

TEST_CASE("trace scenario keys: format, filters and windows are read, checked and written back") {
  Json w = {{"arrival", {{"process", "trace"}, {"path", kData + "burstgpt_sample.csv"}, {"format", "burstgpt"},
                         {"model", "GPT-4"}, {"duration_s", 3600}}},
            {"num_requests", 10}, {"warmup_requests", 0}};
  const auto rs = test::make(test::scenario(w));
  const auto r = simulate(rs);
  CHECK(r.summary.completed_requests == 2);  // GPT-4 rows in the first hour: 118 and 152 s
  Json bad = w;
  bad["arrival"]["format"] = "burstgtp";
  CHECK_THROWS_WITH(test::make(test::scenario(bad)), Catch::Contains("workload.arrival.format") && Catch::Contains("burstgpt"));
  bad = w;
  bad["arrival"]["failed"] = "retry";
  CHECK_THROWS_WITH(test::make(test::scenario(bad)), Catch::Contains("workload.arrival.failed"));
  bad = w;
  bad["arrival"]["format"] = "mooncake";
  CHECK_THROWS_WITH(test::make(test::scenario(bad)), Catch::Contains("filter BurstGPT"));
  bad = w;
  bad["arrival"]["max_rows"] = -1;
  CHECK_THROWS_AS(test::make(test::scenario(bad)), ConfigError);
}
