// The exported entry points of libze_hsched_sim.so: the zeGet*ProcAddrTable functions through
// which the Level Zero loader (libze_loader, 1.8.x) takes a driver's function tables.
//
// What the loader does with a driver (its source, oneapi-src/level-zero source/loader and
// source/lib, read for 1.8): it dlopens each driver library (with
// ZE_ENABLE_ALT_DRIVERS=<path>[,...] only those, instead of libze_intel_gpu.so.1 and
// libze_intel_vpu.so.1), then for each zeGet<Table>ProcAddrTable it calls the driver's export of
// that name; a missing export leaves the table empty, but an export that fails disables the driver.
// Its own library side then asks for the core (ze), tools (zet) and sysman (zes) tables and fails
// zeInit when one of them has no driver (seen with 1.8.12: without zetGetDeviceProcAddrTable zeInit
// answers ZE_RESULT_ERROR_UNINITIALIZED), so a driver exports them all. With a single driver the
// loader hands the driver's tables to the application (or to the validation layer) unchanged, so
// handles reach this library as it created them.
//
// This library exports every ze table of ze_ddi.h. Entries it implements point into api.h; every
// other entry is a function answering ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, so that no entry of
// any table is null. The zet and zes tables are all unsupported.
#include <cstddef>
#include <utility>

#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "backends/level_zero/sim/api.h"

namespace hsched::zesim {
namespace {

template <typename... Args>
ze_result_t ZE_APICALL unsupported(Args...) {
  return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

// Converts to any `ze_result_t (*)(Args...)`: the `unsupported` of that signature.
struct Unsupported {
  template <typename... Args>
  using Fn = ze_result_t(ZE_APICALL*)(Args...);
  template <typename... Args>
  operator Fn<Args...>() const {  // NOLINT(google-explicit-constructor)
    return &unsupported<Args...>;
  }
};

template <typename Table, size_t... I>
Table unsupported_table(std::index_sequence<I...>) {
  return Table{((void)I, Unsupported{})...};
}

// A table whose every entry answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
template <typename Table>
Table unsupported_table() {
  constexpr size_t kEntries = sizeof(Table) / sizeof(void (*)());
  static_assert(sizeof(Table) == kEntries * sizeof(void (*)()),
                "a table holds function pointers only");
  return unsupported_table<Table>(std::make_index_sequence<kEntries>{});
}

ze_result_t check_request(ze_api_version_t version, const void* table) {
  if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT))
    return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  return ZE_RESULT_SUCCESS;
}

void fill(ze_global_dditable_t& t) { t.pfnInit = init; }

void fill(ze_driver_dditable_t& t) {
  t.pfnGet = driver_get;
  t.pfnGetApiVersion = driver_get_api_version;
  t.pfnGetProperties = driver_get_properties;
  t.pfnGetIpcProperties = driver_get_ipc_properties;
  t.pfnGetExtensionProperties = driver_get_extension_properties;
  t.pfnGetExtensionFunctionAddress = driver_get_extension_function_address;
}

void fill(ze_device_dditable_t& t) {
  t.pfnGet = device_get;
  t.pfnGetSubDevices = device_get_sub_devices;
  t.pfnGetProperties = device_get_properties;
  t.pfnGetComputeProperties = device_get_compute_properties;
  t.pfnGetModuleProperties = device_get_module_properties;
  t.pfnGetCommandQueueGroupProperties = device_get_command_queue_group_properties;
  t.pfnGetMemoryProperties = device_get_memory_properties;
  t.pfnGetMemoryAccessProperties = device_get_memory_access_properties;
  t.pfnGetStatus = device_get_status;
}

void fill(ze_context_dditable_t& t) {
  t.pfnCreate = context_create;
  t.pfnDestroy = context_destroy;
  t.pfnGetStatus = context_get_status;
}

void fill(ze_command_queue_dditable_t& t) {
  t.pfnCreate = command_queue_create;
  t.pfnDestroy = command_queue_destroy;
  t.pfnExecuteCommandLists = command_queue_execute_command_lists;
  t.pfnSynchronize = command_queue_synchronize;
}

void fill(ze_command_list_dditable_t& t) {
  t.pfnCreate = command_list_create;
  t.pfnDestroy = command_list_destroy;
  t.pfnClose = command_list_close;
  t.pfnReset = command_list_reset;
  t.pfnAppendBarrier = command_list_append_barrier;
  t.pfnAppendMemoryCopy = command_list_append_memory_copy;
  t.pfnAppendSignalEvent = command_list_append_signal_event;
  t.pfnAppendWaitOnEvents = command_list_append_wait_on_events;
  t.pfnAppendEventReset = command_list_append_event_reset;
}

void fill(ze_event_pool_dditable_t& t) {
  t.pfnCreate = event_pool_create;
  t.pfnDestroy = event_pool_destroy;
}

void fill(ze_event_dditable_t& t) {
  t.pfnCreate = event_create;
  t.pfnDestroy = event_destroy;
  t.pfnHostSignal = event_host_signal;
  t.pfnHostSynchronize = event_host_synchronize;
  t.pfnQueryStatus = event_query_status;
  t.pfnHostReset = event_host_reset;
}

void fill(ze_fence_dditable_t& t) {
  t.pfnCreate = fence_create;
  t.pfnDestroy = fence_destroy;
  t.pfnHostSynchronize = fence_host_synchronize;
  t.pfnQueryStatus = fence_query_status;
  t.pfnReset = fence_reset;
}

void fill(ze_mem_dditable_t& t) {
  t.pfnAllocShared = mem_alloc_shared;
  t.pfnAllocDevice = mem_alloc_device;
  t.pfnAllocHost = mem_alloc_host;
  t.pfnFree = mem_free;
  t.pfnGetAllocProperties = mem_get_alloc_properties;
  t.pfnGetAddressRange = mem_get_address_range;
}

// Tables with nothing implemented.
template <typename Table>
void fill(Table&) {}

template <typename Table>
ze_result_t get_table(ze_api_version_t version, Table* table) {
  const ze_result_t check = check_request(version, table);
  if (check != ZE_RESULT_SUCCESS) return check;
  Table filled = unsupported_table<Table>();
  fill(filled);
  *table = filled;
  return ZE_RESULT_SUCCESS;
}

}  // namespace
}  // namespace hsched::zesim

