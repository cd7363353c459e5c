// hsched's declaration of the subset of Intel's NPU graph extension ("ZE_extension_graph",
// versions 1.0 to 1.4) that hsched uses: the types and the function table a Level Zero driver
// returns from zeDriverGetExtensionFunctionAddress(hDriver, "ZE_extension_graph", &table).
//
// Written from the published specification (Intel's level-zero-npu-extensions ze_graph_ext.h);
// not a copy of it. Enumerator values, struct layouts, function signatures and the order of the
// table's entries follow the specification, so that a driver implementing the spec and hsched
// agree on the ABI. Each version appends entries to the table; a driver reports the version it
// implements through zeDriverGetExtensionProperties and pfnDeviceGetGraphProperties, and hsched
// reads an entry only when that version has it: 1.0 for building and running graphs, 1.3 for the
// query of supported layers, 1.4 for the build log. The 1.1 and 1.2 entries (argument metadata)
// are placeholders hsched never calls.
//
// Compatibility with Intel's NPU driver is unverified (no NPU on our machines); hsched's own
// simulated driver (backends/level_zero/sim) implements exactly this subset.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#ifndef ZE_GRAPH_EXT_NAME
#define ZE_GRAPH_EXT_NAME "ZE_extension_graph"
#endif

#if defined(__cplusplus)
extern "C" {
#endif

// Extension versions (ZE_MAKE_VERSION(major, minor)); hsched needs 1.0.
typedef enum _ze_graph_ext_version_t {
  ZE_GRAPH_EXT_VERSION_1_0 = ZE_MAKE_VERSION(1, 0),
  ZE_GRAPH_EXT_VERSION_1_1 = ZE_MAKE_VERSION(1, 1),
  ZE_GRAPH_EXT_VERSION_1_2 = ZE_MAKE_VERSION(1, 2),
  ZE_GRAPH_EXT_VERSION_1_3 = ZE_MAKE_VERSION(1, 3),
  ZE_GRAPH_EXT_VERSION_1_4 = ZE_MAKE_VERSION(1, 4),
  ZE_GRAPH_EXT_VERSION_CURRENT = ZE_GRAPH_EXT_VERSION_1_4,
  ZE_GRAPH_EXT_VERSION_FORCE_UINT32 = 0x7fffffff
} ze_graph_ext_version_t;

// Handle of a graph object (created by pfnCreate, released by pfnDestroy).
typedef struct _ze_graph_handle_t* ze_graph_handle_t;

// Handle of a profiling query (spec: ze_graph_profiling_ext.h). hsched never creates one and
// always passes nullptr to pfnAppendGraphExecute.
typedef struct _ze_graph_profiling_query_handle_t* ze_graph_profiling_query_handle_t;

// Input formats of pfnCreate.
typedef enum _ze_graph_format_t {
  ZE_GRAPH_FORMAT_NATIVE = 0x1,       // a blob the driver produced (pfnGetNativeBinary)
  ZE_GRAPH_FORMAT_NGRAPH_LITE = 0x2,  // OpenVINO IR: header, XML, weights
} ze_graph_format_t;

typedef struct _ze_graph_compiler_version_info_t {
  uint16_t major;
  uint16_t minor;
} ze_graph_compiler_version_info_t;

// Structure types of this extension (a separate numbering from ze_structure_type_t).
typedef enum _ze_structure_type_graph_ext_t {
  ZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES = 0x1,    // ze_device_graph_properties_t
  ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES = 0x2,      // ze_graph_desc_t
  ZE_STRUCTURE_TYPE_GRAPH_PROPERTIES = 0x3,           // ze_graph_properties_t
  ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES = 0x4,  // ze_graph_argument_properties_t
} ze_structure_type_graph_ext_t;

typedef struct _ze_device_graph_properties_t {
  ze_structure_type_graph_ext_t stype;               // [in]
  void* pNext;                                       // [in,out][optional]
  ze_graph_ext_version_t graphExtensionVersion;      // [out]
  ze_graph_compiler_version_info_t compilerVersion;  // [out]
  ze_graph_format_t graphFormatsSupported;           // [out] bit set of ze_graph_format_t
  uint32_t maxOVOpsetVersionSupported;               // [out] highest OpenVINO opset accepted
} ze_device_graph_properties_t;

// Element types of graph arguments (values from the spec).
typedef enum _ze_graph_argument_precision_t {
  ZE_GRAPH_ARGUMENT_PRECISION_UNKNOWN = 0x00,
  ZE_GRAPH_ARGUMENT_PRECISION_FP32 = 0x01,
  ZE_GRAPH_ARGUMENT_PRECISION_FP16 = 0x02,
  ZE_GRAPH_ARGUMENT_PRECISION_UINT16 = 0x03,
  ZE_GRAPH_ARGUMENT_PRECISION_UINT8 = 0x04,
  ZE_GRAPH_ARGUMENT_PRECISION_INT32 = 0x05,
  ZE_GRAPH_ARGUMENT_PRECISION_INT16 = 0x06,
  ZE_GRAPH_ARGUMENT_PRECISION_INT8 = 0x07,
  ZE_GRAPH_ARGUMENT_PRECISION_BIN = 0x08,
  ZE_GRAPH_ARGUMENT_PRECISION_BF16 = 0x09,
  ZE_GRAPH_ARGUMENT_PRECISION_UINT32 = 0x0A,
  ZE_GRAPH_ARGUMENT_PRECISION_UINT4 = 0x0B,
  ZE_GRAPH_ARGUMENT_PRECISION_INT4 = 0x0C,
  ZE_GRAPH_ARGUMENT_PRECISION_DYNAMIC = 0x0D,
  ZE_GRAPH_ARGUMENT_PRECISION_BOOLEAN = 0x0E,
  ZE_GRAPH_ARGUMENT_PRECISION_FP64 = 0x0F,
  ZE_GRAPH_ARGUMENT_PRECISION_UINT64 = 0x10,
  ZE_GRAPH_ARGUMENT_PRECISION_INT64 = 0x11,
} ze_graph_argument_precision_t;

// Layouts of graph arguments (values from the spec).
typedef enum _ze_graph_argument_layout_t {
  ZE_GRAPH_ARGUMENT_LAYOUT_ANY = 0x00,
  ZE_GRAPH_ARGUMENT_LAYOUT_NCHW = 0x01,
  ZE_GRAPH_ARGUMENT_LAYOUT_NHWC = 0x02,
  ZE_GRAPH_ARGUMENT_LAYOUT_NCDHW = 0x03,
  ZE_GRAPH_ARGUMENT_LAYOUT_NDHWC = 0x04,
  ZE_GRAPH_ARGUMENT_LAYOUT_OIHW = 0x40,
  ZE_GRAPH_ARGUMENT_LAYOUT_C = 0x60,
  ZE_GRAPH_ARGUMENT_LAYOUT_CHW = 0x80,
  ZE_GRAPH_ARGUMENT_LAYOUT_HW = 0xC0,
  ZE_GRAPH_ARGUMENT_LAYOUT_NC = 0xC1,
  ZE_GRAPH_ARGUMENT_LAYOUT_CN = 0xC2,
  ZE_GRAPH_ARGUMENT_LAYOUT_BLOCKED = 0xC8,
} ze_graph_argument_layout_t;

typedef struct _ze_graph_desc_t {
  ze_structure_type_graph_ext_t stype;  // [in] ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES
  void* pNext;                          // [in,out][optional]
  ze_graph_format_t format;             // [in]
  size_t inputSize;                     // [in] bytes at pInput
  const uint8_t* pInput;                // [in]
  const char* pBuildFlags;              // [in][optional] NUL-terminated build flags
} ze_graph_desc_t;

typedef struct _ze_graph_properties_t {
  ze_structure_type_graph_ext_t stype;  // [in] ZE_STRUCTURE_TYPE_GRAPH_PROPERTIES
  void* pNext;                          // [in,out][optional]
  uint32_t numGraphArgs;                // [out] inputs then outputs
} ze_graph_properties_t;

typedef enum _ze_graph_argument_type_t {
  ZE_GRAPH_ARGUMENT_TYPE_INPUT,
  ZE_GRAPH_ARGUMENT_TYPE_OUTPUT
} ze_graph_argument_type_t;

#ifndef ZE_MAX_GRAPH_ARGUMENT_NAME
#define ZE_MAX_GRAPH_ARGUMENT_NAME 256
#endif
#ifndef ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE
#define ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE 5
#endif

typedef struct _ze_graph_argument_properties_t {
  ze_structure_type_graph_ext_t stype;    // [in] ZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES
  void* pNext;                            // [in,out][optional]
  char name[ZE_MAX_GRAPH_ARGUMENT_NAME];  // [out] NUL-terminated name from the IR
  ze_graph_argument_type_t type;          // [out]
  // [out] dimensions, outermost first; entries past the tensor's rank are 1 (spec: "up to 5D").
  uint32_t dims[ZE_MAX_GRAPH_ARGUMENT_DIMENSIONS_SIZE];
  ze_graph_argument_precision_t networkPrecision;  // [out] precision in the IR
  ze_graph_argument_layout_t networkLayout;        // [out]
  ze_graph_argument_precision_t devicePrecision;   // [out] precision of the bound memory
  ze_graph_argument_layout_t deviceLayout;         // [out]
} ze_graph_argument_properties_t;

typedef ze_result_t(ZE_APICALL* ze_pfnDeviceGetGraphProperties_ext_t)(
    ze_device_handle_t hDevice, ze_device_graph_properties_t* pDeviceGraphProperties);

typedef ze_result_t(ZE_APICALL* ze_pfnGraphCreate_ext_t)(ze_context_handle_t hContext,
                                                         ze_device_handle_t hDevice,
                                                         const ze_graph_desc_t* desc,
                                                         ze_graph_handle_t* phGraph);

typedef ze_result_t(ZE_APICALL* ze_pfnGraphDestroy_ext_t)(ze_graph_handle_t hGraph);

// Two calls: pGraphNativeBinary == nullptr sets *pSize; then a buffer of *pSize bytes (caller
// owned) receives the binary.
typedef ze_result_t(ZE_APICALL* ze_pfnGraphGetNativeBinary_ext_t)(ze_graph_handle_t hGraph,
                                                                  size_t* pSize,
                                                                  uint8_t* pGraphNativeBinary);

typedef ze_result_t(ZE_APICALL* ze_pfnGraphGetProperties_ext_t)(
    ze_graph_handle_t hGraph, ze_graph_properties_t* pGraphProperties);

typedef ze_result_t(ZE_APICALL* ze_pfnGraphGetArgumentProperties_ext_t)(
    ze_graph_handle_t hGraph, uint32_t argIndex,
    ze_graph_argument_properties_t* pGraphArgumentProperties);

// pArgValue: the address of the argument's memory (host or shared allocation of the graph's
// context), read/written when an execution of the graph runs.
typedef ze_result_t(ZE_APICALL* ze_pfnGraphSetArgumentValue_ext_t)(ze_graph_handle_t hGraph,
                                                                   uint32_t argIndex,
                                                                   const void* pArgValue);

typedef ze_result_t(ZE_APICALL* ze_pfnAppendGraphInitialize_ext_t)(
    ze_command_list_handle_t hCommandList, ze_graph_handle_t hGraph, ze_event_handle_t hSignalEvent,
    uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);

typedef ze_result_t(ZE_APICALL* ze_pfnAppendGraphExecute_ext_t)(
    ze_command_list_handle_t hCommandList, ze_graph_handle_t hGraph,
    ze_graph_profiling_query_handle_t hProfilingQuery, ze_event_handle_t hSignalEvent,
    uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);

// Version 1.3: which layers of an IR the compiler supports, without building it.
typedef struct _ze_graph_query_network_handle_t* ze_graph_query_network_handle_t;
typedef ze_result_t(ZE_APICALL* ze_pfnGraphQueryNetworkCreate_ext_t)(
    ze_context_handle_t hContext, ze_device_handle_t hDevice, const ze_graph_desc_t* desc,
    ze_graph_query_network_handle_t* phGraphQueryNetwork);
typedef ze_result_t(ZE_APICALL* ze_pfnGraphQueryNetworkDestroy_ext_t)(
    ze_graph_query_network_handle_t hGraphQueryNetwork);
// Two calls: pSupportedLayers == nullptr sets *pSize; then *pSize bytes (caller owned) receive the
// supported layers' names as "<name><name>...", NUL-terminated.
typedef ze_result_t(ZE_APICALL* ze_pfnGraphQueryNetworkGetSupportedLayers_ext_t)(
    ze_graph_query_network_handle_t hGraphQueryNetwork, size_t* pSize, char* pSupportedLayers);

// Version 1.4: the compiler's log of the latest failed build (hGraph may be null: a failed
// pfnCreate returns no graph). Two calls, as above.
typedef ze_result_t(ZE_APICALL* ze_pfnGraphBuildLogGetString_ext_t)(ze_graph_handle_t hGraph,
                                                                    uint32_t* pSize,
                                                                    char* pBuildLog);

// An entry of a version hsched does not call (its slot keeps the table's layout).
typedef void(ZE_APICALL* ze_pfnGraphUnused_ext_t)(void);

// The extension's function table, entries in the spec's order.
typedef struct _ze_graph_dditable_ext_t {
  ze_pfnGraphCreate_ext_t pfnCreate;
  ze_pfnGraphDestroy_ext_t pfnDestroy;
  ze_pfnGraphGetProperties_ext_t pfnGetProperties;
  ze_pfnGraphGetArgumentProperties_ext_t pfnGetArgumentProperties;
  ze_pfnGraphSetArgumentValue_ext_t pfnSetArgumentValue;
  ze_pfnAppendGraphInitialize_ext_t pfnAppendGraphInitialize;
  ze_pfnAppendGraphExecute_ext_t pfnAppendGraphExecute;
  ze_pfnGraphGetNativeBinary_ext_t pfnGetNativeBinary;
  ze_pfnDeviceGetGraphProperties_ext_t pfnDeviceGetGraphProperties;
  // version 1.1
  ze_pfnGraphUnused_ext_t pfnGraphGetArgumentMetadata;
  ze_pfnGraphUnused_ext_t pfnGetArgumentProperties2;
  // version 1.2
  ze_pfnGraphUnused_ext_t pfnGetArgumentProperties3;
  // version 1.3
  ze_pfnGraphQueryNetworkCreate_ext_t pfnQueryNetworkCreate;
  ze_pfnGraphQueryNetworkDestroy_ext_t pfnQueryNetworkDestroy;
  ze_pfnGraphQueryNetworkGetSupportedLayers_ext_t pfnQueryNetworkGetSupportedLayers;
  // version 1.4
  ze_pfnGraphBuildLogGetString_ext_t pfnBuildLogGetString;
} ze_graph_dditable_ext_t;

#if defined(__cplusplus)
}  // extern "C"
#endif
