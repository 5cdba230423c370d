// Hostile inputs at the root: file reading (special files, size caps), strict JSON (duplicate keys), RFC 4180
// CSV, strict numbers, and messages that cannot carry raw control bytes or megabytes of echoed input.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include "llmsim/core/csv.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/core/input_file.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/core/number.hpp"

using namespace llmsim;
namespace fs = std::filesystem;

namespace {
fs::path scratch() {
  const auto dir = fs::temp_directory_path() / ("llmsim_test_inputs_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("read_text_file refuses special files at once, naming them", "[core][input]") {
  // /dev/zero used to be read whole (bad_alloc); a FIFO blocked forever in open(); a directory read as "".
  CHECK_THAT(error_of([] { read_text_file("/dev/zero", "scenario"); }),
             Catch::StartsWith("scenario: '/dev/zero' is a character device, expected a file"));
  const auto dir = scratch();
  CHECK_THAT(error_of([&] { read_text_file(dir.string(), "trace"); }),
             Catch::Contains("is a directory, expected a file"));
  const auto fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto pending = std::async(std::launch::async, [&] { return error_of([&] { read_text_file(fifo.string(), "x"); }); });
  REQUIRE(pending.wait_for(std::chrono::seconds(5)) == std::future_status::ready);  // no writer: must not block
  CHECK_THAT(pending.get(), Catch::Contains("is a FIFO"));
  CHECK_THAT(error_of([&] { read_text_file((dir / "missing.json").string(), "model"); }),
             Catch::StartsWith("model: no such file") && Catch::Contains("missing.json"));
  CHECK_THAT(error_of([] { read_text_file("", "model"); }), Catch::Contains("empty file name"));
  fs::remove_all(dir);
}

TEST_CASE("read_text_file bounds what it reads", "[core][input]") {
  const auto dir = scratch();
  const auto big = dir / "big.json";
  std::ofstream(big) << std::string(5000, ' ');
  CHECK(read_text_file(big.string(), "x", 5000).size() == 5000);  // exactly at the cap: fine
  CHECK_THAT(error_of([&] { read_text_file(big.string(), "x", 4999); }),
             Catch::Contains("more than the 4999 bytes"));
  // A regular file whose size fstat does not know (procfs says 0) is bounded while reading.
  CHECK_THAT(error_of([] { read_text_file("/proc/self/maps", "x", 16); }), Catch::Contains("more than the 16 bytes"));
  CHECK(kMaxJsonFileBytes >= (std::size_t{1} << 20));
  fs::remove_all(dir);
}

TEST_CASE("parse_json refuses a duplicate key with both positions and the object's path", "[core][json]") {
  const std::string e = error_of([] { parse_json("{\"model\": \"a\",\n \"model\": \"b\"}", "s.json"); });
  CHECK_THAT(e, Catch::StartsWith("s.json: duplicate key 'model'"));
  CHECK_THAT(e, Catch::Contains("line 2, column 2") && Catch::Contains("first at line 1, column 2"));
  const std::string nested =
      error_of([] { parse_json(R"({"hardware": {"tp": 1, "gpus": [{"a": 1}, {"b": 2, "b": 3}], "tp": 2}})", "x"); });
  CHECK_THAT(nested, Catch::Contains("duplicate key 'b' in 'hardware.gpus[1]'"));
  // Escapes spell the same key: "\u0061" is "a".
  CHECK_THAT(error_of([] { parse_json(R"({"a": 1, "\u0061": 2})", "x"); }), Catch::Contains("duplicate key 'a'"));
  // The same key in different objects, in strings and in arrays is fine.
  CHECK_NOTHROW(parse_json(R"({"a": {"a": 1}, "b": ["a", "a"], "c": "{\"a\":1,\"a\":2}"})", "x"));
}

TEST_CASE("parse_number is strict and locale-free", "[core][number]") {
  CHECK(parse_number("12") == 12.0);
  CHECK(parse_number("-0.5") == -0.5);
  CHECK(parse_number("1e3") == 1000.0);
  CHECK(parse_number("+7") == 7.0);
  for (const char* bad : {"", "1,000", " 12", "12 ", "0x10", "inf", "nan", "-inf", "12abc", "1e999", "e5", "+", "."})
    CHECK_FALSE(parse_number(bad).has_value());
}

TEST_CASE("CsvReader reads RFC 4180 quoting, a BOM and every line ending", "[core][csv]") {
  std::vector<std::string> f;
  CsvReader a("\xEF\xBB\xBF" "a,b\r\n\"1,000\",\"say \"\"hi\"\"\"\r\n\r\n  x , \"multi\nline\" \n7,8", "t.csv");
  REQUIRE(a.next(f));
  CHECK(f == std::vector<std::string>{"a", "b"});  // BOM gone: the header reads as written
  REQUIRE(a.next(f));
  CHECK(f == std::vector<std::string>{"1,000", "say \"hi\""});
  REQUIRE(a.next(f));
  CHECK(f == std::vector<std::string>{"x", "multi\nline"});
  CHECK(a.line() == 4);
  REQUIRE(a.next(f));
  CHECK(a.line() == 6);  // the quoted line break counted
  CHECK(f == std::vector<std::string>{"7", "8"});
  CHECK_FALSE(a.next(f));

  CsvReader cr("h1,h2\r1,2\r3,4\r", "cr.csv");  // old Mac line ends: three records, not one line
  int records = 0;
  while (cr.next(f)) ++records;
  CHECK(records == 3);

  CHECK_THAT(error_of([] {
               std::vector<std::string> g;
               CsvReader r("a,b\n1,\"open\n2,3\n", "q.csv");
               while (r.next(g)) {
               }
             }),
             Catch::StartsWith("q.csv:2:2: ") && Catch::Contains("opened on line 2 never closes"));
  CHECK_THAT(error_of([] {
               std::vector<std::string> g;
               CsvReader r("a\n\"x\"y\n", "q.csv");
               while (r.next(g)) {
               }
             }),
             Catch::StartsWith("q.csv:2:1: unexpected text after the closing quote"));
  CHECK_THAT(error_of([] {
               std::vector<std::string> g;
               CsvReader r("a\nx\"y\n", "q.csv");
               while (r.next(g)) {
               }
             }),
             Catch::Contains("inside an unquoted field"));
}

TEST_CASE("error messages escape control and non-UTF-8 bytes and are bounded", "[core][error]") {
  CHECK(printable(std::string("a\0b\nc\x1b[31m", 10)) == "a\\x00b\\x0Ac\\x1B[31m");
  CHECK(printable("caf\xC3\xA9 \xE4\xB8\xAD") == "caf\xC3\xA9 \xE4\xB8\xAD");  // valid UTF-8 kept
  CHECK(printable("\xFF\xC3(\xED\xA0\x80") == "\\xFF\\xC3(\\xED\\xA0\\x80");  // invalid, truncated, surrogate
  const std::string long_text(10000, 'x');
  const std::string cut = printable(long_text, 100);
  CHECK(cut.size() == 100);
  CHECK(cut.substr(97) == "...");
  CHECK(printable(cut, 100) == cut);                                    // idempotent
  CHECK(printable("\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD", 8) == "\xE4\xB8\xAD...");  // cut at a character boundary
  const ConfigError e("trace.csv:1", "unrecognised header '" + std::string(1 << 20, '\r') + "'");
  CHECK(std::string(e.what()).size() <= kMaxMessageBytes);
  CHECK(std::string(e.what()).find('\r') == std::string::npos);
  CHECK(std::string(InternalError(std::string("x\ny")).what()) == "x\\x0Ay");
}

TEST_CASE("LLMSIM_CHECK throws InternalError naming the check, and builds its message only when it fails", "[core]") {
  int built = 0;
  auto message = [&] {
    ++built;
    return "n is " + std::to_string(3);
  };
  const int n = 3;
  LLMSIM_CHECK(n == 3, message());
  CHECK(built == 0);
  try {
    LLMSIM_CHECK(n == 4, message());
    FAIL("no throw");
  } catch (const InternalError& e) {
    CHECK_THAT(std::string(e.what()), Catch::StartsWith("internal check failed: n is 3 [n == 4] at ") &&
                                          Catch::EndsWith("test_inputs.cpp"));
  }
  CHECK(built == 1);
  CHECK_THROWS_AS([] { LLMSIM_CHECK(false, "a literal"); }(), InternalError);
}

TEST_CASE("a JSON number beyond double's range names its field; a syntax error says where", "[core][json]") {
  CHECK(error_of([] { parse_json(R"({"workload": {"arrival": {"rate": 1e999}}})", "s.json"); }) ==
        "workload.arrival.rate: the number 1e999 is out of range (s.json, line 1, column 35)");
  CHECK_THAT(error_of([] { parse_json(R"({"a": [1, 2, -1e999]})", "s.json"); }), Catch::StartsWith("a[2]: the number -1e999"));
  CHECK_THAT(error_of([] { parse_json(R"({"engine": {"max_num_seqs": 8x}})", "s.json"); }),
             Catch::StartsWith("s.json: invalid JSON") && Catch::EndsWith("(in 'engine.max_num_seqs')"));
}
