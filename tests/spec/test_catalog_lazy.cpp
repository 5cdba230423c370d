// The catalogue reads an entry's data file on first lookup by id, and every file on a listing (spec/catalog.hpp): a
// CLI call pays for the entries it uses. A bad file must still fail, naming itself, wherever it is read.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "../../libsim/src/spec/catalog_data.hpp"
#include "llmsim/core/error.hpp"
#include "llmsim/spec/catalog.hpp"

using namespace llmsim;
using namespace llmsim::spec;

namespace {

spec::detail::EmbeddedFile lazy_builtin_file(const spec::detail::EmbeddedFile* files, std::size_t n, const std::string& name) {
  for (std::size_t i = 0; i < n; ++i)
    if (files[i].name == name) return files[i];
  FAIL("no embedded file " << name);
  return {};
}

}  // namespace

TEST_CASE("every shipped data file reads, under its file's name: a listing reads them all") {
  const auto& cat = Catalog::builtin();
  REQUIRE(cat.gpus().size() == spec::detail::kGpuFilesCount);
  REQUIRE(cat.models().size() == spec::detail::kModelFilesCount);
  for (std::size_t i = 0; i < spec::detail::kGpuFilesCount; ++i) {
    const std::string name = spec::detail::kGpuFiles[i].name;
    INFO(name);
    CHECK(cat.has_gpu(name));
    CHECK(cat.gpus().at(name).id == name);
    CHECK(to_json(cat.gpu(name)).dump() == to_json(cat.gpus().at(name)).dump());
  }
  for (std::size_t i = 0; i < spec::detail::kModelFilesCount; ++i) {
    const std::string name = spec::detail::kModelFiles[i].name;
    INFO(name);
    CHECK(cat.has_model(name));
    CHECK(cat.models().at(name).id == name);
    CHECK(to_json(cat.model(name)).dump() == to_json(cat.models().at(name)).dump());
  }
  CHECK_FALSE(cat.has_gpu("rtx4090"));
  CHECK_FALSE(cat.has_model("llama-3-8b"));
}

TEST_CASE("a bad data file fails only where it is read, each time, naming the file; the entries beside it work") {
  // Before, the whole catalogue was read at its first use: one bad file failed every command.
  const spec::detail::EmbeddedFile gpus[] = {
      lazy_builtin_file(spec::detail::kGpuFiles, spec::detail::kGpuFilesCount, "rtx4090-24gb"),
      {"broken-card", R"({"id": "broken-card", "name": "a card without figures"})"}};
  const spec::detail::EmbeddedFile models[] = {
      lazy_builtin_file(spec::detail::kModelFiles, spec::detail::kModelFilesCount, "llama-3.1-8b"),
      {"broken-model", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096})"}};
  const Catalog cat = spec::detail::catalog_of_files(gpus, 2, models, 2);

  CHECK(cat.gpu("rtx4090-24gb").id == "rtx4090-24gb");
  CHECK(cat.gpu("RTX4090-24GB").id == "rtx4090-24gb");  // case-insensitive, as before
  CHECK(cat.model("llama-3.1-8b").num_layers == 32);
  CHECK(cat.has_gpu("broken-card"));  // ids are known without reading
  CHECK(cat.has_model("broken-model"));
  for (int attempt = 0; attempt < 2; ++attempt) {  // a failed read stays unread: the next lookup says it again
    INFO("attempt " << attempt);
    CHECK_THROWS_WITH(cat.gpu("broken-card"), Catch::Contains("data/gpus/broken-card"));
    CHECK_THROWS_WITH(cat.model("broken-model"), Catch::Contains("data/models/broken-model"));
    CHECK_THROWS_AS(cat.gpu("broken-card"), ConfigError);
  }
  // Listings, and the "did you mean" of an unknown id that lists the ids, read every file.
  CHECK_THROWS_WITH(cat.gpus(), Catch::Contains("data/gpus/broken-card"));
  CHECK_THROWS_WITH(cat.gpu_ids(), Catch::Contains("data/gpus/broken-card"));
  CHECK_THROWS_WITH(cat.gpu("rtx4090"), Catch::Contains("data/gpus/broken-card"));
  CHECK_THROWS_WITH(cat.models(), Catch::Contains("data/models/broken-model"));
  CHECK_THROWS_WITH(cat.model_ids(), Catch::Contains("data/models/broken-model"));
  // The good entries are unharmed by the failed reads.
  CHECK(cat.gpu("rtx4090-24gb").memory_bytes == Catalog::builtin().gpu("rtx4090-24gb").memory_bytes);

  // A user's entry of the same id replaces the unread file, which is then never read.
  Catalog mine = cat;
  GpuSpec fixed = mine.gpu("rtx4090-24gb");
  fixed.id = "broken-card";
  mine.add_gpu(fixed);
  CHECK(mine.gpus().size() == 2);
  CHECK(mine.gpu("broken-card").memory_bytes == fixed.memory_bytes);
  CHECK_THROWS_WITH(cat.gpu("broken-card"), Catch::Contains("data/gpus/broken-card"));  // the copy's source unchanged
}

TEST_CASE("threads looking up a fresh catalogue at once each read the same entries") {
  // The Python module and sweeps run threads on Catalog::builtin(): the first lookups of an entry race to read it.
  const Catalog cat =
      spec::detail::catalog_of_files(spec::detail::kGpuFiles, spec::detail::kGpuFilesCount, spec::detail::kModelFiles, spec::detail::kModelFilesCount);
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < spec::detail::kModelFilesCount; ++i) ids.push_back(spec::detail::kModelFiles[i].name);
  constexpr int kThreads = 6;
  std::vector<std::vector<std::string>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&cat, &ids, &seen, t] {
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const std::string& id = ids[(k * 7 + static_cast<std::size_t>(t) * 11) % ids.size()];  // each its own order
        seen[t].push_back(id + " " + to_json(cat.model(id)).dump());
        if (k % 5 == 0) (void)cat.has_gpu(spec::detail::kGpuFiles[k % spec::detail::kGpuFilesCount].name);
        if (k % 9 == 0) (void)cat.gpu(spec::detail::kGpuFiles[(k + t) % spec::detail::kGpuFilesCount].name);
      }
      if (t == 0) (void)cat.gpus();  // a listing in the middle of the others' lookups
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::string> expected;
  for (const auto& [id, m] : Catalog::builtin().models()) expected.push_back(id + " " + to_json(m).dump());
  std::sort(expected.begin(), expected.end());
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    std::sort(seen[t].begin(), seen[t].end());
    CHECK(seen[t] == expected);
  }
  CHECK(cat.gpus().size() == spec::detail::kGpuFilesCount);
}
