// What the OpenCL C-API benches share (hsched_launch_bench, hsched_transfer_bench): the device
// they measure and the median of their samples.
#pragma once

#include <algorithm>
#include <cstdio>
#include <vector>

#include <CL/cl.h>

namespace hsched::bench {

// The first device of the first platform; null (named on stderr as `bench`'s) when there is none.
inline cl_device_id first_opencl_device(const char* bench) {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) {
    std::fprintf(stderr, "%s: no OpenCL device\n", bench);
    return nullptr;
  }
  return device;
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace hsched::bench
