#include <mutex>
#include <utility>

#include "scheduler/runtime/compile.h"

namespace hsched::runtime {
namespace {

std::mutex& hook_mutex() {
  static std::mutex mutex;
  return mutex;
}

DeviceOutputHook& hook() {
  static DeviceOutputHook installed;
  return installed;
}

}  // namespace

ScopedDeviceOutputHook::ScopedDeviceOutputHook(DeviceOutputHook installed) {
  std::lock_guard<std::mutex> lock(hook_mutex());
  hook() = std::move(installed);
}

ScopedDeviceOutputHook::~ScopedDeviceOutputHook() {
  std::lock_guard<std::mutex> lock(hook_mutex());
  hook() = nullptr;
}

DeviceOutputHook installed_device_output_hook() {
  std::lock_guard<std::mutex> lock(hook_mutex());
  return hook();
}

}  // namespace hsched::runtime
