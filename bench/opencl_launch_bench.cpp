// hsched_launch_bench: the host time of one clEnqueueNDRangeKernel on the first OpenCL device, by
// the kind of arguments the kernel takes (buffers, null buffers, scalars, a struct), each over
// batches of 60 launches of a tiny kernel on an in-order queue, as a replayed plan enqueues them.
// Prints one line per case: the median over 40 batches of the host time per launch, and of the
// whole batch until the queue drained. Run on the GPU machine (bench/gpu/README.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <CL/cl.h>

#include "opencl_bench_util.h"

namespace {

constexpr const char* kSource = R"CL(
typedef struct { int v[25]; } Shape;
__kernel void one(__global float* y) { y[get_global_id(0)] += 1.0f; }
__kernel void seven(__global float* a, __global float* b, __global float* c, __global float* d,
                    __global float* e, __global float* f, __global float* y) {
  if (a) y[get_global_id(0)] += 1.0f;
}
__kernel void with_struct(__global float* y, Shape s) { y[get_global_id(0)] += s.v[3]; }
__kernel void with_ints(__global float* y, int a0, int a1, int a2, int a3, int a4, int a5, int a6,
                        int a7, int a8, int a9, int a10, int a11, int a12, int a13, int a14,
                        int a15, int a16, int a17, int a18, int a19, int a20, int a21, int a22,
                        int a23, int a24) {
  y[get_global_id(0)] += a3;
}
)CL";

struct Shape {
  cl_int v[25];
};

using Clock = std::chrono::steady_clock;

}  // namespace

int main() {
  cl_device_id device = hsched::bench::first_opencl_device("hsched_launch_bench");
  if (device == nullptr) return 77;
  char name[256] = {}, driver[256] = {};
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
  clGetDeviceInfo(device, CL_DRIVER_VERSION, sizeof(driver) - 1, driver, nullptr);
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &error);
  const char* source = kSource;
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  if (error != CL_SUCCESS || clBuildProgram(program, 1, &device, "", nullptr, nullptr) != 0) {
    std::fprintf(stderr, "hsched_launch_bench: the program did not build\n");
    return 1;
  }
  std::vector<cl_mem> buffers;
  for (int i = 0; i < 7; ++i) {
    buffers.push_back(clCreateBuffer(context, CL_MEM_READ_WRITE, 1 << 16, nullptr, &error));
  }
  const auto kernel = [&](const char* kernel_name) {
    return clCreateKernel(program, kernel_name, &error);
  };
  cl_kernel one = kernel("one"), seven = kernel("seven"), seven_null = kernel("seven");
  cl_kernel with_struct = kernel("with_struct"), with_ints = kernel("with_ints");
  const cl_mem null_buffer = nullptr;
  clSetKernelArg(one, 0, sizeof(cl_mem), &buffers[0]);
  for (cl_uint i = 0; i < 7; ++i) {
    clSetKernelArg(seven, i, sizeof(cl_mem), &buffers[i]);
    const bool used = i == 0 || i == 6;
    clSetKernelArg(seven_null, i, sizeof(cl_mem), used ? &buffers[i] : &null_buffer);
  }
  const Shape shape{};
  clSetKernelArg(with_struct, 0, sizeof(cl_mem), &buffers[0]);
  clSetKernelArg(with_struct, 1, sizeof(shape), &shape);
  clSetKernelArg(with_ints, 0, sizeof(cl_mem), &buffers[0]);
  for (cl_uint i = 1; i <= 25; ++i) {
    const cl_int zero = 0;
    clSetKernelArg(with_ints, i, sizeof(zero), &zero);
  }
  struct Case {
    const char* what;
    cl_kernel kernel;
  };
  const std::vector<Case> cases = {{"1 buffer", one},
                                   {"7 buffers", seven},
                                   {"2 buffers and 5 null", seven_null},
                                   {"1 buffer and a 100-byte struct", with_struct},
                                   {"1 buffer and 25 ints", with_ints}};
  constexpr int kLaunches = 60, kBatches = 40;
  const size_t global = 256, local = 64;
  std::printf("device %s, driver %s: host us per launch (enqueue / until drained), %d launches\n",
              name, driver, kLaunches);
  for (const Case& c : cases) {
    std::vector<double> enqueue, drained;
    for (int batch = 0; batch < kBatches; ++batch) {
      clFinish(queue);
      const auto start = Clock::now();
      for (int i = 0; i < kLaunches; ++i) {
        clEnqueueNDRangeKernel(queue, c.kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
      }
      const auto enqueued = Clock::now();
      clFinish(queue);
      const auto done = Clock::now();
      enqueue.push_back(std::chrono::duration<double, std::micro>(enqueued - start).count() /
                        kLaunches);
      drained.push_back(std::chrono::duration<double, std::micro>(done - start).count() /
                        kLaunches);
    }
    std::printf("%-32s %6.2f / %6.2f\n", c.what, hsched::bench::median(enqueue),
                hsched::bench::median(drained));
  }
  for (cl_kernel k : {one, seven, seven_null, with_struct, with_ints}) clReleaseKernel(k);
  for (cl_mem b : buffers) clReleaseMemObject(b);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
