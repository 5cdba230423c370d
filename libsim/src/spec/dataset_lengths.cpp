#include "llmsim/spec/dataset_lengths.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include <boost/random/uniform_01.hpp>

#include "llmsim/core/error.hpp"
#include "llmsim/core/names.hpp"
#include "llmsim/core/number.hpp"
#include "llmsim/spec/workload.hpp"

namespace llmsim::spec {

double sharegpt_prompt_sigma() {
  const double v = kShareGptPromptStd / kShareGptPromptMean;
  return std::sqrt(std::log1p(v * v));
}
double sharegpt_reply_sigma() {
  const double v = kShareGptReplyStd / kShareGptReplyMean;
  return std::sqrt(std::log1p(v * v));
}

/// The fitted distribution: the prompt's marginal under the joint filter as a CDF over 4..1024, and the reply's
/// unfiltered pmf cumulated over 4..2044 (a prompt of p tokens admits the first 2045 - p of them).
struct DatasetLengths::Fit {
  double mu_in = 0, mu_out = 0;
  double mean_in = 0, mean_out = 0, sd_in = 0, sd_out = 0;
  std::vector<double> prompt_cdf;  ///< [i]: P(prompt <= kShareGptMinLen + i) under the filters
  std::vector<double> reply_cum;   ///< [n]: mass of the first n reply lengths (reply_cum[0] = 0)
};

namespace {

constexpr std::int64_t kPrompts = kShareGptMaxPrompt - kShareGptMinLen + 1;      // 1021 prompt lengths
constexpr std::int64_t kReplies = kShareGptMaxTotal - 2 * kShareGptMinLen + 1;   // 2041 reply lengths (4..2044)

/// Replies a prompt of p tokens admits: 4 .. 2048 - p.
std::int64_t replies_for(std::int64_t p) { return kShareGptMaxTotal - p - kShareGptMinLen + 1; }

/// P(round(X) = k) for X lognormal(mu, s): the normal's mass between the bounds' logs, taken in the tail where it
/// is small so that neither difference cancels.
double rounded_lognormal_pmf(double mu, double s, std::int64_t k) {
  const double a = (std::log(static_cast<double>(k) - 0.5) - mu) / s;
  const double b = (std::log(static_cast<double>(k) + 0.5) - mu) / s;
  if (a > 0) return 0.5 * (std::erfc(a / std::sqrt(2.0)) - std::erfc(b / std::sqrt(2.0)));
  return 0.5 * (std::erfc(-b / std::sqrt(2.0)) - std::erfc(-a / std::sqrt(2.0)));
}

struct Moments {
  double w = 0, in = 0, out = 0, in2 = 0, out2 = 0;
};

/// The joint's moments for prompt pmf `pin` and reply pmf `pout` under the filters.
Moments moments(const std::vector<double>& pin, const std::vector<double>& pout) {
  std::vector<double> c0(kReplies + 1, 0.0), c1(kReplies + 1, 0.0), c2(kReplies + 1, 0.0);
  for (std::int64_t j = 0; j < kReplies; ++j) {
    const double o = static_cast<double>(kShareGptMinLen + j), q = pout[static_cast<std::size_t>(j)];
    const auto u = static_cast<std::size_t>(j);
    c0[u + 1] = c0[u] + q;
    c1[u + 1] = c1[u] + q * o;
    c2[u + 1] = c2[u] + q * o * o;
  }
  Moments m;
  for (std::int64_t i = 0; i < kPrompts; ++i) {
    const std::int64_t p = kShareGptMinLen + i;
    const auto n = static_cast<std::size_t>(replies_for(p));
    const double pp = pin[static_cast<std::size_t>(i)], x = static_cast<double>(p);
    m.w += pp * c0[n];
    m.in += pp * c0[n] * x;
    m.in2 += pp * c0[n] * x * x;
    m.out += pp * c1[n];
    m.out2 += pp * c2[n];
  }
  return m;
}

std::vector<double> pmf(double mu, double s, std::int64_t count) {
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = rounded_lognormal_pmf(mu, s, kShareGptMinLen + i);
  return v;
}

std::shared_ptr<const DatasetLengths::Fit> fit_sharegpt(double target_in, double target_out, const std::string& path) {
  const double s_in = sharegpt_prompt_sigma(), s_out = sharegpt_reply_sigma();
  // Locations far enough out that the filtered means come close to their limits (|z| stays below ~30: no underflow).
  const double lo_in = std::log(static_cast<double>(kShareGptMinLen)) - 16 * s_in;
  const double hi_in = std::log(static_cast<double>(kShareGptMaxTotal)) + 16 * s_in;
  const double lo_out = std::log(static_cast<double>(kShareGptMinLen)) - 16 * s_out;
  const double hi_out = std::log(static_cast<double>(kShareGptMaxTotal)) + 16 * s_out;
  auto mean_in = [&](double mi, const std::vector<double>& pout) {
    const Moments m = moments(pmf(mi, s_in, kPrompts), pout);
    return m.in / m.w;
  };
  auto mean_out = [&](const std::vector<double>& pin, double mo) {
    const Moments m = moments(pin, pmf(mo, s_out, kReplies));
    return m.out / m.w;
  };
  // The reachable range of each mean, the other location at its start value: a target outside it is refused. The
  // range is open and its ends are bisection results (4.15896 or 4.15905 by the other mean): said rounded inward to
  // 0.01 token, so both numbers printed are accepted (a bound echoed rounded outward was refused; issue 29).
  auto range = [](double lo, double hi) {
    return format_fixed(std::floor(lo * 100) / 100 + 0.01, 2) + " and " + format_fixed(std::ceil(hi * 100) / 100 - 0.01, 2);
  };
  double mi = std::clamp(std::log(target_in), lo_in, hi_in), mo = std::clamp(std::log(target_out), lo_out, hi_out);
  {
    const auto pout = pmf(mo, s_out, kReplies);
    const double a = mean_in(lo_in, pout), b = mean_in(hi_in, pout);
    if (!(target_in > a && target_in < b))
      throw ConfigError(path + ".input_mean", "ShareGPT's prompts (the client keeps " + std::to_string(kShareGptMinLen) +
                                                  ".." + std::to_string(kShareGptMaxPrompt) +
                                                  " tokens) cannot average " + format_given(target_in) +
                                                  " tokens: expected a mean between " + range(a, b));
    const auto pin = pmf(mi, s_in, kPrompts);
    const double c = mean_out(pin, lo_out), d = mean_out(pin, hi_out);
    if (!(target_out > c && target_out < d))
      throw ConfigError(path + ".output_mean",
                        "ShareGPT's replies (at least " + std::to_string(kShareGptMinLen) + " tokens, prompt + reply at most " +
                            std::to_string(kShareGptMaxTotal) + ") cannot average " + format_given(target_out) +
                            " tokens with prompts of mean " + format_value(target_in) + ": expected a mean between " +
                            range(c, d));
  }
  // The location in [a, b] whose filtered mean, mean_at(location), rises to `target` (it grows with the location).
  auto bisect = [](const auto& mean_at, double target, double a, double b) {
    for (int it = 0; it < 48; ++it) {
      const double m = 0.5 * (a + b);
      (mean_at(m) < target ? a : b) = m;
    }
    return 0.5 * (a + b);
  };
  // Alternate bisections on the two locations: the joint filter couples them only weakly, so a few rounds settle.
  for (int round = 0; round < 6; ++round) {
    const auto pout = pmf(mo, s_out, kReplies);
    mi = bisect([&](double m) { return mean_in(m, pout); }, target_in, lo_in, hi_in);
    const auto pin = pmf(mi, s_in, kPrompts);
    mo = bisect([&](double m) { return mean_out(pin, m); }, target_out, lo_out, hi_out);
  }
  const auto pin = pmf(mi, s_in, kPrompts);
  const auto pout = pmf(mo, s_out, kReplies);
  const Moments m = moments(pin, pout);
  auto fit = std::make_shared<DatasetLengths::Fit>();
  fit->mu_in = mi;
  fit->mu_out = mo;
  fit->mean_in = m.in / m.w;
  fit->mean_out = m.out / m.w;
  fit->sd_in = std::sqrt(std::max(0.0, m.in2 / m.w - fit->mean_in * fit->mean_in));
  fit->sd_out = std::sqrt(std::max(0.0, m.out2 / m.w - fit->mean_out * fit->mean_out));
  // One joint cannot meet both means when the filter binds them (long prompts leave no room for long replies).
  if (std::abs(fit->mean_in - target_in) > 1e-3 * target_in || std::abs(fit->mean_out - target_out) > 1e-3 * target_out)
    throw ConfigError(path, "ShareGPT's filtered lengths cannot average " + format_given(target_in) + " prompt and " +
                                format_given(target_out) + " output tokens together (prompt + output <= " +
                                std::to_string(kShareGptMaxTotal) + "): the closest is " + format_value(fit->mean_in) +
                                " / " + format_value(fit->mean_out));
  fit->reply_cum.assign(static_cast<std::size_t>(kReplies) + 1, 0.0);
  for (std::size_t j = 0; j < pout.size(); ++j) fit->reply_cum[j + 1] = fit->reply_cum[j] + pout[j];
  fit->prompt_cdf.resize(pin.size());
  double acc = 0;
  for (std::size_t i = 0; i < pin.size(); ++i) {
    const auto n = static_cast<std::size_t>(replies_for(kShareGptMinLen + static_cast<std::int64_t>(i)));
    acc += pin[i] * fit->reply_cum[n];
    fit->prompt_cdf[i] = acc;
  }
  for (auto& x : fit->prompt_cdf) x /= acc;
  fit->prompt_cdf.back() = 1.0;
  return fit;
}

}  // namespace

DatasetLengths::DatasetLengths(const DatasetSpec& spec, const std::string& path) {
  if (std::find(kDatasets.begin(), kDatasets.end(), spec.name) == kDatasets.end())
    throw ConfigError(path + ".name", unknown_name_message("dataset", spec.name, kDatasets));
  Problems p;
  for (const auto& [key, x] : {std::pair{".input_mean", spec.input_mean}, std::pair{".output_mean", spec.output_mean}})
    if (!(x >= 0) || !std::isfinite(x))
      p.add(path + key, "must be a mean in tokens > 0 (or 0 for the dataset's default), got " + format_given(x));
  p.throw_if_any();
  const double in = spec.effective_input_mean(), out = spec.effective_output_mean();
  // Fits are deterministic in (in, out): one per pair per process, shared (a capacity search builds the workload's
  // classes many times).
  static std::mutex mutex;
  static std::map<std::pair<double, double>, std::shared_ptr<const Fit>> cache;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find({in, out}); it != cache.end()) {
      fit_ = it->second;
      return;
    }
  }
  auto fit = fit_sharegpt(in, out, path);
  const std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 4096) cache.clear();  // bounded: a sweep over many means does not grow it for ever
  fit_ = cache.emplace(std::pair{in, out}, std::move(fit)).first->second;
}

