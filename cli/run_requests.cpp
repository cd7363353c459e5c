#include "cli/run_requests.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "cli/run_command.h"

namespace hsched::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Requests held at once: the inputs and outputs of one chunk. The pipeline drains at the end of
// each chunk, a cost of one request's latency per chunk.
constexpr int kChunk = 256;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Folds the difference between one request's two sets of outputs into `runs`.
void compare_outputs(const std::vector<Tensor>& a, const std::vector<Tensor>& b,
                     RequestRuns& runs) {
  if (a.size() != b.size()) {
    runs.identical = false;
    return;
  }
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].dtype() != b[k].dtype() || a[k].dims() != b[k].dims()) {
      runs.identical = false;
      continue;
    }
    const size_t bytes = static_cast<size_t>(a[k].elements()) * dtype_size(a[k].dtype());
    if (bytes == 0 || std::memcmp(a[k].raw(), b[k].raw(), bytes) == 0) continue;
    runs.identical = false;
    if (a[k].dtype() != DType::kF32) continue;
    const auto x = a[k].values<float>();
    const auto y = b[k].values<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      const double diff = std::abs(static_cast<double>(x[i]) - static_cast<double>(y[i]));
      if (!std::isnan(diff)) runs.max_abs_diff = std::max(runs.max_abs_diff, diff);
    }
  }
}

}  // namespace

Result<RequestRuns> run_requests(Executable& exe, const Model& model,
                                 const std::vector<Tensor>& inputs, bool repeat, int requests,
                                 bool throughput, bool keep_records) {
  if (requests < 1 || requests > kMaxRequests) {
    return invalid_argument("--requests must be in [1, " + std::to_string(kMaxRequests) + "]");
  }
  RequestRuns runs;
  runs.requests = requests;
  runs.throughput = throughput;
  const int last_base = repeat ? requests - 1 : 0;  // the last request with the base inputs
  double sequential_s = 0, pipelined_s = 0;
  for (int first = 0; first < requests; first += kChunk) {
    const int count = std::min(kChunk, requests - first);
    std::vector<std::vector<Tensor>> chunk;
    chunk.reserve(static_cast<size_t>(count));
    for (int i = first; i < first + count; ++i) {
      chunk.push_back(repeat || i == 0 ? inputs : seeded_inputs(model, i));
    }
    std::vector<std::vector<Tensor>> sequential;
    const auto start = Clock::now();
    for (const std::vector<Tensor>& request : chunk) {
      RunRecord record;
      HSCHED_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, exe.run(request, &record));
      sequential.push_back(std::move(outputs));
      if (keep_records && runs.sequential_records.size() < kMaxKeptRecords) {
        runs.sequential_records.push_back(std::move(record));
      }
    }
    sequential_s += seconds_since(start);
    if (!throughput) {
      if (last_base >= first && last_base < first + count) {
        runs.outputs = sequential[static_cast<size_t>(last_base - first)];
      }
      continue;
    }
    std::vector<RunRecord> records;
    const bool keep = keep_records && runs.pipelined_records.size() < kMaxKeptRecords;
    const auto stream_start = Clock::now();
    HSCHED_ASSIGN_OR_RETURN(auto pipelined, exe.run_stream(chunk, 0, keep ? &records : nullptr));
    pipelined_s += seconds_since(stream_start);
    if (pipelined.size() != chunk.size()) {
      return internal_error("run_stream returned " + std::to_string(pipelined.size()) +
                            " results for " + std::to_string(chunk.size()) + " requests");
    }
    for (size_t i = 0; i < chunk.size(); ++i) compare_outputs(pipelined[i], sequential[i], runs);
    if (last_base >= first && last_base < first + count) {
      runs.outputs = pipelined[static_cast<size_t>(last_base - first)];
    }
    for (RunRecord& record : records) {
      if (runs.pipelined_records.size() < kMaxKeptRecords) {
        runs.pipelined_records.push_back(std::move(record));
      }
    }
  }
  runs.sequential_per_s = sequential_s > 0 ? requests / sequential_s : 0;
  if (throughput) {
    runs.pipelined_per_s = pipelined_s > 0 ? requests / pipelined_s : 0;
    runs.speedup = runs.sequential_per_s > 0 ? runs.pipelined_per_s / runs.sequential_per_s : 0;
  }
  return runs;
}

}  // namespace hsched::cli
