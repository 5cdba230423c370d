#pragma once
// CPU reference of decode attention over a paged KV cache, used to check the CUDA kernel in attention.cu
// and unit-tested on its own (tests/calibration). Plain C++17 so both nvcc and the host compiler use it.
//
// Layout (vLLM's): K and V caches are [num_pages][page_size][kv_heads][head_dim]; a sequence's logical
// token t lives in physical page block_table[seq][t / page_size], slot t % page_size. Query head h reads
// KV head h / (heads / kv_heads) (grouped-query attention, as Hugging Face's repeat_kv).
//
// Two references: `naive_decode_attention` (exact two-pass softmax in double over a gathered contiguous
// copy) and `split_decode_attention` (the kernel's own arithmetic: the context cut into splits, an online
// softmax per split, and a log-sum-exp merge). Agreement of the two checks the split/merge algebra; the
// GPU kernel is then checked against either.
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace calib {

struct PagedShape {
  int heads = 32;
  int kv_heads = 8;
  int head_dim = 128;
  int page_size = 16;
  int max_pages_per_seq = 0;  ///< row length of the block table
};

/// Element index of (page, slot, kv_head, dim) in a cache laid out as above.
inline std::size_t cache_index(const PagedShape& s, int page, int slot, int kvh, int d) {
  return ((static_cast<std::size_t>(page) * s.page_size + slot) * s.kv_heads + kvh) * s.head_dim + d;
}

/// Exact attention of one query head over `ctx` contiguous K/V rows (each head_dim long), in double.
/// q: head_dim values; k, v: ctx × head_dim; out: head_dim values. ctx == 0 gives zeros.
inline void naive_attention_row(const float* q, const float* k, const float* v, int ctx, int head_dim, float* out) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  std::vector<double> score(static_cast<std::size_t>(ctx));
  double mx = -std::numeric_limits<double>::infinity();
  for (int t = 0; t < ctx; ++t) {
    double acc = 0;
    for (int d = 0; d < head_dim; ++d) acc += static_cast<double>(q[d]) * k[static_cast<std::size_t>(t) * head_dim + d];
    score[t] = acc * scale;
    mx = std::max(mx, score[t]);
  }
  double sum = 0;
  for (int t = 0; t < ctx; ++t) sum += std::exp(score[t] - mx);
  for (int d = 0; d < head_dim; ++d) {
    double o = 0;
    for (int t = 0; t < ctx; ++t) o += std::exp(score[t] - mx) * v[static_cast<std::size_t>(t) * head_dim + d];
    out[d] = ctx > 0 ? static_cast<float>(o / sum) : 0.f;
  }
}

/// Gathers sequence `seq`'s K or V rows for one KV head into a contiguous ctx × head_dim array.
/// `cache(i)` returns the float value at flat cache index i (so half storage or a generator both work).
template <class CacheAt>
std::vector<float> gather_kv(const PagedShape& s, const int* block_table, int seq, int ctx, int kvh, CacheAt cache) {
  std::vector<float> rows(static_cast<std::size_t>(ctx) * s.head_dim);
  for (int t = 0; t < ctx; ++t) {
    const int page = block_table[static_cast<std::size_t>(seq) * s.max_pages_per_seq + t / s.page_size];
    for (int d = 0; d < s.head_dim; ++d)
      rows[static_cast<std::size_t>(t) * s.head_dim + d] = cache(cache_index(s, page, t % s.page_size, kvh, d));
  }
  return rows;
}

/// Exact reference for the whole batch. q and out: [batch][heads][head_dim].
template <class QAt, class KAt, class VAt>
void naive_decode_attention(const PagedShape& s, int batch, const int* block_table, const int* context_lens, QAt q_at,
                            KAt k_at, VAt v_at, float* out) {
  const int group = s.heads / s.kv_heads;
  std::vector<float> q(static_cast<std::size_t>(s.head_dim));
  for (int b = 0; b < batch; ++b) {
    for (int kvh = 0; kvh < s.kv_heads; ++kvh) {
      const auto k = gather_kv(s, block_table, b, context_lens[b], kvh, k_at);
      const auto v = gather_kv(s, block_table, b, context_lens[b], kvh, v_at);
      for (int j = 0; j < group; ++j) {
        const int h = kvh * group + j;
        const std::size_t base = (static_cast<std::size_t>(b) * s.heads + h) * s.head_dim;
        for (int d = 0; d < s.head_dim; ++d) q[d] = q_at(base + d);
        naive_attention_row(q.data(), k.data(), v.data(), context_lens[b], s.head_dim, out + base);
      }
    }
  }
}