std::pair<std::int64_t, std::int64_t> DatasetLengths::at(double u_in, double u_out) const {
  const auto& f = *fit_;
  const auto i = static_cast<std::int64_t>(
      std::min<std::ptrdiff_t>(std::upper_bound(f.prompt_cdf.begin(), f.prompt_cdf.end(), u_in) - f.prompt_cdf.begin(),
                               static_cast<std::ptrdiff_t>(f.prompt_cdf.size()) - 1));
  const std::int64_t p = kShareGptMinLen + i;
  const auto n = static_cast<std::ptrdiff_t>(replies_for(p));
  const double target = u_out * f.reply_cum[static_cast<std::size_t>(n)];
  const auto first = f.reply_cum.begin() + 1;
  const auto j = std::min<std::ptrdiff_t>(std::upper_bound(first, first + n, target) - first, n - 1);
  return {p, kShareGptMinLen + static_cast<std::int64_t>(j)};
}

std::pair<std::int64_t, std::int64_t> DatasetLengths::sample(RandomEngine& rng) const {
  boost::random::uniform_01<double> u;
  const double a = u(rng);
  const double b = u(rng);
  return at(a, b);
}

double DatasetLengths::input_mean() const noexcept { return fit_->mean_in; }
double DatasetLengths::output_mean() const noexcept { return fit_->mean_out; }
double DatasetLengths::input_stddev() const noexcept { return fit_->sd_in; }
double DatasetLengths::output_stddev() const noexcept { return fit_->sd_out; }
double DatasetLengths::input_median() const noexcept { return std::exp(fit_->mu_in); }
double DatasetLengths::output_median() const noexcept { return std::exp(fit_->mu_out); }

