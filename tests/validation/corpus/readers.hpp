#pragma once
// One reader per corpus source folder (corpus_sets.cpp maps the folder name to it): each appends every measured
// value of the folder to `out`, predicted where llmsim can represent the run, unscored with its reason otherwise.
#include <vector>

#include "corpus/common.hpp"

namespace llmsim::validation::corpus {

// serve_files.cpp: vLLM serve result files and serve tables.
void crusoe(const Source& s, std::vector<Row>& out);
void sweep_table(const Source& s, std::vector<Row>& out);
void accelmark_interactive(const Source& s, std::vector<Row>& out);
void surajssd(const Source& s, std::vector<Row>& out);
void simonmo(const Source& s, std::vector<Row>& out);
void anyscale(const Source& s, std::vector<Row>& out);
/// When a `vllm bench serve` client's run started, in seconds of its day: the file's `date` (YYYYMMDD-HHMMSS,
/// written when the run ended, to the second) less its `duration`; ConfigError naming the file otherwise.
double client_start_s(const analysis::VllmResult& r);

// vllm_tables.cpp: vLLM latency / throughput files and transcribed tables.
void dstack(const Source& s, std::vector<Row>& out);
void pr3692(const Source& s, std::vector<Row>& out);
void zjuici(const Source& s, std::vector<Row>& out);
void zhjunqin(const Source& s, std::vector<Row>& out);
void wangraying(const Source& s, std::vector<Row>& out);
void dstack_r1(const Source& s, std::vector<Row>& out);

// sglang.cpp
void livinfly(const Source& s, std::vector<Row>& out);
void mtilyxuegao(const Source& s, std::vector<Row>& out);

// llamacpp.cpp
void xiongjiedai(const Source& s, std::vector<Row>& out);
void llamacpp_prs(const Source& s, std::vector<Row>& out);

// printed_serve.cpp: `vllm bench serve` console summaries printed in a page.
void gpustack(const Source& s, std::vector<Row>& out);

// traces.cpp
void llmservingsim(const Source& s, std::vector<Row>& out);
void mlenergy(const Source& s, std::vector<Row>& out);
void inference_sim(const Source& s, std::vector<Row>& out);
void splitwise(const Source& s, std::vector<Row>& out);

}  // namespace llmsim::validation::corpus
