// The compiler on a real OpenCL device (PoCL in CI): the cache across compiler objects (as
// across processes), corrupt entries rebuilt, build errors, and the deadline. PoCL builds take
// seconds, so the sources are tiny and distinct per test (a shared key would hide a build).
#include "backends/opencl/compiler.h"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "backends/opencl/opencl_test_util.h"
#include "support/temp_dir.h"

namespace hsched::opencl {
namespace {
namespace fs = std::filesystem;

constexpr const char* kScaleSource =
    "__kernel void scale(__global float* x, float a) { x[get_global_id(0)] *= a; }\n";
constexpr const char* kOptions = "-cl-std=CL1.2";

// Runs `scale` from `program` on 4 floats and returns them.
std::vector<float> run_scale(const cl::Context& context, const cl::Device& device,
                             const cl::Program& program, float factor) {
  std::vector<float> data = {1, 2, 3, 4};
  cl_int error = CL_SUCCESS;
  cl::Kernel kernel(program, "scale", &error);
  EXPECT_EQ(error, CL_SUCCESS);
  cl::Buffer buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.size() * sizeof(float),
                    data.data(), &error);
  EXPECT_EQ(error, CL_SUCCESS);
  cl::CommandQueue queue(context, device, 0, &error);
  EXPECT_EQ(error, CL_SUCCESS);
  EXPECT_EQ(kernel.setArg(0, buffer), CL_SUCCESS);
  EXPECT_EQ(kernel.setArg(1, factor), CL_SUCCESS);
  EXPECT_EQ(queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(data.size())),
            CL_SUCCESS);
  EXPECT_EQ(queue.enqueueReadBuffer(buffer, CL_TRUE, 0, data.size() * sizeof(float), data.data()),
            CL_SUCCESS);
  return data;
}

TEST(OpenClCompilerTest, SecondCompilerLoadsFromTheCache) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const cl::Context context(info.device);
  hsched::test::TempDir dir;
  {
    Compiler compiler(std::make_shared<ProgramCache>(dir.path().string()));
    auto program = compiler.build(context, info.device, kScaleSource, kOptions, 60000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    EXPECT_EQ(compiler.cache()->programs_built(), 1);
    EXPECT_EQ(compiler.cache()->programs_loaded(), 0);
    EXPECT_EQ(run_scale(context, info.device, *program, 2), (std::vector<float>{2, 4, 6, 8}));
  }
  // A new cache object on the same directory: what a second process sees.
  Compiler compiler(std::make_shared<ProgramCache>(dir.path().string()));
  auto program = compiler.build(context, info.device, kScaleSource, kOptions, 60000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ(compiler.cache()->programs_built(), 0);
  EXPECT_EQ(compiler.cache()->programs_loaded(), 1);
  EXPECT_EQ(run_scale(context, info.device, *program, 3), (std::vector<float>{3, 6, 9, 12}));

  // A corrupted entry is not trusted: it is rebuilt from source (and rewritten).
  int entries = 0;
  fs::path entry;
  for (const auto& item : fs::directory_iterator(dir.path())) {
    entry = item.path();
    ++entries;
  }
  ASSERT_EQ(entries, 1);
  std::string bytes;
  {
    std::ifstream in(entry, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), sizeof(CacheEntryHeader) + 16);
  bytes[bytes.size() - 8] ^= 0x40;
  hsched::test::write_file(entry, bytes);
  Compiler rebuilding(std::make_shared<ProgramCache>(dir.path().string()));
  program = rebuilding.build(context, info.device, kScaleSource, kOptions, 60000);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ(rebuilding.cache()->programs_built(), 1);
  EXPECT_EQ(rebuilding.cache()->programs_loaded(), 0);
  EXPECT_EQ(run_scale(context, info.device, *program, 2), (std::vector<float>{2, 4, 6, 8}));
}

TEST(OpenClCompilerTest, BuildErrorCarriesTheBuildLog) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const cl::Context context(info.device);
  hsched::test::TempDir dir;
  Compiler compiler(std::make_shared<ProgramCache>(dir.path().string()));
  auto program =
      compiler.build(context, info.device,
                     "__kernel void broken(__global float* x) { x[0] = y; }\n", kOptions, 60000);
  ASSERT_FALSE(program.is_ok());
  EXPECT_EQ(program.status().code(), ErrorCode::kInternal);
  const std::string& message = program.status().message();
  EXPECT_EQ(message.rfind("build_failed: ", 0), 0u) << message;
  EXPECT_NE(message.find('y'), std::string::npos) << message;  // the log names the culprit
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(compiler.cache()->programs_built(), 0);
}

