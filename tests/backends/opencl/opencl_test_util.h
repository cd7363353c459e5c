// The OpenCL device the runtime tests use: the first one enumerated (PoCL in CI).
#pragma once

#include <optional>

#include <gtest/gtest.h>

#include "backends/opencl/device.h"

namespace hsched::opencl_test {

inline std::optional<opencl::DeviceInfo> first_device() {
  std::vector<opencl::DeviceInfo> devices = opencl::enumerate_devices();
  if (devices.empty()) return std::nullopt;
  return devices.front();
}

}  // namespace hsched::opencl_test

// Skips (never passes) the test when this machine has no OpenCL device.
#define HSCHED_REQUIRE_OPENCL_DEVICE(info)                                           \
  const std::optional<::hsched::opencl::DeviceInfo> info##_found =                   \
      ::hsched::opencl_test::first_device();                                         \
  if (!info##_found) GTEST_SKIP() << "no OpenCL platform or device on this machine"; \
  const ::hsched::opencl::DeviceInfo& info = *info##_found
