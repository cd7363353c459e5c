// compile() on hsched's graph IR, for hsched's own code and tests (the public call,
// include/hsched/executor.h, takes a Model and forwards here), and the executor's test hook.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "graph/graph.h"
#include "hsched/executor.h"

namespace hsched {

// As the public compile(); `graph` must outlive the Executable.
Result<std::unique_ptr<Executable>> compile(const Graph& graph, const Plan& plan,
                                            const ExecutorOptions& options = {});

}  // namespace hsched

namespace hsched::runtime {

// Called with each non-CPU partition's outputs before they are verified or used (tests plant
// wrong results through it); an error it returns counts as the device's (tests fail a device
// through it). Runs on the partition's device thread.
using DeviceOutputHook = std::function<Status(int partition, std::vector<Tensor>& outputs)>;

// Test hook: every Executable compiled while this object lives calls `hook` (each keeps its own
// copy, so it may outlive the guard). Users never set it; tests and the soak driver do. One at
// a time per process.
class ScopedDeviceOutputHook {
 public:
  explicit ScopedDeviceOutputHook(DeviceOutputHook hook);
  ~ScopedDeviceOutputHook();
  ScopedDeviceOutputHook(const ScopedDeviceOutputHook&) = delete;
  ScopedDeviceOutputHook& operator=(const ScopedDeviceOutputHook&) = delete;
};

// The hook installed now; empty when none.
DeviceOutputHook installed_device_output_hook();

}  // namespace hsched::runtime
