// `hsched run --requests N --mode latency|throughput`: a stream of requests one by one, and the
// same requests pipelined through Executable::run_stream, timed and compared.
#pragma once

#include <string>
#include <vector>

#include "hsched/executor.h"
#include "hsched/model.h"
#include "hsched/status.h"

namespace hsched::cli {

inline constexpr int kMaxRequests = 100000;

struct RequestRuns {
  int requests = 0;
  bool throughput = false;      // the pipelined pass ran too
  double sequential_per_s = 0;  // requests / s, one run() at a time
  double pipelined_per_s = 0;   // requests / s through run_stream (throughput mode)
  double speedup = 0;           // pipelined_per_s / sequential_per_s (throughput mode)
  // The pipelined outputs against the one-by-one outputs of the same request: every byte equal,
  // and the largest difference of a floating-point element.
  bool identical = true;
  double max_abs_diff = 0;
  // The outputs of the base inputs (the last request that ran them), pipelined in throughput
  // mode: what --outputs writes.
  std::vector<Tensor> outputs;
  // With `keep_records`: the first kMaxKeptRecords records of each pass (for the trace).
  std::vector<RunRecord> sequential_records;
  std::vector<RunRecord> pipelined_records;
};

// Runs `requests` requests (1..kMaxRequests): request i's inputs are `inputs` when `repeat` or
// i == 0, else seeded_inputs(model, i). One by one with run(), then, when `throughput`, through
// run_stream(); in chunks of a few hundred requests so that memory stays bounded.
Result<RequestRuns> run_requests(Executable& exe, const Model& model,
                                 const std::vector<Tensor>& inputs, bool repeat, int requests,
                                 bool throughput, bool keep_records);

}  // namespace hsched::cli
