// Builds OpenCL programs under a deadline, through the program cache.
//
// build(): a cached binary for (device, driver, source, options) is loaded and built on the
// calling thread (fast: no front end). Otherwise the source is built on a worker thread and the
// caller waits at most the deadline. Past it the caller gets DeadlineExceeded
// ("compile_timeout: ...") and the worker carries on, detached: when it finishes it stores the
// binary, so the next process loads it. The worker owns (shared_ptr) everything it touches, so
// neither the Compiler nor the caller must outlive it, and the process never waits for it at
// exit.
//
// Threading: build() may be called from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/opencl/opencl.h"
#include "backends/opencl/cache.h"
#include "core/deadline.h"
#include "hsched/status.h"

namespace hsched::opencl {

// Test hook: milliseconds a build (from the cache or from source) sleeps first (a slow driver).
inline constexpr const char* kBuildDelayEnv = "HSCHED_OPENCL_TEST_BUILD_DELAY_MS";

struct BuildRequest {
  std::string source;   // OpenCL C
  std::string options;  // clBuildProgram options: "-cl-std=CL1.2 -D..."
  int64_t deadline_ms = kDefaultCompileDeadlineMs;
  // Test hook: a build (cached or not) first sleeps this long; < 0 reads
  // $HSCHED_OPENCL_TEST_BUILD_DELAY_MS (unset: no delay).
  int64_t test_delay_ms = -1;
};

class Compiler {
 public:
  // `cache` must not be null (a disabled cache is fine); it is shared with background builds.
  explicit Compiler(std::shared_ptr<ProgramCache> cache);

  // The program for `device` (one device of `context`), built.
  // Errors: DeadlineExceeded "compile_timeout: ..." past the deadline; Internal "build_failed:
  // ..." with the first lines of the build log; Internal naming the OpenCL call that failed.
  Result<cl::Program> build(const cl::Context& context, const cl::Device& device,
                            const BuildRequest& request);
  Result<cl::Program> build(const cl::Context& context, const cl::Device& device,
                            const std::string& source, const std::string& options,
                            int64_t deadline_ms);

  const std::shared_ptr<ProgramCache>& cache() const { return cache_; }

 private:
  std::shared_ptr<ProgramCache> cache_;
};

// The binary of a built single-device program (CL_PROGRAM_BINARIES); empty on failure.
ProgramCache::Binary program_binary(const cl::Program& program);

}  // namespace hsched::opencl
