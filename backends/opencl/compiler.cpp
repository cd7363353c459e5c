#include "backends/opencl/compiler.h"

#include <cstdlib>
#include <sstream>
#include <utility>

#include "backends/opencl/device.h"

namespace hsched::opencl {
namespace {

constexpr int kBuildLogLines = 4;  // enough for the first error; the message stays one line

// The first non-empty lines of the device's build log, joined with " | " (one-line messages).
std::string build_log_head(const cl::Program& program, const cl::Device& device) {
  std::string log;
  if (program.getBuildInfo(device, CL_PROGRAM_BUILD_LOG, &log) != CL_SUCCESS) return "no log";
  std::istringstream lines(log);
  std::string line;
  std::string head;
  int count = 0;
  while (count < kBuildLogLines && std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r\0", 0, 4) == std::string::npos) continue;
    head += (count++ > 0 ? " | " : "") + line;
  }
  return head.empty() ? "empty log" : head;
}

int64_t build_delay_ms(const BuildRequest& request) {
  if (request.test_delay_ms >= 0) return request.test_delay_ms;
  const char* env = std::getenv(kBuildDelayEnv);
  if (env == nullptr || *env == '\0') return 0;
  char* end = nullptr;
  const long long value = std::strtoll(env, &end, 10);
  return end != env && value > 0 ? value : 0;
}

// A cached binary, built for `device`; nullopt when the driver refuses it (then: from source).
std::optional<cl::Program> program_from_binary(const cl::Context& context, const cl::Device& device,
                                               const ProgramCache::Binary& binary,
                                               const std::string& options) {
  cl_int error = CL_SUCCESS;
  cl::Program program(context, {device}, cl::Program::Binaries{binary}, nullptr, &error);
  if (error != CL_SUCCESS) return std::nullopt;
  if (program.build({device}, options.c_str()) != CL_SUCCESS) return std::nullopt;
  return program;
}

// Runs on a detached worker (run_with_deadline); owns copies (OpenCL retains) of what it uses.
Result<cl::Program> build_from_source(const std::shared_ptr<ProgramCache>& cache,
                                      const cl::Context& context, const cl::Device& device,
                                      const BuildRequest& request, const ProgramKey& key) {
  cl_int error = CL_SUCCESS;
  cl::Program program(context, request.source, false, &error);
  if (error != CL_SUCCESS) {
    return internal_error("opencl: clCreateProgramWithSource failed (error " +
                          std::to_string(error) + ")");
  }
  error = program.build({device}, request.options.c_str());
  if (error != CL_SUCCESS) {
    return internal_error("build_failed: clBuildProgram error " + std::to_string(error) + " on " +
                          key.device_name + ": " + build_log_head(program, device));
  }
  cache->record_built();
  if (const ProgramCache::Binary binary = program_binary(program); !binary.empty()) {
    cache->store(key, binary);
  }
  return program;
}

}  // namespace

ProgramCache::Binary program_binary(const cl::Program& program) {
  cl::Program::Binaries binaries;
  if (program.getInfo(CL_PROGRAM_BINARIES, &binaries) != CL_SUCCESS || binaries.size() != 1) {
    return {};
  }
  return std::move(binaries.front());
}

Compiler::Compiler(std::shared_ptr<ProgramCache> cache) : cache_(std::move(cache)) {}

Result<cl::Program> Compiler::build(const cl::Context& context, const cl::Device& device,
                                    const std::string& source, const std::string& options,
                                    int64_t deadline_ms) {
  BuildRequest request;
  request.source = source;
  request.options = options;
  request.deadline_ms = deadline_ms;
  return build(context, device, request);
}

// A cached binary's program (clBuildProgram of a binary still runs the driver's back end, and a
// driver may block in it as long as in a build) and a build from source both run on the worker,
// under the request's deadline.
Result<cl::Program> Compiler::build(const cl::Context& context, const cl::Device& device,
                                    const BuildRequest& request) {
  ProgramKey key = ProgramKey::for_device(device, request.source, request.options);
  return run_with_deadline<cl::Program>(
      [cache = cache_, context, device, request, key]() -> Result<cl::Program> {
        if (const int64_t delay = build_delay_ms(request); delay > 0) {  // a slow driver
          std::this_thread::sleep_for(std::chrono::milliseconds(delay));
        }
        if (const auto binary = cache->load(key)) {
          if (auto program = program_from_binary(context, device, *binary, request.options)) {
            cache->record_loaded();
            return std::move(*program);
          }
        }
        return build_from_source(cache, context, device, request, key);
      },
      request.deadline_ms,
      "program build on " + key.device_name + " (key " + key.digest() + ")");
}

}  // namespace hsched::opencl
