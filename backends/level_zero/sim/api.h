// The Level Zero entry points the simulated driver implements, in the order of ze_ddi.h's tables
// (ddi.cpp hands them to the loader; every other entry answers
// ZE_RESULT_ERROR_UNSUPPORTED_FEATURE). Each validates its handles and pointers itself (the
// loader's validation layer is optional), and after a device loss answers
// ZE_RESULT_ERROR_DEVICE_LOST, except the Destroy/Free calls.
#pragma once

#include <level_zero/ze_api.h>

#include "backends/level_zero/ze_graph_ext.h"

namespace hsched::zesim {

// driver.cpp: global, driver, device, context.
ze_result_t init(ze_init_flags_t flags);
ze_result_t driver_get(uint32_t* count, ze_driver_handle_t* drivers);
ze_result_t driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t* version);
ze_result_t driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t* properties);
ze_result_t driver_get_ipc_properties(ze_driver_handle_t driver,
                                      ze_driver_ipc_properties_t* properties);
ze_result_t driver_get_extension_properties(ze_driver_handle_t driver, uint32_t* count,
                                            ze_driver_extension_properties_t* properties);
ze_result_t driver_get_extension_function_address(ze_driver_handle_t driver, const char* name,
                                                  void** address);
ze_result_t device_get(ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices);
ze_result_t device_get_sub_devices(ze_device_handle_t device, uint32_t* count,
                                   ze_device_handle_t* sub_devices);
ze_result_t device_get_properties(ze_device_handle_t device, ze_device_properties_t* properties);
ze_result_t device_get_compute_properties(ze_device_handle_t device,
                                          ze_device_compute_properties_t* properties);
ze_result_t device_get_module_properties(ze_device_handle_t device,
                                         ze_device_module_properties_t* properties);
ze_result_t device_get_command_queue_group_properties(
    ze_device_handle_t device, uint32_t* count, ze_command_queue_group_properties_t* properties);
ze_result_t device_get_memory_properties(ze_device_handle_t device, uint32_t* count,
                                         ze_device_memory_properties_t* properties);
ze_result_t device_get_memory_access_properties(ze_device_handle_t device,
                                                ze_device_memory_access_properties_t* properties);
ze_result_t device_get_status(ze_device_handle_t device);
ze_result_t context_create(ze_driver_handle_t driver, const ze_context_desc_t* desc,
                           ze_context_handle_t* context);
ze_result_t context_destroy(ze_context_handle_t context);
ze_result_t context_get_status(ze_context_handle_t context);

// memory.cpp
ze_result_t mem_alloc_shared(ze_context_handle_t context,
                             const ze_device_mem_alloc_desc_t* device_desc,
                             const ze_host_mem_alloc_desc_t* host_desc, size_t size,
                             size_t alignment, ze_device_handle_t device, void** ptr);
ze_result_t mem_alloc_device(ze_context_handle_t context, const ze_device_mem_alloc_desc_t* desc,
                             size_t size, size_t alignment, ze_device_handle_t device, void** ptr);
ze_result_t mem_alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t* desc,
                           size_t size, size_t alignment, void** ptr);
ze_result_t mem_free(ze_context_handle_t context, void* ptr);
ze_result_t mem_get_alloc_properties(ze_context_handle_t context, const void* ptr,
                                     ze_memory_allocation_properties_t* properties,
                                     ze_device_handle_t* device);
ze_result_t mem_get_address_range(ze_context_handle_t context, const void* ptr, void** base,
                                  size_t* size);

// queue.cpp: command queues and lists.
ze_result_t command_queue_create(ze_context_handle_t context, ze_device_handle_t device,
                                 const ze_command_queue_desc_t* desc,
                                 ze_command_queue_handle_t* queue);
ze_result_t command_queue_destroy(ze_command_queue_handle_t queue);
ze_result_t command_queue_execute_command_lists(ze_command_queue_handle_t queue, uint32_t count,
                                                ze_command_list_handle_t* lists,
                                                ze_fence_handle_t fence);
ze_result_t command_queue_synchronize(ze_command_queue_handle_t queue, uint64_t timeout_ns);
ze_result_t command_list_create(ze_context_handle_t context, ze_device_handle_t device,
                                const ze_command_list_desc_t* desc, ze_command_list_handle_t* list);
ze_result_t command_list_destroy(ze_command_list_handle_t list);
ze_result_t command_list_close(ze_command_list_handle_t list);
ze_result_t command_list_reset(ze_command_list_handle_t list);
ze_result_t command_list_append_barrier(ze_command_list_handle_t list, ze_event_handle_t signal,
                                        uint32_t wait_count, ze_event_handle_t* waits);
ze_result_t command_list_append_memory_copy(ze_command_list_handle_t list, void* dst,
                                            const void* src, size_t size, ze_event_handle_t signal,
                                            uint32_t wait_count, ze_event_handle_t* waits);
ze_result_t command_list_append_signal_event(ze_command_list_handle_t list,
                                             ze_event_handle_t event);
ze_result_t command_list_append_wait_on_events(ze_command_list_handle_t list, uint32_t count,
                                               ze_event_handle_t* events);
ze_result_t command_list_append_event_reset(ze_command_list_handle_t list, ze_event_handle_t event);

// sync.cpp: event pools, events, fences.
ze_result_t event_pool_create(ze_context_handle_t context, const ze_event_pool_desc_t* desc,
                              uint32_t device_count, ze_device_handle_t* devices,
                              ze_event_pool_handle_t* pool);
ze_result_t event_pool_destroy(ze_event_pool_handle_t pool);
ze_result_t event_create(ze_event_pool_handle_t pool, const ze_event_desc_t* desc,
                         ze_event_handle_t* event);
ze_result_t event_destroy(ze_event_handle_t event);
ze_result_t event_host_signal(ze_event_handle_t event);
ze_result_t event_host_synchronize(ze_event_handle_t event, uint64_t timeout_ns);
ze_result_t event_query_status(ze_event_handle_t event);
ze_result_t event_host_reset(ze_event_handle_t event);
ze_result_t fence_create(ze_command_queue_handle_t queue, const ze_fence_desc_t* desc,
                         ze_fence_handle_t* fence);
ze_result_t fence_destroy(ze_fence_handle_t fence);
ze_result_t fence_host_synchronize(ze_fence_handle_t fence, uint64_t timeout_ns);
ze_result_t fence_query_status(ze_fence_handle_t fence);
ze_result_t fence_reset(ze_fence_handle_t fence);

// graph_ext.cpp: the "ZE_extension_graph" table (version 1.4).
const ze_graph_dditable_ext_t& graph_table();

}  // namespace hsched::zesim