// Returns the status of a build delayed 3 s under a 500 ms deadline, and checks it came back
// within about a second. The cache directory is unusable: the build left running in the
// background must not write outside the test.
Status delayed_build(const DeviceInfo& info, const BuildRequest& request) {
  const cl::Context context(info.device);
  Compiler compiler(std::make_shared<ProgramCache>("/proc/hsched-no-cache"));
  const auto start = std::chrono::steady_clock::now();
  auto program = compiler.build(context, info.device, request);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(1500));
  return program.status();
}

TEST(OpenClCompilerTest, DeadlineReturnsCompileTimeout) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  BuildRequest request;
  request.source = "__kernel void late(__global float* x) { x[0] = 1.0f; }\n";
  request.options = kOptions;
  request.deadline_ms = 500;
  request.test_delay_ms = 3000;
  const Status status = delayed_build(info, request);
  EXPECT_EQ(status.code(), ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(status.message().rfind("compile_timeout: ", 0), 0u) << status.message();
}

TEST(OpenClCompilerTest, DeadlineDelayFromTheEnvironment) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  ::setenv(kBuildDelayEnv, "3000", 1);
  BuildRequest request;
  request.source = "__kernel void later(__global float* x) { x[0] = 2.0f; }\n";
  request.options = kOptions;
  request.deadline_ms = 500;
  const Status status = delayed_build(info, request);
  ::unsetenv(kBuildDelayEnv);
  EXPECT_EQ(status.code(), ErrorCode::kDeadlineExceeded) << status.message();
}

TEST(OpenClCompilerTest, BuildPastTheDeadlineStillFillsTheCache) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const cl::Context context(info.device);
  hsched::test::TempDir dir;
  BuildRequest request;
  request.source = "__kernel void filled(__global float* x) { x[0] = 3.0f; }\n";
  request.options = kOptions;
  request.deadline_ms = 50;
  request.test_delay_ms = 300;
  auto cache = std::make_shared<ProgramCache>(dir.path().string());
  {
    Compiler compiler(cache);
    auto program = compiler.build(context, info.device, request);
    ASSERT_EQ(program.status().code(), ErrorCode::kDeadlineExceeded);
  }  // the compiler is gone; its worker is not
  const fs::path entry =
      cache->entry_path(ProgramKey::for_device(info.device, request.source, request.options));
  // Waits for the background build (seconds on PoCL); a generous bound, not a timing check.
  for (int i = 0; i < 600 && cache->programs_built() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(cache->programs_built(), 1);
  for (int i = 0; i < 50 && !fs::exists(entry); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(fs::exists(entry));
  request.test_delay_ms = 0;  // the delay applies to cached loads too
  // Not a timing check: background builds of earlier tests in this process may still be running.
  request.deadline_ms = 60000;
  Compiler second(std::make_shared<ProgramCache>(dir.path().string()));
  auto program = second.build(context, info.device, request);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  EXPECT_EQ(second.cache()->programs_loaded(), 1);
  EXPECT_EQ(second.cache()->programs_built(), 0);
}

}  // namespace
// A cached binary's program is built on the worker too: a driver that blocks while loading it
// does not hold the caller past the deadline.
TEST(OpenClCompilerTest, CachedLoadPastTheDeadlineReturnsCompileTimeout) {
  HSCHED_REQUIRE_OPENCL_DEVICE(info);
  const cl::Context context(info.device);
  hsched::test::TempDir dir;
  BuildRequest request;
  request.source = "__kernel void cached(__global float* x) { x[0] = 4.0f; }\n";
  request.options = kOptions;
  request.deadline_ms = 120000;
  {
    Compiler warm(std::make_shared<ProgramCache>(dir.path().string()));
    ASSERT_TRUE(warm.build(context, info.device, request).is_ok());
    ASSERT_EQ(warm.cache()->programs_built(), 1);
  }
  request.deadline_ms = 500;
  request.test_delay_ms = 3000;
  Compiler compiler(std::make_shared<ProgramCache>(dir.path().string()));
  const auto start = std::chrono::steady_clock::now();
  auto program = compiler.build(context, info.device, request);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  EXPECT_EQ(program.status().code(), ErrorCode::kDeadlineExceeded) << program.status().message();
}

}  // namespace hsched::opencl