void apply_dataset(TenantClass& c, const DatasetSpec& d, const std::string& path) {
  const DatasetLengths lengths(d, path);
  c.dataset = d;
  c.input_tokens = NormalLength{lengths.input_mean(), lengths.input_stddev(), kShareGptMinLen, kShareGptMaxPrompt};
  c.output_tokens = NormalLength{lengths.output_mean(), lengths.output_stddev(), kShareGptMinLen,
                                 kShareGptMaxTotal - kShareGptMinLen};
}

void check_dataset(const Workload& w, const std::string& path, Problems& p) {
  if (!w.dataset) return;
  const std::string dp = path + ".dataset";
  p.collect([&] { (void)DatasetLengths(*w.dataset, dp); });
  if (!w.classes.empty())
    p.add(dp, "draws the single-class workload's lengths; with classes, remove the dataset (or the classes)");
  if (w.sessions) p.add(dp, "sessions draw their own turn lengths (sessions.user_tokens, output_tokens); keep one");
  if (w.prompt_pool) p.add(dp, "a prompt pool sends its own prompts; keep the dataset or the prompt pool");
  if (std::holds_alternative<TraceReplay>(w.arrival))
    p.add(dp, "a trace's rows carry each request's lengths; remove the dataset or use another arrival process");
}

std::string describe(const DatasetLengths& d) {
  return "ShareGPT lengths (prompt mean " + format_value(d.input_mean()) + ", sd " + format_value(d.input_stddev()) +
         "; output mean " + format_value(d.output_mean()) + ", sd " + format_value(d.output_stddev()) + "; the client's "
         "filters: each >= " + std::to_string(kShareGptMinLen) + ", prompt <= " + std::to_string(kShareGptMaxPrompt) +
         ", prompt + output <= " + std::to_string(kShareGptMaxTotal) + ")";
}

}  // namespace llmsim::spec
