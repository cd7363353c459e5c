// The OpenCL device the runtime tests use: the first one enumerated (PoCL in CI).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <CL/cl_half.h>
#include <gtest/gtest.h>

#include "backends/opencl/device.h"
#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/runtime.h"
#include "support/temp_dir.h"

namespace hsched::opencl_test {

inline std::optional<opencl::DeviceInfo> first_device() {
  std::vector<opencl::DeviceInfo> devices = opencl::enumerate_devices();
  if (devices.empty()) return std::nullopt;
  return devices.front();
}

// The first device's runtime, its program cache in `cache_dir`; nullptr without a device (or,
// with a failure added, when it does not open).
// Every node of `graph` passes the backend's check_node (failures name the node).
inline void expect_every_node_accepted(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    EXPECT_FALSE(opencl::check_node(graph, node).has_value()) << node.name;
  }
}

inline std::shared_ptr<opencl::DeviceRuntime> first_runtime(const test::TempDir& cache_dir) {
  std::optional<opencl::DeviceInfo> info = first_device();
  if (!info) return nullptr;
  auto runtime = opencl::DeviceRuntime::open(
      *info, std::make_shared<opencl::ProgramCache>(cache_dir.path().string()));
  if (!runtime.is_ok()) {
    ADD_FAILURE() << runtime.status().message();
    return nullptr;
  }
  return *runtime;
}

// A fixture with the first OpenCL device's runtime, opened once for the suite (opening one
// builds its op programs: seconds on PoCL, about 14 s under ASan, where a test program runs as
// one process): for tests that compile programs on it and never read its cache. A test is
// skipped without a device.
class SuiteRuntimeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_dir_ = std::make_unique<test::TempDir>();
    runtime_ = first_runtime(*cache_dir_);
  }
  static void TearDownTestSuite() {
    runtime_.reset();
    cache_dir_.reset();
  }
  void SetUp() override {
    if (!runtime_) GTEST_SKIP() << "no OpenCL platform or device on this machine";
  }
  static inline std::unique_ptr<test::TempDir> cache_dir_;
  static inline std::shared_ptr<opencl::DeviceRuntime> runtime_;
};

// A fixture over the storage types: the first device and its op programs per storage, built once
// per suite (a PoCL build takes seconds), a queue per test, and host <-> device copies in the
// parameter's storage. Tests are skipped, never passed, without a device.
class StorageTest : public ::testing::TestWithParam<opencl::Storage> {
 protected:
  struct Device {
    cl::Context context;
    cl::Device device;
    std::map<opencl::Storage, std::unique_ptr<opencl::OpKernels>> kernels;
    test::TempDir cache_dir;
  };

  static void SetUpTestSuite() {
    std::optional<opencl::DeviceInfo> info = first_device();
    if (!info) return;
    device_ = new Device{cl::Context(info->device), info->device, {}, {}};
    opencl::Compiler compiler(
        std::make_shared<opencl::ProgramCache>(device_->cache_dir.path().string()));
    for (opencl::Storage storage : {opencl::Storage::kFloat32, opencl::Storage::kFloat16}) {
      auto kernels =
          opencl::OpKernels::create(device_->context, device_->device, storage, compiler, 300000);
      ASSERT_TRUE(kernels.is_ok()) << kernels.status().message();
      device_->kernels[storage] = std::move(*kernels);
    }
  }
  static void TearDownTestSuite() {
    delete device_;
    device_ = nullptr;
  }

  void SetUp() override {
    if (!device_) GTEST_SKIP() << "no OpenCL platform or device on this machine";
    ASSERT_TRUE(device_->kernels.count(GetParam())) << "op programs failed to build";
    queue_ = cl::CommandQueue(device_->context, device_->device);
  }

  const opencl::OpKernels& ops() const { return *device_->kernels.at(GetParam()); }
  bool half() const { return GetParam() == opencl::Storage::kFloat16; }
  // What the device holds of `v`: rounded to fp16 with fp16 storage.
  float round(float v) const {
    return half() ? cl_half_to_float(cl_half_from_float(v, CL_HALF_RTE)) : v;
  }

  // A new buffer holding `values` in the storage type (at least one element).
  cl::Buffer upload(const std::vector<float>& values) {
    const size_t bytes = std::max<size_t>(values.size(), 1) * opencl::storage_bytes(GetParam());
    cl::Buffer buffer(device_->context, CL_MEM_READ_WRITE, bytes);
    if (values.empty()) return buffer;
    if (half()) {
      std::vector<cl_half> halves;
      for (float v : values) halves.push_back(cl_half_from_float(v, CL_HALF_RTE));
      EXPECT_EQ(queue_.enqueueWriteBuffer(buffer, CL_TRUE, 0, bytes, halves.data()), CL_SUCCESS);
    } else {
      EXPECT_EQ(queue_.enqueueWriteBuffer(buffer, CL_TRUE, 0, bytes, values.data()), CL_SUCCESS);
    }
    return buffer;
  }

  // `count` elements of `buffer` as floats (a blocking read on this test's queue).
  std::vector<float> download(const cl::Buffer& buffer, int64_t count) {
    std::vector<float> values(static_cast<size_t>(count));
    if (count == 0) return values;
    const size_t bytes = values.size() * opencl::storage_bytes(GetParam());
    if (half()) {
      std::vector<cl_half> halves(values.size());
      EXPECT_EQ(queue_.enqueueReadBuffer(buffer, CL_TRUE, 0, bytes, halves.data()), CL_SUCCESS);
      for (size_t i = 0; i < values.size(); ++i) values[i] = cl_half_to_float(halves[i]);
    } else {
      EXPECT_EQ(queue_.enqueueReadBuffer(buffer, CL_TRUE, 0, bytes, values.data()), CL_SUCCESS);
    }
    return values;
  }

  static inline Device* device_ = nullptr;
  cl::CommandQueue queue_;
};

}  // namespace hsched::opencl_test

// Skips (never passes) the test when this machine has no OpenCL device.
#define HSCHED_REQUIRE_OPENCL_DEVICE(info)                                           \
  const std::optional<::hsched::opencl::DeviceInfo> info##_found =                   \
      ::hsched::opencl_test::first_device();                                         \
  if (!info##_found) GTEST_SKIP() << "no OpenCL platform or device on this machine"; \
  const ::hsched::opencl::DeviceInfo& info = *info##_found
