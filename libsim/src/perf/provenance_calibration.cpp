// The provenance of a run fit's own settings (calibration/fit/run_fit*.hpp, issue 28): its prior, when a solve
// stops, its Jacobian and geodesic steps, the serving path's bound and the capacity guard. Not cost-model constants:
// they decide how far a user's few benchmark runs may move one.
#include "provenance_rows.hpp"

namespace llmsim::perf::provenance_rows {

void add_run_fit_provenance(std::vector<ConstantProvenance>& t) {
  // --- The prior of a fit to a user's benchmark runs (calibration/fit/run_fit.hpp, issue 28): a row (s / sigma) x
  // log(field / base) per fitted field. Not a cost-model constant; it decides how far a few runs may move one.
  t.push_back(c("run_fit.prior_residual_scale", "all", P::public_measurement,
                "G§B7: MAMF spread >= 5 % between the GPUs of one 8-GPU node (cooling, silicon lottery; "
                "stas00/ml-engineering, G§S14): the relative error a measured value keeps whatever profile is fitted",
                {}, 0.05));
  t.push_back(c("run_fit.prior_sigma_kernel", "all", P::public_measurement,
                "G§B8 'Range seen' around the kernel priors: DRAM streaming 0.73-0.99 around 0.85 (+-15 % in log, the "
                "widest), decode GEMV 0.69-0.85 around 0.75, large BF16 GEMM up to 0.87 around 0.80, FP8 0.65-0.73 "
                "around 0.70: sigma = 0.15 for efficiencies and kernel rates",
                {}, 0.15));
  t.push_back(c("run_fit.prior_sigma_host", "all", P::public_measurement,
                "G§B6/B8: kernel fixed cost 0.9-3 us around the 1.3 us prior (RRZE gpu-small-kernels): about a factor "
                "2; host and latency costs vary at least as much with the CPU and the release: sigma = ln 2",
                {}, 0.6931471805599453));
  t.push_back(c("run_fit.converged_chi2", "all", P::public_measurement,
                "Numerical Recipes (Press, Teukolsky, Vetterling, Flannery, 3rd ed. 2007), 15.5.2 Levenberg-Marquardt: "
                "stop iterating when chi2 decreases by a negligible amount, less than 0.01 absolutely (a parameter "
                "moved by 0.1 of its standard error changes chi2 by 0.01); here chi2 is the cost over one measured "
                "value's residual variance. Not a cost-model constant: when a run fit stops",
                {}, 0.01));
  t.push_back(c("run_fit.jacobian_step_model", "all", P::public_measurement,
                "Numerical Recipes (3rd ed. 2007) 5.7: a forward difference's step near sqrt(e_f) of the parameter, "
                "e_f the function's fractional accuracy; the cost model's static-batch predictions are smooth to "
                "rounding and table interpolation. Not a cost-model constant: the run fit's Jacobian step in log",
                {}, 2e-3));
  t.push_back(c("run_fit.jacobian_step_simulated", "all", P::public_measurement,
                "Numerical Recipes 5.7 as run_fit.jacobian_step_model, with e_f ~ 1e-3: a simulated serving run's mean "
                "TTFT jumps by ~1 % where a step's end crosses an arrival (llmsim's own H100 serving runs, 300-500 "
                "requests, scanned in steps of 0.5 % of weight streaming), so the step spans several jumps",
                {}, 0.03));
  t.push_back(c("run_fit.geodesic_h", "all", P::public_measurement,
                "Transtrum & Sethna 2012, 'Improvements to the Levenberg-Marquardt algorithm for nonlinear least-squares "
                "minimization' (arXiv:1201.5885), geodesic acceleration: the second directional derivative of the "
                "residuals along the step v by a finite difference of h v, h = 0.1 their recommendation. Not a "
                "cost-model constant: the run fit's second-order step",
                {}, 0.1));
  t.push_back(c("run_fit.geodesic_min_step", "all", P::public_measurement,
                "the smallest shift (in log of a field) of that finite difference: 10x run_fit.jacobian_step_model, so "
                "that the forward-difference Jacobian's truncation error (step/2 of the second derivative) moves the "
                "second difference by at most a tenth (Numerical Recipes 3rd ed. 5.7). Not a cost-model constant",
                {}, 0.02));
  t.push_back(c("run_fit.geodesic_alpha", "all", P::public_measurement,
                "Transtrum & Sethna 2012 (arXiv:1201.5885) section 4: the accelerated step v + a/2 only while "
                "2|a|/|v| <= alpha, alpha = 0.75 their recommendation (the quadratic term small against the linear "
                "one). Not a cost-model constant",
                {}, 0.75));
  t.push_back(c("run_fit.serving_path_max_s", "all", P::assumed,
                "the upper bound of a fitted serving path (api_server_s): 4x the largest public measurement of the "
                "HTTP + IPC path around an engine (vllm#54628: client TTFT less the server's own 8-12 ms, a WSL2 "
                "laptop at concurrency 8; tenstorrent/tt-inference-server#190: 4 ms); a larger TTFT gap is not that "
                "path. Not a cost-model constant: how far a run fit may move one",
                {}, 0.05));
  t.push_back(c("run_fit.inprocess_server_max_s", "all", P::assumed,
                "the upper bound of a fitted in-process OpenAI server cost per streamed output per step "
                "(inprocess_server_per_output_s, vLLM before 0.6): 4x its one public measurement, vllm#6883's 100 us "
                "(runtime.served_step_per_seq_s of vllm-v0.5), as run_fit.serving_path_max_s is 4x its path's; more "
                "is not that server's streaming. Not a cost-model constant: how far a run fit may move one",
                {}, 400e-6));
  t.push_back(c("run_fit.inprocess_request_max_s", "all", P::assumed,
                "the upper bound of a fitted in-process OpenAI server front part per request "
                "(inprocess_server_per_request_s, vLLM before 0.6): 4x the value it is carried over from, vllm#51349's "
                "process_for_engine 0.5 ms (runtime.inprocess_server_per_request_s of vllm-v0.5), as "
                "run_fit.serving_path_max_s is 4x its path's; more is not that handler's work. On vLLM 0.6.0-0.6.1 "
                "the same 4x of the runtime's whole front part (0.5 ms + the RPC frontend's 2.2 ms, "
                "runtime.rpc_frontend_per_request_s). Not a cost-model constant: how far a run fit may move one",
                {}, 2e-3));
  // --- The capacity guard of a run fit (calibration/fit/run_fit_capacity.hpp, issue 28): how far serving runs that
  // all ran below capacity may move the predicted capacity, and when a run counts as below capacity.
  t.push_back(c("run_fit.capacity_guard", "all", P::public_measurement,
                "the prior's sigma for a kernel (run_fit.prior_sigma_kernel, G§B8 'Range seen': +-15 % in log): runs "
                "below capacity hold no evidence of it, so it may differ from the prior's by what one kernel's spread "
                "between real cards moves it; a fit step beyond is refused",
                {}, 0.15));
  t.push_back(c("run_fit.kept_up_fraction", "all", P::assumed,
                "a serving run at a finite rate kept up when completed / duration >= 0.9 x rate: a run that keeps up "
                "reads 0.96-1.0 (the last request's latency adds to the duration; Poisson counts scatter by 1/sqrt(N), "
                "6 % at 300 requests); DataCrunch's H200 sweep (data/calibration_runs, not a corpus source) reads "
                "1.01, 0.96, 1.01 at 1-4 req/s and 0.87, 0.52 at 8 and 16",
                {}, 0.9));
}

}  // namespace llmsim::perf::provenance_rows
