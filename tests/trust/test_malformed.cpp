// Hand-written malformed inputs (tests/trust/malformed/): each must give a clear error naming the bad field
// (ConfigError; CalibrationDataError for calibration raw files) — never a crash, a hang, another exception
// type, or silent acceptance. malformed/expect.json maps every file to its loader and an expected substring;
// scenario files are also fed to the `llmsim simulate` CLI, which must exit 2 with the message on stderr.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>

#include "fit/raw_results.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/engine/simulator.hpp"
#include "llmsim/engine/workload_source.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/spec/catalog.hpp"
#include "llmsim/spec/scenario.hpp"

using namespace llmsim;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(LLMSIM_SOURCE_DIR) / "tests" / "trust" / "malformed";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs the loader named `loader` on `file`; a file that loads without error is run further (a scenario is
/// resolved and simulated) so that errors found late still count.
void load(const std::string& loader, const fs::path& file) {
  const std::string path = file.string();
  if (loader == "scenario") {
    auto sc = spec::scenario_from_text(slurp(file), file.filename().string());
    sc.workload.num_requests = std::min<std::int64_t>(sc.workload.num_requests, 20);
    sc.workload.warmup_requests = 0;
    engine::simulate(spec::resolve(sc, spec::Catalog::builtin()));
  } else if (loader == "hf_config") {
    spec::Catalog::builtin().model(path, "model").validate();
  } else if (loader == "gpu_spec") {
    spec::Catalog::builtin().gpu(path, "hardware.gpu").validate();
  } else if (loader == "trace") {
    engine::read_trace(path);
  } else if (loader == "calibration_raw") {
    calibration::parse_raw_results(slurp(file), file.filename().string());
  } else if (loader == "profile") {
    perf::load_profile(path);
  } else {
    FAIL("unknown loader " << loader << " in expect.json");
  }
}

}  // namespace

TEST_CASE("every malformed input gives a clear error naming the problem", "[malformed]") {
  const Json table = read_json_file((kDir / "expect.json").string());
  std::set<std::string> listed;
  int checked = 0;
  for (auto it = table.begin(); it != table.end(); ++it) {
    const std::string name = it.key();
    const std::string loader = it.value().at("loader").get<std::string>();
    const std::string expect = it.value().at("error").get<std::string>();
    listed.insert(name);
    INFO("file " << name << " loader " << loader << " expecting '" << expect << "'");
    REQUIRE(fs::exists(kDir / name));
    std::string message, kind = "none";
    try {
      load(loader, kDir / name);
    } catch (const ConfigError& e) {
      kind = "ConfigError";
      message = e.what();
    } catch (const CalibrationDataError& e) {
      kind = "CalibrationDataError";
      message = e.what();
    } catch (const std::exception& e) {
      kind = std::string("other: ") + typeid(e).name();
      message = e.what();
    }
    INFO("got " << kind << ": " << message);
    CHECK(kind == (loader == "calibration_raw" ? "CalibrationDataError" : "ConfigError"));
    CHECK(message.find(expect) != std::string::npos);
    ++checked;
  }
  // Every file in the folder has an expectation (a new file cannot be silently skipped).
  for (const auto& entry : fs::directory_iterator(kDir)) {
    const auto name = entry.path().filename().string();
    if (name != "expect.json") CHECK(listed.count(name) == 1);
  }
  CHECK(checked >= 50);
}

#ifdef LLMSIM_CLI_PATH
TEST_CASE("the CLI exits 2 with the message on stderr for every malformed scenario", "[malformed][cli]") {
  const Json table = read_json_file((kDir / "expect.json").string());
  const fs::path err_file = fs::temp_directory_path() / ("llmsim_trust_stderr_" + std::to_string(::getpid()));
  for (auto it = table.begin(); it != table.end(); ++it) {
    if (it.value().at("loader") != "scenario") continue;
    const std::string expect = it.value().at("error").get<std::string>();
    const std::string cmd = std::string("'") + LLMSIM_CLI_PATH + "' simulate --scenario '" +
                            (kDir / it.key()).string() + "' > /dev/null 2> '" + err_file.string() + "'";
    const int status = std::system(cmd.c_str());
    const std::string err = slurp(err_file);
    INFO(it.key() << ": " << err);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(err.find(expect) != std::string::npos);
  }
  fs::remove(err_file);
}
#endif
