#include "llmsim/analysis/dataset_requests.hpp"

#include <algorithm>
#include <numeric>

#include <boost/random/uniform_01.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/rng.hpp"
#include "llmsim/spec/dataset_lengths.hpp"

namespace llmsim::analysis {

bool draw_dataset_requests(VllmResult& r) {
  if (!r.input_lens.empty() || to_lower(r.dataset_name) != "sharegpt") return false;
  if (r.completed < 1 || r.completed > 1'000'000 || r.failed != 0) return false;
  if (r.total_input_tokens <= 0 || r.total_output_tokens <= 0) return false;
  const double n = static_cast<double>(r.completed);
  spec::DatasetSpec ds;
  ds.input_mean = static_cast<double>(r.total_input_tokens) / n;
  ds.output_mean = static_cast<double>(r.total_output_tokens) / n;
  std::optional<spec::DatasetLengths> lengths;
  try {
    lengths.emplace(ds, "dataset");
  } catch (const ConfigError&) {
    return false;  // means outside what the client's filters admit: not a ShareGPT run as the clients sample it
  }
  // Stratified quantiles (a Latin hypercube over the two uniforms): request i takes the (perm[i] + U) / n quantile
  // of each, so the n draws cover the distribution evenly and their means land on the file's.
  auto rng = rng_stream(1, "dataset_requests");
  const auto count = static_cast<std::size_t>(r.completed);
  std::vector<std::size_t> a(count), b(count);
  std::iota(a.begin(), a.end(), std::size_t{0});
  std::iota(b.begin(), b.end(), std::size_t{0});
  boost::random::uniform_01<double> u;
  auto shuffle = [&](std::vector<std::size_t>& v) {  // Fisher-Yates on the stream (std::shuffle is not portable)
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<std::size_t>(u(rng) * static_cast<double>(i)) % i]);
  };
  shuffle(a);
  shuffle(b);
  r.input_lens.resize(count);
  r.output_lens.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double ui = (static_cast<double>(a[i]) + u(rng)) / n, uo = (static_cast<double>(b[i]) + u(rng)) / n;
    std::tie(r.input_lens[i], r.output_lens[i]) = lengths->at(ui, uo);
  }
  r.lists_from = spec::describe(*lengths) + " at the file's mean lengths; the requests' own lengths are not in it";
  r.lists_drawn = true;
  return true;
}

}  // namespace llmsim::analysis
