#pragma once
// A user's benchmark runs (analysis/bench_runs.hpp) → a HardwareProfile: the profile fields the runs constrain,
// fitted by bounded Levenberg-Marquardt in relative error over the cost model's own predictions (numeric
// Jacobian, log-scale parameters), with each run's error before and after, a leave-one-run-out cross-validated
// error, the fields no run constrains, and the pairs of fields the runs cannot tell apart.
#include <string>
#include <vector>

#include "llmsim/analysis/bench_runs.hpp"
#include "llmsim/core/json_view.hpp"
#include "llmsim/perf/hardware_profile.hpp"
#include "llmsim/perf/inprocess_server.hpp"
#include "llmsim/spec/gpu_spec.hpp"

namespace llmsim::calibration {

/// The prior of a run fit: every fitted field is log-normal around the base profile's value (the default profile, or
/// the microbenchmark fit), so the least-squares cost gets a row (s / σ) · log(field / base) per field next to the
/// runs' relative errors: a maximum a posteriori fit. s is the relative error a measured value keeps whatever the
/// profile (a card's scatter against its siblings: MAMF spread >= 5 % between the GPUs of one node, G§B7 of
/// ../shared/reference/gpus-and-efficiency.md); σ is how far real cards sit from the prior: for a kernel's efficiency
/// or rate, the widest "range seen" around a prior in G§B8 (DRAM streaming 0.73-0.99 around 0.85: ±15 % in log), for
/// a host or latency cost a factor 2 (the kernel fixed cost's 0.9-3 µs around 1.3 µs, G§B6/B8). Moving an efficiency
/// by 15 %, or a host cost by a factor 2, then costs what one measured value missed by 5 % costs: runs that pin a
/// field move it freely, a direction they barely see stays at the base, and of two fields they cannot tell apart the
/// one real cards vary more in (the host cost) takes the move. Provenance: perf/provenance.cpp ("run_fit.*").
inline constexpr double kPriorResidualScale = 0.05;
inline constexpr double kPriorSigmaKernel = 0.15;
inline constexpr double kPriorSigmaHost = 0.6931471805599453;  // ln 2
/// A fit has converged when a step lowers its cost by less than this fraction of one measured value's residual
/// variance (chi2 by less than 0.01, the variance estimated from the residuals): Numerical Recipes (Press et al.,
/// 3rd ed., 15.5.2, Levenberg-Marquardt: "stop iterating when chi2 decreases by a negligible amount, say either
/// less than 0.01 absolutely ..."). A parameter moved by 0.1 of its standard error changes chi2 by 0.01, so what is
/// left to gain then moves no field by more than a small part of its uncertainty. Provenance: perf/provenance.cpp
/// ("run_fit.converged_chi2").
inline constexpr double kConvergedChi2 = 0.01;
/// Steps of the numeric Jacobian, in log of a field (Numerical Recipes 3rd ed., 5.7: a forward difference's step is
/// best near sqrt(e_f) of the parameter, e_f the function's fractional accuracy). The cost model's predictions of
/// static batches are smooth to rounding and table interpolation: 2e-3. A simulated run's mean TTFT moves by ~1 %
/// wherever a step's end crosses a request's arrival (a request waits for the step in flight), so e_f ~ 1e-3: 0.03,
/// beyond the span of those jumps, which a step of 2e-3 turned into derivatives of +-5 per e-fold (the synthetic
/// serving-path recovery stopped 2 % off with it, 0.1 % with 0.03). Provenance: perf/provenance.cpp
/// ("run_fit.jacobian_step_*").
inline constexpr double kStepModel = 2e-3;
inline constexpr double kStepSimulated = 0.03;
/// Geodesic acceleration (Transtrum & Sethna 2012, "Improvements to the Levenberg-Marquardt algorithm for nonlinear
/// least-squares minimization", arXiv:1201.5885, sections 3-4): the second directional derivative of the residuals
/// along the step v by a finite difference of h·v, h = 0.1 (their recommendation), but never a shift below 0.02 in log
/// (ten times kStepModel, so that the Jacobian's own truncation error moves the second difference by at most a tenth);
/// the step is v + a/2 while 2|a|/|v| <= alpha = 0.75 (their recommended bound), v alone beyond it (they refuse the
/// trial there; run_fit_solver.cpp says why not here). Only where every run is priced by the cost model alone.
/// Provenance: perf/provenance.cpp ("run_fit.geodesic_*").
inline constexpr double kGeodesicH = 0.1;
inline constexpr double kGeodesicMinStep = 0.02;
inline constexpr double kGeodesicAlpha = 0.75;

/// The most a fit to serving runs may set the serving path's fixed part to (HardwareProfile::api_server_s), seconds:
/// 4x the largest public measurement of that path (vllm#54628: client TTFT less the server's own, 8-12 ms, on a WSL2
/// laptop at concurrency 8; tenstorrent/tt-inference-server#190: 4 ms). A TTFT gap beyond it is not HTTP and IPC, and
/// the fit leaves the rest to other fields. Provenance: perf/provenance.cpp ("run_fit.serving_path_max_s").
inline constexpr double kServingPathMaxS = 0.05;
/// The most a fit to a pre-0.6 vLLM's served runs may set the in-process OpenAI server's cost per streamed output per
/// step to (HardwareProfile::inprocess_server_per_output_s), seconds: 4x the one public measurement of it, vllm#6883's
/// 100 us on an H100 host (perf/inprocess_server.hpp), as kServingPathMaxS is 4x its path's; more is not that server's
/// streaming. Provenance: perf/provenance.cpp ("run_fit.inprocess_server_max_s").
inline constexpr double kInprocessServerMaxS = 4 * perf::inprocess_server::kPerOutputS;
/// The most a fit to a pre-0.6 vLLM's served runs may set the in-process server's front part per request to
/// (HardwareProfile::inprocess_server_per_request_s), seconds: 4x the value it is carried over from (vllm#51349's
/// 0.5 ms, perf/inprocess_server.hpp), as kServingPathMaxS is 4x its path's; on vLLM 0.6.0-0.6.1, whose front part
/// carries the RPC frontend's per-request time as well (perf/rpc_frontend.hpp), the fit's bound is 4x that whole
/// value (the ratio kInprocessRequestMaxS / kPerRequestS). Provenance: perf/provenance.cpp
/// ("run_fit.inprocess_request_max_s").
inline constexpr double kInprocessRequestMaxS = 4 * perf::inprocess_server::kPerRequestS;

/// When the fit holds the predicted capacity (calibration/fit/run_fit_capacity.hpp): `automatic` when every serving
/// run ran below the server's capacity (none then says where capacity is), `on` always (a ConfigError when no serving
/// run can be the probe), `off` never (the fit is free to move it: to see what the guard changed).
enum class CapacityGuardMode { automatic, on, off };
/// "auto", "on" or "off" (any case) → the mode; ConfigError naming `field` (the CLI's or Python's name) otherwise.
/// The one reading of the switch: `calibrate-fit --capacity-guard` and Python `calibrate(capacity_guard=)` call it.
CapacityGuardMode capacity_guard_mode(const std::string& text, const std::string& field);
std::string to_string(CapacityGuardMode m);

struct RunFitOptions {
  int max_iterations = 40;
  bool cross_validate = true;  ///< leave-one-run-out (one refit per run)
  /// A field is constrained by a run when a change of its value by a factor e moves one of the run's predictions
  /// by more than this fraction (d log T / d log field).
  double min_sensitivity = 0.003;
  /// Runs that must constrain a fitted field: fewer is a ConfigError naming the field and the runs.
  int min_runs_per_field = 2;
  /// GEMM compute efficiency is fitted per M range (M <= 128, <= 1024, > 1024 tokens) only where min_runs_per_field
  /// runs each move a range by this much per e-fold (a 10 % error in it then moves them by 0.1 %, the order of a
  /// latency benchmark's repeatability); the other ranges share the multiplier of the nearest such range, or the
  /// whole curve one multiplier (detail::merge_ranges): what small batches measure of the tensor cores then also
  /// prices the M they did not reach.
  double separable_sensitivity = 0.01;
  /// Fit only the candidate fields whose name starts with one of these (empty = every candidate); the others are
  /// kept from the base and listed as such. {"auto"}: forward selection of field groups (a curve's M ranges are one
  /// group) by the leave-one-run-out RMS error, stopping when no group lowers it by 1 %; the note says which.
  std::vector<std::string> fields;
  /// s of the log-normal prior around the base profile (kPriorResidualScale): each field's row weighs s / σ;
  /// 0: no prior (plain least squares).
  double prior_scale = kPriorResidualScale;
  /// No step may move the predicted capacity by more than 15 % (calibration/fit/run_fit_capacity.hpp): when every
  /// serving run ran below the server's capacity (automatic), always (on) or never (off).
  CapacityGuardMode capacity_guard = CapacityGuardMode::automatic;
};

struct RunFitField {
  std::string field;        ///< "gemm_bw_eff_vs_m", "gemm_eff_vs_m.bf16[M>2048]", "attn_decode_bw_efficiency", ...
  std::string value_kind;   ///< "scale" (a curve, a multiplier on its points) or "value"
  double base = 0, fitted = 0;  ///< the value (or, for a curve, the multiplier: base 1)
  double lower = 0, upper = 0;  ///< bounds of `fitted` (efficiencies never above 1)
  bool at_bound = false;
  int runs = 0;             ///< runs that constrain it
  double std_error = 0;     ///< standard error of log(fitted) from the Jacobian and the prior (relative)
  double prior_sigma = 0;   ///< σ of its prior in log (kPriorSigmaKernel or kPriorSigmaHost)
  /// How much of log(fitted/base) the runs alone would have asked for, as a fraction: 1 − prior / (runs + prior)
  /// on the diagonal of the normal equations (≈ 1: the runs pin it; ≈ 0: the prior holds it at the base).
  double data_share = 1;
};

struct RunFitRow {
  std::string run;
  std::vector<std::string> keys;
  std::vector<double> measured, before, after, cross_validated;  ///< per key; cross_validated empty when not run
  double error_before = 0, error_after = 0, error_cv = 0;        ///< RMS of (predicted − measured)/measured
};

struct FieldPair {
  std::string a, b;
  double correlation = 0;
};

struct RunFitReport {
  perf::HardwareProfile profile;
  std::vector<RunFitField> fields;
  std::vector<std::string> unconstrained;   ///< candidate fields no run constrains: kept from the base profile
  std::vector<FieldPair> correlated;        ///< |correlation| ≥ 0.95: the runs constrain their combination only
  std::vector<RunFitRow> runs;
  double rms_before = 0, rms_after = 0, rms_cv = 0;           ///< over all runs' values
  double median_before = 0, median_after = 0, median_cv = 0;  ///< median |error| per run
  bool cross_validated = false;
  double prior_scale = 0;  ///< the prior's s the fit used (RunFitOptions::prior_scale; 0: none)
  /// How the solves ended (run_fit_solver.hpp's SolveStats): the fit's accepted steps and why it stopped
  /// ("converged", "no_step", "precision" or "limit": max_iterations reached with the cost still falling), the plain
  /// fit that measures the runs' scatter for the prior (0 without a prior), and the leave-one-out refits' largest
  /// count and how many of them reached the limit.
  int iterations = 0;
  std::string stopped_by;
  int prior_fit_iterations = 0;
  std::string prior_fit_stopped_by;
  int cv_iterations_max = 0, cv_at_limit = 0;
  /// The capacity guard, when it applied: the predicted capacity (output tokens/s of `capacity_probe`) with the base
  /// and the fitted profile, and how many steps of the fit (leave-one-out refits included) it refused.
  std::string capacity_probe;
  double capacity_base = 0, capacity_fitted = 0;
  int capacity_refused = 0;
  std::vector<std::string> notes;
};

/// Fits the profile of `gpu` from `runs`, starting from `base` (the default profile, or one fitted from
/// microbenchmarks: then the runs adjust the engine around those kernels). Every run must be on `gpu` and one
/// runtime. ConfigError naming the run and field: a run on another GPU, runs on different runtimes, a run that
/// does not fit in memory, no field constrained, a field constrained by fewer than min_runs_per_field runs, or
/// fewer runs than fields.
RunFitReport fit_runs(const std::vector<analysis::BenchRun>& runs, const spec::GpuSpec& gpu,
                      const perf::HardwareProfile& base, const RunFitOptions& options = {});

/// Predicted values of every run with `profile`, in run order (for reports and notebooks).
std::vector<std::vector<double>> predict_runs(const std::vector<analysis::BenchRun>& runs,
                                              const perf::HardwareProfile& profile);

/// The leave-one-run-out error a fitted profile records (HardwareProfile::cross_validated_error): median, 90th
/// percentile and signed median of the relative errors of the values predicted with their run left out.
perf::HardwareProfile::CrossValidatedError cross_validated_error(const std::vector<double>& rel_errors, int runs);

/// The report as JSON: {"gpu_id", "runtime", "fields": [...], "unconstrained", "correlated", "runs": [...],
/// "summary": {rms/median before, after, cross_validated}, "prior": {"residual_scale", ...}, "notes"}.
Json to_json(const RunFitReport& r);

}  // namespace llmsim::calibration
