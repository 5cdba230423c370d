#pragma once
// Wave quantization of a tiled GEMM (docs/cost-model.md, "GEMM waves"). A GEMM of M×N×K runs as
// ceil(M/tm)·ceil(N/tn) output tiles, one CTA each, over the GPU's SMs; when the tile count is not a multiple of the
// SMs the last wave runs partly empty (NVIDIA, "Matrix Multiplication Background User's Guide", docs.nvidia.com/
// deeplearning/performance: "Wave Quantization"). Measured GEMMs show a fraction of the naive 1/utilization: cuBLAS
// picks among several tile shapes, split-K and stream-K kernels to fill the last wave (Vidur's A100/H100 operator
// times: the residual of the M-only roofline grows from ~0 at full waves to +13 % (A100) / +17 % (H100) at half-empty
// ones, against +100 % for a bare 128×128 grid). So the compute time is divided by
//
//     f = 1 − d · (1 − u),     u = tiles / (waves · SMs),   waves = ceil(tiles / SMs)
//
// with d = kWaveDamping; a single row of tiles (M <= 128) that leaves SMs idle is split along K and fills them (u = 1).
//
// The factor is a time at whole row tiles only. Applied to the FLOPs of any M it would make a bigger GEMM cheaper:
// M = 400 runs 4 row tiles at f = 0.99 and M = 384 runs 3 at f = 0.92 (N = 4096 on 132 SMs), so 400/0.99 < 384/0.92,
// though the 4-tile kernel does all of the 3-tile one's work and more (issue 29/27: 70B on 4xH100 read 3.9 % cheaper
// at 512 tokens than at 496). So the wave term is a time per row tile: T(k) = 128k / f(128k) for k whole row tiles
// (non-decreasing in k: within a wave count it grows with the tiles, and a new wave starts at a time >= the full
// one before it), and an M between two row-tile counts is priced linearly between them, as the partial tile's rows
// fill it. gemm_wave_penalty is that time over M: exactly 1/f at whole row tiles, never a dip in between.
// Every term is a few divisions: O(1), whatever M.
#include <cmath>

namespace llmsim::perf {

namespace gemm_tiles {
/// The output tile of the guide's cuBLAS examples and CUTLASS's default sm80/sm90 FP16 tile (128×128).
inline constexpr double kTileM = 128;
inline constexpr double kTileN = 128;
/// The measured share of the naive wave-quantization loss: least-median-error fit to Vidur's A100 and H100 Llama
/// QKV/O/up/down operator times (0.2–0.4 fit equally well; provenance "gemm_tiles.wave_damping").
inline constexpr double kWaveDamping = 0.3;
}  // namespace gemm_tiles

/// The tile grid's utilization u = tiles / (waves · SMs) of an M×N output on `sms` SMs; 1 when unknown (sms or n 0).
inline double gemm_wave_utilization(double m, double n, double sms) {
  if (!(sms >= 1) || !(n >= 1) || !(m > 0)) return 1.0;
  const double tiles = std::ceil(m / gemm_tiles::kTileM) * std::ceil(n / gemm_tiles::kTileN);
  // One row of tiles that leaves SMs idle runs split-K (cuBLAS's small-grid kernels; the guide, §3.2): it fills them.
  if (tiles < sms && m <= gemm_tiles::kTileM) return 1.0;
  const double waves = std::ceil(tiles / sms);
  return tiles / (waves * sms);
}

/// The factor f in (0, 1] on a GEMM's compute rate for its partly empty last wave.
inline double gemm_wave_factor(double m, double n, double sms) {
  return 1.0 - gemm_tiles::kWaveDamping * (1.0 - gemm_wave_utilization(m, n, sms));
}

/// The compute time's factor for the wave term, as a time non-decreasing in M: M · penalty is linear in M between
/// the times T(k) = 128k / f(128k) of whole row tiles (T(0) = 0). Equals 1 / gemm_wave_factor at M = 128k.
inline double gemm_wave_penalty(double m, double n, double sms) {
  if (!(m > 0)) return 1.0;
  const double tile = gemm_tiles::kTileM;
  const double hi = std::ceil(m / tile) * tile, lo = hi - tile;
  const double t_hi = hi / gemm_wave_factor(hi, n, sms);
  const double t_lo = lo > 0 ? lo / gemm_wave_factor(lo, n, sms) : 0.0;
  return (t_lo + (m - lo) / tile * (t_hi - t_lo)) / m;
}

}  // namespace llmsim::perf
