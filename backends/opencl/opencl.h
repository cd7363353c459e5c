// The one include of the Khronos C++ bindings for the OpenCL backend. Every backends/opencl file
// includes this instead of <CL/opencl.hpp>, so the version macros agree across translation units
// (the bindings' classes change layout with them).
//
// - Target and minimum 1.2: PoCL, NVIDIA (1.2/3.0) and Intel's compute runtime all provide it,
//   and the backend uses 1.2 entry points only. (Target 2.0+ with minimum 1.2 does not compile
//   with Debian's opencl.hpp: its run-time version switch misses a helper.)
// - No exceptions: every call reports through its cl_int error code, which the backend turns into
//   hsched::Status (include/hsched/status.h).
#pragma once

#ifdef CL_HPP_ENABLE_EXCEPTIONS
#error "hsched's OpenCL backend uses error codes: do not define CL_HPP_ENABLE_EXCEPTIONS"
#endif

#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120

#include <CL/opencl.hpp>  // IWYU pragma: export
