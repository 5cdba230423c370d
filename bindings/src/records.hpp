#pragma once
// Per-request and per-iteration records as dicts of numpy columns (pandas.DataFrame(dict) on the Python
// side). Built with the GIL held, after the simulation ran without it.
#include <cstdint>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "llmsim/engine/simulator.hpp"

namespace llmsim::python {

namespace py = pybind11;

template <class T, class Record, class Get>
py::array_t<T> column(const std::vector<Record>& records, Get get) {
  py::array_t<T> out(static_cast<py::ssize_t>(records.size()));
  auto view = out.template mutable_unchecked<1>();
  for (py::ssize_t i = 0; i < static_cast<py::ssize_t>(records.size()); ++i) {
    view(i) = static_cast<T>(get(records[static_cast<std::size_t>(i)]));
  }
  return out;
}

inline py::dict request_columns(const std::vector<engine::RequestRecord>& r) {
  using R = engine::RequestRecord;
  py::dict d;
  d["id"] = column<std::int64_t>(r, [](const R& x) { return x.id; });
  d["tenant"] = column<std::int32_t>(r, [](const R& x) { return x.tenant; });
  d["replica"] = column<std::int32_t>(r, [](const R& x) { return x.replica; });
  d["arrival_s"] = column<double>(r, [](const R& x) { return x.arrival_s; });
  d["admitted_s"] = column<double>(r, [](const R& x) { return x.admitted_s; });
  d["first_token_s"] = column<double>(r, [](const R& x) { return x.first_token_s; });
  d["finish_s"] = column<double>(r, [](const R& x) { return x.finish_s; });
  d["input_tokens"] = column<std::int32_t>(r, [](const R& x) { return x.input_tokens; });
  d["output_tokens"] = column<std::int32_t>(r, [](const R& x) { return x.output_tokens; });
  d["preemptions"] = column<std::int32_t>(r, [](const R& x) { return x.preemptions; });
  d["warmup"] = column<bool>(r, [](const R& x) { return x.warmup; });
  py::list outcome(static_cast<py::ssize_t>(r.size()));  // completed / failed / timed_out / unfinished
  for (std::size_t i = 0; i < r.size(); ++i) outcome[i] = py::str(engine::outcome_name(r[i].outcome));
  d["outcome"] = outcome;
  d["retries"] = column<std::int32_t>(r, [](const R& x) { return x.retries; });
  return d;
}

inline py::dict iteration_columns(const std::vector<engine::IterationRecord>& r) {
  using I = engine::IterationRecord;
  py::dict d;
  d["start_s"] = column<double>(r, [](const I& x) { return x.start_s; });
  d["duration_s"] = column<double>(r, [](const I& x) { return x.duration_s; });
  d["replica"] = column<std::int32_t>(r, [](const I& x) { return x.replica; });
  d["virtual_engine"] = column<std::int32_t>(r, [](const I& x) { return x.virtual_engine; });
  d["prefill_tokens"] = column<std::int32_t>(r, [](const I& x) { return x.prefill_tokens; });
  d["prefill_seqs"] = column<std::int32_t>(r, [](const I& x) { return x.prefill_seqs; });
  d["decode_seqs"] = column<std::int32_t>(r, [](const I& x) { return x.decode_seqs; });
  d["waiting"] = column<std::int32_t>(r, [](const I& x) { return x.waiting; });
  d["kv_blocks_used"] = column<std::int64_t>(r, [](const I& x) { return x.kv_blocks_used; });
  return d;
}

}  // namespace llmsim::python
