#include "backends/opencl/compiler.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

#include "backends/opencl/device.h"

namespace hsched::opencl {
namespace {

constexpr int kBuildLogLines = 4;  // enough for the first error; the message stays one line

ProgramKey program_key(const cl::Device& device, const BuildRequest& request) {
  return {device_string(device, CL_DEVICE_NAME), device_string(device, CL_DEVICE_VENDOR),
          device_string(device, CL_DRIVER_VERSION), request.source, request.options};
}

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

// What a source build hands back to whoever still waits for it.
struct BuildState {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::optional<Result<cl::Program>> result;
};

// Runs on the worker thread; owns copies (OpenCL retains) of everything it uses.
void build_from_source(std::shared_ptr<BuildState> state, std::shared_ptr<ProgramCache> cache,
                       cl::Context context, cl::Device device, BuildRequest request,
                       ProgramKey key) {
  if (const int64_t delay = build_delay_ms(request); delay > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
  }
  auto finish = [&](Result<cl::Program> result) {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->result = std::move(result);
    state->done = true;
    state->done_cv.notify_all();
  };
  cl_int error = CL_SUCCESS;
  cl::Program program(context, request.source, false, &error);
  if (error != CL_SUCCESS) {
    finish(internal_error("opencl: clCreateProgramWithSource failed (error " +
                          std::to_string(error) + ")"));
    return;
  }
  error = program.build({device}, request.options.c_str());
  if (error != CL_SUCCESS) {
    finish(internal_error("build_failed: clBuildProgram error " + std::to_string(error) + " on " +
                          key.device_name + ": " + build_log_head(program, device)));
    return;
  }
  cache->record_built();
  if (const ProgramCache::Binary binary = program_binary(program); !binary.empty()) {
    cache->store(key, binary);
  }
  finish(std::move(program));
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

Result<cl::Program> Compiler::build(const cl::Context& context, const cl::Device& device,
                                    const BuildRequest& request) {
  ProgramKey key = program_key(device, request);
  if (const auto binary = cache_->load(key)) {
    if (auto program = program_from_binary(context, device, *binary, request.options)) {
      cache_->record_loaded();
      return std::move(*program);
    }
  }
  auto state = std::make_shared<BuildState>();
  try {
    std::thread(build_from_source, state, cache_, context, device, request, key).detach();
  } catch (const std::system_error& error) {  // no thread to be had (resource limits)
    return internal_error("opencl: cannot start a build thread for " + key.device_name + ": " +
                          error.what());
  }
  std::unique_lock<std::mutex> lock(state->mutex);
  const bool finished = state->done_cv.wait_for(
      lock, std::chrono::milliseconds(std::max<int64_t>(0, request.deadline_ms)),
      [&] { return state->done; });
  if (!finished) {
    return Status(ErrorCode::kDeadlineExceeded,
                  "compile_timeout: program build on " + key.device_name + " (key " + key.digest() +
                      ") exceeded the " + std::to_string(request.deadline_ms) +
                      " ms deadline; it finishes in the background to fill the cache");
  }
  return std::move(*state->result);
}

}  // namespace hsched::opencl
