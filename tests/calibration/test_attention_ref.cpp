// The CPU reference of paged decode attention that checks the CUDA kernel (calibration/bench/attention.cu).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "bench/paged_attention_ref.hpp"

namespace {

struct Case {
  calib::PagedShape s;
  int batch;
  std::vector<int> ctx, table;
  std::vector<float> q, k, v;
};

Case make_case(int heads, int kv_heads, int head_dim, int page_size, std::vector<int> ctx, unsigned seed) {
  Case c;
  c.s.heads = heads;
  c.s.kv_heads = kv_heads;
  c.s.head_dim = head_dim;
  c.s.page_size = page_size;
  c.batch = static_cast<int>(ctx.size());
  const int longest = *std::max_element(ctx.begin(), ctx.end());
  c.s.max_pages_per_seq = std::max(1, (longest + page_size - 1) / page_size);
  c.ctx = std::move(ctx);
  const int pages = c.batch * c.s.max_pages_per_seq;
  c.table.resize(pages);
  std::iota(c.table.begin(), c.table.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(c.table.begin(), c.table.end(), rng);  // non-contiguous physical pages
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  c.q.resize(static_cast<std::size_t>(c.batch) * heads * head_dim);
  c.k.resize(static_cast<std::size_t>(pages) * page_size * kv_heads * head_dim);
  c.v.resize(c.k.size());
  for (auto* vec : {&c.q, &c.k, &c.v})
    for (auto& x : *vec) x = u(rng);
  return c;
}

auto at(const std::vector<float>& v) {
  return [&v](std::size_t i) { return v[i]; };
}

}  // namespace

TEST_CASE("a single cached token returns its V row for every query head of the group") {
  auto c = make_case(8, 2, 16, 4, {1, 1}, 3);
  std::vector<float> out(c.q.size());
  calib::naive_decode_attention(c.s, c.batch, c.table.data(), c.ctx.data(), at(c.q), at(c.k), at(c.v), out.data());
  for (int b = 0; b < c.batch; ++b)
    for (int h = 0; h < c.s.heads; ++h) {
      const int kvh = h / (c.s.heads / c.s.kv_heads);
      const int page = c.table[static_cast<std::size_t>(b) * c.s.max_pages_per_seq];
      for (int d = 0; d < c.s.head_dim; ++d)
        CHECK(out[(static_cast<std::size_t>(b) * c.s.heads + h) * c.s.head_dim + d] ==
              Approx(c.v[calib::cache_index(c.s, page, 0, kvh, d)]).margin(1e-6));
    }
}

TEST_CASE("equal scores average the V rows") {
  auto c = make_case(4, 4, 8, 2, {5}, 4);
  std::fill(c.q.begin(), c.q.end(), 0.f);  // every score is 0
  std::vector<float> out(c.q.size());
  calib::naive_decode_attention(c.s, 1, c.table.data(), c.ctx.data(), at(c.q), at(c.k), at(c.v), out.data());
  for (int h = 0; h < 4; ++h)
    for (int d = 0; d < 8; ++d) {
      double mean = 0;
      for (int t = 0; t < 5; ++t) mean += c.v[calib::cache_index(c.s, c.table[t / 2], t % 2, h, d)] / 5.0;
      CHECK(out[static_cast<std::size_t>(h) * 8 + d] == Approx(mean).margin(1e-6));
    }
}

TEST_CASE("the kernel's split online softmax agrees with exact attention") {
  const auto splits = GENERATE(1, 2, 3, 7);
  auto c = make_case(32, 8, 64, 16, {1, 17, 300, 129, 64}, 11u + static_cast<unsigned>(splits));
  std::vector<float> want(c.q.size()), got(c.q.size());
  calib::naive_decode_attention(c.s, c.batch, c.table.data(), c.ctx.data(), at(c.q), at(c.k), at(c.v), want.data());
  calib::split_decode_attention(c.s, c.batch, c.table.data(), c.ctx.data(), splits, at(c.q), at(c.k), at(c.v),
                                got.data());
  double max_err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) max_err = std::max(max_err, double(std::fabs(want[i] - got[i])));
  CHECK(max_err < 1e-5);
}

TEST_CASE("the block table is followed: gathering matches, and a page of another sequence changes the result") {
  auto c = make_case(4, 1, 16, 4, {13, 13}, 5);
  std::vector<float> a(c.q.size()), b(c.q.size());
  calib::naive_decode_attention(c.s, 1, c.table.data(), c.ctx.data(), at(c.q), at(c.k), at(c.v), a.data());
  // Gathered K/V for the true table equal what a contiguous layout would give.
  const auto k = calib::gather_kv(c.s, c.table.data(), 0, 13, 0, at(c.k));
  const auto v = calib::gather_kv(c.s, c.table.data(), 0, 13, 0, at(c.v));
  std::vector<float> row(16);
  calib::naive_attention_row(c.q.data(), k.data(), v.data(), 13, 16, row.data());
  for (int d = 0; d < 16; ++d) CHECK(a[d] == Approx(row[d]).margin(1e-6));
  // Token order does not matter to attention, so point sequence 0 at a page of sequence 1 instead.
  std::swap(c.table[0], c.table[static_cast<std::size_t>(c.s.max_pages_per_seq)]);
  calib::naive_decode_attention(c.s, 1, c.table.data(), c.ctx.data(), at(c.q), at(c.k), at(c.v), b.data());
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff += std::fabs(a[i] - b[i]);
  CHECK(diff > 1e-3);
}

TEST_CASE("merging ignores empty splits") {
  calib::SplitPartial empty, full;
  full.m = 0.5f;
  full.l = 2.f;
  full.acc = {1.f, -4.f};
  empty.acc = {0.f, 0.f};
  float out[2];
  calib::merge_partials({empty, full, empty}, 2, out);
  CHECK(out[0] == Approx(0.5f));
  CHECK(out[1] == Approx(-2.f));
}
