// hsched_transfer_bench: the host time of a host <-> device copy on the first OpenCL device, by
// where the host bytes live: ordinary (pageable) memory, as a caller's tensor is, or a pinned
// buffer (CL_MEM_ALLOC_HOST_PTR, mapped once) that the bytes are first copied into or out of.
// Prints one line per size and direction: the median over 200 blocking copies of each way, in us.
// Run on the GPU machine (bench/gpu/README.md).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include <CL/cl.h>

#include "opencl_bench_util.h"

namespace {

using Clock = std::chrono::steady_clock;

double median_us(const std::function<void()>& copy) {
  constexpr int kWarmup = 10, kRuns = 200;
  for (int i = 0; i < kWarmup; ++i) copy();
  std::vector<double> us;
  for (int i = 0; i < kRuns; ++i) {
    const auto start = Clock::now();
    copy();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return hsched::bench::median(std::move(us));
}

}  // namespace

int main() {
  cl_device_id device = hsched::bench::first_opencl_device("hsched_transfer_bench");
  if (device == nullptr) return 77;
  char name[256] = {};
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &error);
  std::printf("device %s: us per blocking copy (median of 200)\n", name);
  std::printf("%10s  %-4s %10s %16s %14s\n", "bytes", "way", "pageable", "memcpy+pinned",
              "pinned alone");
  for (const size_t bytes :
       {size_t{4000}, size_t{131072}, size_t{602112}, size_t{786432}, size_t{4} << 20}) {
    std::vector<unsigned char> host(bytes, 1);
    cl_mem device_buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &error);
    cl_mem pinned =
        clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &error);
    void* mapped = clEnqueueMapBuffer(queue, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                      0, nullptr, nullptr, &error);
    if (error != CL_SUCCESS || mapped == nullptr) {
      std::fprintf(stderr, "hsched_transfer_bench: no pinned buffer of %zu bytes\n", bytes);
      return 1;
    }
    const double up_pageable = median_us([&] {
      clEnqueueWriteBuffer(queue, device_buffer, CL_TRUE, 0, bytes, host.data(), 0, nullptr,
                           nullptr);
    });
    const double up_staged = median_us([&] {
      std::memcpy(mapped, host.data(), bytes);
      clEnqueueWriteBuffer(queue, device_buffer, CL_TRUE, 0, bytes, mapped, 0, nullptr, nullptr);
    });
    const double up_pinned = median_us([&] {
      clEnqueueWriteBuffer(queue, device_buffer, CL_TRUE, 0, bytes, mapped, 0, nullptr, nullptr);
    });
    const double down_pageable = median_us([&] {
      clEnqueueReadBuffer(queue, device_buffer, CL_TRUE, 0, bytes, host.data(), 0, nullptr,
                          nullptr);
    });
    const double down_staged = median_us([&] {
      clEnqueueReadBuffer(queue, device_buffer, CL_TRUE, 0, bytes, mapped, 0, nullptr, nullptr);
      std::memcpy(host.data(), mapped, bytes);
    });
    const double down_pinned = median_us([&] {
      clEnqueueReadBuffer(queue, device_buffer, CL_TRUE, 0, bytes, mapped, 0, nullptr, nullptr);
    });
    std::printf("%10zu  %-4s %10.1f %16.1f %14.1f\n", bytes, "up", up_pageable, up_staged,
                up_pinned);
    std::printf("%10zu  %-4s %10.1f %16.1f %14.1f\n", bytes, "down", down_pageable, down_staged,
                down_pinned);
    clEnqueueUnmapMemObject(queue, pinned, mapped, 0, nullptr, nullptr);
    clFinish(queue);
    clReleaseMemObject(pinned);
    clReleaseMemObject(device_buffer);
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