/// Partial result of one split: running max m, normaliser l = Σ exp(score − m), acc = Σ exp(score − m)·v.
struct SplitPartial {
  float m = -std::numeric_limits<float>::infinity();
  float l = 0;
  std::vector<float> acc;
};

/// Online softmax over tokens [begin, end) of one query head, in float, token by token as the kernel does.
template <class KAt, class VAt>
SplitPartial split_partial(const PagedShape& s, const int* block_table, int seq, int kvh, const float* q, int begin,
                           int end, KAt k_at, VAt v_at) {
  SplitPartial p;
  p.acc.assign(static_cast<std::size_t>(s.head_dim), 0.f);
  const float scale = 1.f / std::sqrt(static_cast<float>(s.head_dim));
  for (int t = begin; t < end; ++t) {
    const int page = block_table[static_cast<std::size_t>(seq) * s.max_pages_per_seq + t / s.page_size];
    float score = 0;
    for (int d = 0; d < s.head_dim; ++d) score += q[d] * k_at(cache_index(s, page, t % s.page_size, kvh, d));
    score *= scale;
    const float m_new = std::max(p.m, score);
    const float corr = std::exp(p.m - m_new);  // exp(-inf) = 0 on the first token
    const float w = std::exp(score - m_new);
    p.l = p.l * corr + w;
    for (int d = 0; d < s.head_dim; ++d)
      p.acc[d] = p.acc[d] * corr + w * v_at(cache_index(s, page, t % s.page_size, kvh, d));
    p.m = m_new;
  }
  return p;
}

/// Log-sum-exp merge of split partials into the normalised output; empty splits (l == 0) are skipped.
inline void merge_partials(const std::vector<SplitPartial>& parts, int head_dim, float* out) {
  float m = -std::numeric_limits<float>::infinity();
  for (const auto& p : parts)
    if (p.l > 0) m = std::max(m, p.m);
  float l = 0;
  std::vector<float> acc(static_cast<std::size_t>(head_dim), 0.f);
  for (const auto& p : parts) {
    if (p.l <= 0) continue;
    const float w = std::exp(p.m - m);
    l += p.l * w;
    for (int d = 0; d < head_dim; ++d) acc[d] += p.acc[d] * w;
  }
  for (int d = 0; d < head_dim; ++d) out[d] = l > 0 ? acc[d] / l : 0.f;
}

/// Tokens per split for a context of `ctx` cut into `num_splits` (the kernel uses the same rule).
inline int tokens_per_split(int ctx, int num_splits) { return (ctx + num_splits - 1) / num_splits; }

/// The kernel's algorithm on the CPU: `num_splits` splits per sequence, online softmax, merge.
template <class QAt, class KAt, class VAt>
void split_decode_attention(const PagedShape& s, int batch, const int* block_table, const int* context_lens,
                            int num_splits, QAt q_at, KAt k_at, VAt v_at, float* out) {
  const int group = s.heads / s.kv_heads;
  std::vector<float> q(static_cast<std::size_t>(s.head_dim));
  for (int b = 0; b < batch; ++b) {
    const int tps = tokens_per_split(context_lens[b], num_splits);
    for (int h = 0; h < s.heads; ++h) {
      const int kvh = h / group;
      const std::size_t base = (static_cast<std::size_t>(b) * s.heads + h) * s.head_dim;
      for (int d = 0; d < s.head_dim; ++d) q[d] = q_at(base + d);
      std::vector<SplitPartial> parts;
      for (int sp = 0; sp < num_splits; ++sp) {
        const int begin = std::min(context_lens[b], sp * tps), end = std::min(context_lens[b], (sp + 1) * tps);
        parts.push_back(split_partial(s, block_table, b, kvh, q.data(), begin, end, k_at, v_at));
      }
      merge_partials(parts, s.head_dim, out + base);
    }
  }
}

}  // namespace calib
