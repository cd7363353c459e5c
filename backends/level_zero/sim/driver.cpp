// zeInit, the driver, the device and contexts of the simulated NPU driver.
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "backends/level_zero/sim/api.h"
#include "backends/level_zero/sim/sim.h"

namespace hsched::zesim {
namespace {

// Sets Sim::shutting_down while the process exits (static destructors run), so that a build
// sleeping in pfnCreate gives up instead of compiling against torn-down libraries.
struct ExitNotice {
  ~ExitNotice() { Sim::get().shutting_down = true; }
} exit_notice;

template <size_t N>
void copy_name(char (&dst)[N], const char* src) {
  std::strncpy(dst, src, N - 1);
  dst[N - 1] = '\0';
}

// The uuid of the simulated device: "hsched" + vendor and device id + "npu".
void fill_device_uuid(uint8_t (&id)[ZE_MAX_DEVICE_UUID_SIZE]) {
  static constexpr uint8_t kUuid[ZE_MAX_DEVICE_UUID_SIZE] = {
      'h', 's', 'c', 'h', 'e', 'd', 0x86, 0x80, 0x1D, 0x7D, 's', 'i', 'm', 'n', 'p', 'u'};
  std::memcpy(id, kUuid, sizeof(kUuid));
}

bool lost() { return Sim::get().device_lost.load(); }

bool ready() {
  Sim& sim = Sim::get();
  std::lock_guard lock(sim.mutex);
  return sim.initialized;
}

}  // namespace

Sim& Sim::get() {
  static Sim* const sim = new Sim();  // never destroyed (see sim.h)
  return *sim;
}

void FreeDeleter::operator()(void* p) const { std::free(p); }

Context::~Context() {
  Sim& sim = Sim::get();
  uint64_t device_bytes = 0;
  for (const auto& [base, allocation] : allocations)
    if (allocation.type != ZE_MEMORY_TYPE_HOST) device_bytes += allocation.size;
  std::lock_guard lock(sim.mutex);
  sim.device_bytes -= std::min(sim.device_bytes, device_bytes);
}

ze_result_t init(ze_init_flags_t flags) {
  if (flags & ~static_cast<ze_init_flags_t>(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  // A GPU-only initialization has nothing to find here.
  if ((flags & ZE_INIT_FLAG_GPU_ONLY) && !(flags & ZE_INIT_FLAG_VPU_ONLY))
    return ZE_RESULT_ERROR_UNINITIALIZED;
  Sim& sim = Sim::get();
  std::lock_guard lock(sim.mutex);
  if (!sim.initialized) {
    const char* spec = std::getenv(kFaultsEnv);
    sim.faults = parse_faults(spec ? spec : "", std::cerr);
    sim.initialized = true;
  }
  return sim.device_lost ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

ze_result_t driver_get(uint32_t* count, ze_driver_handle_t* drivers) {
  if (!ready()) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (*count == 0 || drivers == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  drivers[0] = Sim::get().driver_handle();
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t* version) {
  if (!is_driver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (version == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  *version = ZE_API_VERSION_CURRENT;
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t* properties) {
  if (!is_driver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  static constexpr uint8_t kUuid[ZE_MAX_DRIVER_UUID_SIZE] = {'h', 's', 'c', 'h', 'e', 'd', '-', 'z',
                                                             'e', '-', 's', 'i', 'm', 0,   0,   1};
  std::memcpy(properties->uuid.id, kUuid, sizeof(kUuid));
  // The release the simulated driver behaves as, as ZE_MAKE_VERSION(major, minor) (Intel's
  // driver reports a build number here; hsched only keys its cache with it).
  const Faults& faults = Sim::get().faults;
  properties->driverVersion = ZE_MAKE_VERSION(static_cast<uint32_t>(faults.driver_major),
                                              static_cast<uint32_t>(faults.driver_minor));
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get_ipc_properties(ze_driver_handle_t driver,
                                      ze_driver_ipc_properties_t* properties) {
  if (!is_driver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  properties->flags = 0;  // no IPC
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get_extension_properties(ze_driver_handle_t driver, uint32_t* count,
                                            ze_driver_extension_properties_t* properties) {
  if (!is_driver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (*count == 0 || properties == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  copy_name(properties[0].name, ZE_GRAPH_EXT_NAME);
  properties[0].version = ZE_GRAPH_EXT_VERSION_1_4;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t driver_get_extension_function_address(ze_driver_handle_t driver, const char* name,
                                                  void** address) {
  if (!is_driver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (name == nullptr || address == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  // The extension's "function address" is its table, as Intel's NPU driver hands it out.
  if (std::strcmp(name, ZE_GRAPH_EXT_NAME) != 0) {
    *address = nullptr;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  *address = const_cast<ze_graph_dditable_ext_t*>(&graph_table());
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get(ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices) {
  if (!is_driver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (*count == 0 || devices == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  devices[0] = Sim::get().device_handle();
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_sub_devices(ze_device_handle_t device, uint32_t* count,
                                   ze_device_handle_t* /*sub_devices*/) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  *count = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_properties(ze_device_handle_t device, ze_device_properties_t* properties) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (properties->stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES &&
      properties->stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2)
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  properties->type = ZE_DEVICE_TYPE_VPU;
  properties->vendorId = kVendorId;
  properties->deviceId = kDeviceId;
  properties->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
  properties->subdeviceId = 0;
  properties->coreClockRate = kCoreClockMhz;
  properties->maxMemAllocSize = kMaxAllocBytes;
  properties->maxHardwareContexts = 1;
  properties->maxCommandQueuePriority = 0;
  properties->numThreadsPerEU = 1;
  properties->physicalEUSimdWidth = 0;  // no EUs: a neural compute engine per tile
  properties->numEUsPerSubslice = 1;
  properties->numSubslicesPerSlice = 1;
  properties->numSlices = kTiles;
  // Timestamps count nanoseconds: 1 ns per tick, or 1e9 ticks/s with the 1.2 structure type.
  properties->timerResolution =
      properties->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? 1000000000u : 1u;
  properties->timestampValidBits = 64;
  properties->kernelTimestampValidBits = 64;
  fill_device_uuid(properties->uuid.id);
  copy_name(properties->name, kDeviceName);
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_compute_properties(ze_device_handle_t device,
                                          ze_device_compute_properties_t* properties) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  // No kernels run here (graphs only): a single work item per group.
  properties->maxTotalGroupSize = 1;
  properties->maxGroupSizeX = properties->maxGroupSizeY = properties->maxGroupSizeZ = 1;
  properties->maxGroupCountX = properties->maxGroupCountY = properties->maxGroupCountZ = 1;
  properties->maxSharedLocalMemory = kScratchpadBytes;
  properties->numSubGroupSizes = 0;
  std::memset(properties->subGroupSizes, 0, sizeof(properties->subGroupSizes));
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_module_properties(ze_device_handle_t device,
                                         ze_device_module_properties_t* properties) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  properties->spirvVersionSupported = 0;  // no SPIR-V modules
  properties->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_DP4A;
  properties->fp16flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_INF_NAN;
  properties->fp32flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_INF_NAN;
  properties->fp64flags = 0;
  properties->maxArgumentsSize = 0;
  properties->printfBufferSize = 0;
  std::memset(properties->nativeKernelSupported.id, 0,
              sizeof(properties->nativeKernelSupported.id));
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_command_queue_group_properties(
    ze_device_handle_t device, uint32_t* count, ze_command_queue_group_properties_t* properties) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (*count == 0 || properties == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  properties[0].flags =
      ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
  properties[0].maxMemoryFillPatternSize = 0;
  properties[0].numQueues = 1;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_memory_properties(ze_device_handle_t device, uint32_t* count,
                                         ze_device_memory_properties_t* properties) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (*count == 0 || properties == nullptr) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  properties[0].flags = 0;
  properties[0].maxClockRate = kMemoryClockMhz;
  properties[0].maxBusWidth = kMemoryBusWidth;
  properties[0].totalSize = kMemoryBytes;
  copy_name(properties[0].name, "LPDDR5x (shared with the host)");
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_memory_access_properties(ze_device_handle_t device,
                                                ze_device_memory_access_properties_t* properties) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (properties == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  const ze_memory_access_cap_flags_t rw = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
  properties->hostAllocCapabilities = rw;
  properties->deviceAllocCapabilities = rw;
  properties->sharedSingleDeviceAllocCapabilities = rw;
  properties->sharedCrossDeviceAllocCapabilities = 0;
  properties->sharedSystemAllocCapabilities = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t device_get_status(ze_device_handle_t device) {
  if (!is_device(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return lost() ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

ze_result_t context_create(ze_driver_handle_t driver, const ze_context_desc_t* desc,
                           ze_context_handle_t* context) {
  if (!is_driver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != ZE_STRUCTURE_TYPE_CONTEXT_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->flags & ~static_cast<ze_context_flags_t>(ZE_CONTEXT_FLAG_TBD))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
  *context = reinterpret_cast<ze_context_handle_t>(Sim::get().add(std::make_unique<Context>()));
  return ZE_RESULT_SUCCESS;
}

ze_result_t context_destroy(ze_context_handle_t handle) {
  Sim& sim = Sim::get();
  std::unique_ptr<Object> taken;
  {
    std::lock_guard lock(sim.mutex);
    Context* context = sim.find_locked<Context>(handle);
    if (context == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    // Everything created in the context must be destroyed first.
    const bool in_use = sim.any_locked([&](const Object& o) {
      switch (o.kind) {
        case Kind::kCommandQueue:
          return static_cast<const CommandQueue&>(o).context() == context;
        case Kind::kCommandList:
          return static_cast<const CommandList&>(o).context == context;
        case Kind::kEventPool:
          return static_cast<const EventPool&>(o).context == context;
        case Kind::kGraph:
          return static_cast<const Graph&>(o).context == context;
        default:
          return false;
      }
    });
    if (in_use) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    taken = sim.take_locked(handle);
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t context_get_status(ze_context_handle_t handle) {
  if (Sim::get().find<Context>(handle) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return lost() ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

std::unique_ptr<Object> Sim::take_locked(const void* handle) {
  const auto it = objects_.find(handle);
  if (it == objects_.end()) return nullptr;
  std::unique_ptr<Object> object = std::move(it->second);
  objects_.erase(it);
  return object;
}

}  // namespace hsched::zesim
