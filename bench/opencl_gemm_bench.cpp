// hsched_gemm_bench M N K [ROUNDS]: fp32 MatMul [M, K] x [K, N] through hsched's OpenCL op layer
// (backends/opencl/kernels/ops.h enqueue_matmul, i.e. what a MatMul node costs the backend), for issue 5's
// GEMM goal (>= 50% of PyTorch's fp32 throughput at 4096^3; bench/gpu/compare.sh pairs the two).
//
// Device: the first OpenCL device of type GPU, else the first device ($HSCHED_GEMM_DEVICE = an
// index into enumerate_devices() overrides). Protocol: OpKernels::create (through the program
// cache, as `hsched run` does), one call timed alone (first_call_ms: CLBlast's kernel build plus
// the run), then ROUNDS (default 20) timed calls, each followed by finish(): the wall time an
// application sees per MatMul, comparable with a torch.mm timed with torch.cuda.synchronize().
// A sample of output elements is checked against a double-precision dot product on the host.
//
// Prints one JSON object: device, platform, m, n, k, rounds, median_ms, min_ms, max_ms, tflops
// (2*M*N*K / median, 1e12 FLOP/s), create_ms, first_call_ms, max_rel_err. Exit 1 with
// {"error": ...} on failure. Either is one line. Not a Google Benchmark program: it runs on the
// GPU machine from a bundle (bench/gpu/README.md) and its output is parsed by a script.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/opencl/compiler.h"
#include "backends/opencl/device.h"
#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/cache.h"

namespace hsched::opencl {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kDefaultRounds = 20;
constexpr int kCheckedElements = 64;
// A 4096^3 fp32 GEMM's rounding error relative to the sum of |products|: well under 1e-4.
constexpr double kMaxRelErr = 1e-4;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Args {
  int64_t m = 0, n = 0, k = 0;
  int rounds = kDefaultRounds;
};

Result<Args> parse_args(int argc, char** argv) {
  if (argc != 4 && argc != 5) return invalid_argument("usage: hsched_gemm_bench M N K [ROUNDS]");
  Args args;
  int64_t* dims[] = {&args.m, &args.n, &args.k};
  for (int i = 0; i < 3; ++i) {
    *dims[i] = std::atoll(argv[i + 1]);
    // 2^15 keeps each operand under 4 GiB of fp32 and the sizes inside CLBlast's int range.
    if (*dims[i] < 1 || *dims[i] > 32768)
      return invalid_argument(std::string("dimension '") + argv[i + 1] + "' not in [1, 32768]");
  }
  if (argc == 5) {
    args.rounds = std::atoi(argv[4]);
    if (args.rounds < 1 || args.rounds > 10000)
      return invalid_argument(std::string("ROUNDS '") + argv[4] + "' not in [1, 10000]");
  }
  return args;
}

// The device to measure: $HSCHED_GEMM_DEVICE, else the first GPU, else the first device.
Result<DeviceInfo> pick_device() {
  std::vector<DeviceInfo> devices = enumerate_devices();
  if (devices.empty()) return Status(ErrorCode::kUnavailable, "no OpenCL device on this machine");
  if (const char* index = std::getenv("HSCHED_GEMM_DEVICE")) {
    const int i = std::atoi(index);
    if (i < 0 || i >= static_cast<int>(devices.size()))
      return invalid_argument(std::string("HSCHED_GEMM_DEVICE=") + index + " out of range");
    return devices[static_cast<size_t>(i)];
  }
  for (const DeviceInfo& info : devices) {
    if (info.type & CL_DEVICE_TYPE_GPU) return info;
  }
  return devices.front();
}

Status check_cl(cl_int error, const char* what) {
  if (error == CL_SUCCESS) return Status::ok();
  return internal_error(std::string("gemm bench: ") + what + " failed (" + std::to_string(error) +
                        ")");
}

Result<cl::Buffer> upload(const cl::Context& context, std::vector<float>& host) {
  cl_int error = CL_SUCCESS;
  cl::Buffer buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(float),
                    host.data(), &error);
  HSCHED_RETURN_IF_ERROR(check_cl(error, "clCreateBuffer"));
  return buffer;
}

// One MatMul, waited for; its wall time in ms.
Result<double> timed_matmul(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& a,
                            const cl::Buffer& b, cl::Buffer& y, const Args& args) {
  const auto start = Clock::now();
  HSCHED_RETURN_IF_ERROR(
      enqueue_matmul(ops, queue, a, {args.m, args.k}, b, {args.k, args.n}, y).status());
  HSCHED_RETURN_IF_ERROR(check_cl(queue.finish(), "clFinish"));
  return ms_since(start);
}