// ze_ddi.h declares these with default visibility (the library is built with hidden visibility).
#define HSCHED_ZE_SIM_TABLE(Name, Table)                                                      \
  ze_result_t ZE_APICALL zeGet##Name##ProcAddrTable(ze_api_version_t version, Table* table) { \
    return hsched::zesim::get_table(version, table);                                          \
  }

#define HSCHED_ZE_SIM_TOOLS_TABLE(Prefix, Name, Table)                              \
  ze_result_t ZE_APICALL Prefix##Get##Name##ProcAddrTable(ze_api_version_t version, \
                                                          Table* table) {           \
    return hsched::zesim::get_table(version, table);                                \
  }

extern "C" {
HSCHED_ZE_SIM_TABLE(Global, ze_global_dditable_t)
HSCHED_ZE_SIM_TABLE(Driver, ze_driver_dditable_t)
HSCHED_ZE_SIM_TABLE(Device, ze_device_dditable_t)
HSCHED_ZE_SIM_TABLE(DeviceExp, ze_device_exp_dditable_t)
HSCHED_ZE_SIM_TABLE(Context, ze_context_dditable_t)
HSCHED_ZE_SIM_TABLE(CommandQueue, ze_command_queue_dditable_t)
HSCHED_ZE_SIM_TABLE(CommandList, ze_command_list_dditable_t)
HSCHED_ZE_SIM_TABLE(Image, ze_image_dditable_t)
HSCHED_ZE_SIM_TABLE(ImageExp, ze_image_exp_dditable_t)
HSCHED_ZE_SIM_TABLE(Fence, ze_fence_dditable_t)
HSCHED_ZE_SIM_TABLE(EventPool, ze_event_pool_dditable_t)
HSCHED_ZE_SIM_TABLE(Event, ze_event_dditable_t)
HSCHED_ZE_SIM_TABLE(EventExp, ze_event_exp_dditable_t)
HSCHED_ZE_SIM_TABLE(Module, ze_module_dditable_t)
HSCHED_ZE_SIM_TABLE(ModuleBuildLog, ze_module_build_log_dditable_t)
HSCHED_ZE_SIM_TABLE(Kernel, ze_kernel_dditable_t)
HSCHED_ZE_SIM_TABLE(KernelExp, ze_kernel_exp_dditable_t)
HSCHED_ZE_SIM_TABLE(Sampler, ze_sampler_dditable_t)
HSCHED_ZE_SIM_TABLE(PhysicalMem, ze_physical_mem_dditable_t)
HSCHED_ZE_SIM_TABLE(Mem, ze_mem_dditable_t)
HSCHED_ZE_SIM_TABLE(VirtualMem, ze_virtual_mem_dditable_t)
HSCHED_ZE_SIM_TABLE(FabricVertexExp, ze_fabric_vertex_exp_dditable_t)
HSCHED_ZE_SIM_TABLE(FabricEdgeExp, ze_fabric_edge_exp_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, Device, zet_device_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, Context, zet_context_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, CommandList, zet_command_list_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, Module, zet_module_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, Kernel, zet_kernel_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, MetricGroup, zet_metric_group_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, MetricGroupExp, zet_metric_group_exp_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, Metric, zet_metric_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, MetricStreamer, zet_metric_streamer_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, MetricQueryPool, zet_metric_query_pool_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, MetricQuery, zet_metric_query_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, TracerExp, zet_tracer_exp_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zet, Debug, zet_debug_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Driver, zes_driver_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Device, zes_device_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Scheduler, zes_scheduler_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, PerformanceFactor, zes_performance_factor_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Power, zes_power_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Frequency, zes_frequency_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Engine, zes_engine_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Standby, zes_standby_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Firmware, zes_firmware_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Memory, zes_memory_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, FabricPort, zes_fabric_port_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Temperature, zes_temperature_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Psu, zes_psu_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Fan, zes_fan_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Led, zes_led_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Ras, zes_ras_dditable_t)
HSCHED_ZE_SIM_TOOLS_TABLE(zes, Diagnostics, zes_diagnostics_dditable_t)
}