// Worst |y - ref| / sum |a_ik b_kj| over a fixed sample of elements (the first included).
double max_relative_error(const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>& y, const Args& args) {
  std::mt19937_64 rng(7);
  double worst = 0;
  for (int s = 0; s < kCheckedElements; ++s) {
    const int64_t i = s == 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(args.m));
    const int64_t j = s == 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(args.n));
    double sum = 0, magnitude = 0;
    for (int64_t p = 0; p < args.k; ++p) {
      const double product = double{a[static_cast<size_t>(i * args.k + p)]} *
                             double{b[static_cast<size_t>(p * args.n + j)]};
      sum += product;
      magnitude += std::abs(product);
    }
    const double got = y[static_cast<size_t>(i * args.n + j)];
    worst = std::max(worst, std::abs(got - sum) / std::max(magnitude, 1e-30));
  }
  return worst;
}

Result<nlohmann::json> run(const Args& args) {
  HSCHED_ASSIGN_OR_RETURN(DeviceInfo info, pick_device());
  cl::Context context(info.device);
  cl::CommandQueue queue(context, info.device);  // in-order, as enqueue_matmul requires

  const auto create_start = Clock::now();
  Compiler compiler(std::make_shared<ProgramCache>());  // $HSCHED_CACHE_DIR or ~/.cache/hsched
  HSCHED_ASSIGN_OR_RETURN(std::unique_ptr<OpKernels> ops,
                          OpKernels::create(context, info.device, Storage::kFloat32, compiler));
  const double create_ms = ms_since(create_start);

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(args.m * args.k));
  std::vector<float> b(static_cast<size_t>(args.k * args.n));
  std::vector<float> y(static_cast<size_t>(args.m * args.n), 0.0f);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer a_buffer, upload(context, a));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer b_buffer, upload(context, b));
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer y_buffer, upload(context, y));

  HSCHED_ASSIGN_OR_RETURN(double first_call_ms,
                          timed_matmul(*ops, queue, a_buffer, b_buffer, y_buffer, args));
  std::vector<double> times;
  for (int r = 0; r < args.rounds; ++r) {
    HSCHED_ASSIGN_OR_RETURN(double ms,
                            timed_matmul(*ops, queue, a_buffer, b_buffer, y_buffer, args));
    times.push_back(ms);
  }
  HSCHED_RETURN_IF_ERROR(check_cl(
      queue.enqueueReadBuffer(y_buffer, CL_TRUE, 0, y.size() * sizeof(float), y.data()),
      "clEnqueueReadBuffer"));
  const double rel_err = max_relative_error(a, b, y, args);
  if (!(rel_err <= kMaxRelErr)) {
    return internal_error("gemm bench: wrong result, max relative error " +
                          std::to_string(rel_err));
  }

  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const size_t half = sorted.size() / 2;
  const double median =
      sorted.size() % 2 ? sorted[half] : 0.5 * (sorted[half - 1] + sorted[half]);
  const double flop = 2.0 * static_cast<double>(args.m) * static_cast<double>(args.n) *
                      static_cast<double>(args.k);
  nlohmann::json report = {{"device", info.name},
                           {"platform", info.platform_name},
                           {"driver", info.driver_version},
                           {"m", args.m},
                           {"n", args.n},
                           {"k", args.k},
                           {"rounds", args.rounds},
                           {"median_ms", median},
                           {"min_ms", sorted.front()},
                           {"max_ms", sorted.back()},
                           {"tflops", flop / (median * 1e-3) / 1e12},
                           {"create_ms", create_ms},
                           {"first_call_ms", first_call_ms},
                           {"max_rel_err", rel_err}};
  return report;
}

}  // namespace
}  // namespace hsched::opencl

int main(int argc, char** argv) {
  auto report = [&]() -> hsched::Result<nlohmann::json> {
    HSCHED_ASSIGN_OR_RETURN(hsched::opencl::Args args, hsched::opencl::parse_args(argc, argv));
    return hsched::opencl::run(args);
  }();
  if (!report.is_ok()) {
    std::cout << nlohmann::json{{"error", report.status().message()}}.dump() << "\n";
    return 1;
  }
  std::cout << report->dump() << "\n";  // one line: scripts read one object a line
  return 0;
}
