#include "backends/opencl/cache.h"

#include "backends/opencl/device.h"

namespace hsched::opencl {
namespace {

// Version 2: SHA-256 names and digests, the key stored in the entry.
const CacheFormat& program_format() {
  static const CacheFormat format{
      {'H', 'S', 'C', 'L', 'P', 'R', 'G', '\0'}, 2, kCacheEntryExtension};
  return format;
}

// A string query of `platform` ("" when it fails; trailing NULs removed).
std::string platform_string(cl_platform_id platform, cl_platform_info param) {
  size_t size = 0;
  if (platform == nullptr || clGetPlatformInfo(platform, param, 0, nullptr, &size) != CL_SUCCESS) {
    return {};
  }
  std::string value(size, '\0');
  if (clGetPlatformInfo(platform, param, size, value.data(), nullptr) != CL_SUCCESS) return {};
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

}  // namespace

ProgramKey ProgramKey::for_device(const cl::Device& device, const std::string& source,
                                  const std::string& options) {
  cl_platform_id platform = nullptr;
  if (clGetDeviceInfo(device(), CL_DEVICE_PLATFORM, sizeof(platform), &platform, nullptr) !=
      CL_SUCCESS) {
    platform = nullptr;
  }
  cl_uint vendor_id = 0;
  if (clGetDeviceInfo(device(), CL_DEVICE_VENDOR_ID, sizeof(vendor_id), &vendor_id, nullptr) !=
      CL_SUCCESS) {
    vendor_id = 0;
  }
  ProgramKey key;
  key.platform_name = platform_string(platform, CL_PLATFORM_NAME);
  key.platform_version = platform_string(platform, CL_PLATFORM_VERSION);
  key.device_name = device_string(device, CL_DEVICE_NAME);
  key.device_vendor = device_string(device, CL_DEVICE_VENDOR);
  key.vendor_id = vendor_id;
  key.device_version = device_string(device, CL_DEVICE_VERSION);
  key.driver_version = device_string(device, CL_DRIVER_VERSION);
  key.source = source;
  key.build_options = options;
  return key;
}

std::string ProgramKey::bytes() const {
  std::string key = begin_cache_key(program_format());
  for (const std::string* field : {&platform_name, &platform_version, &device_name, &device_vendor,
                                   &device_version, &driver_version}) {
    append_key_field(&key, *field);
  }
  append_key_field(&key, uint64_t{vendor_id});
  append_key_field(&key, build_options);
  append_key_field(&key, source);
  return key;
}

std::string ProgramKey::digest() const { return sha256_hex(bytes()); }

ProgramCache::ProgramCache(const std::string& explicit_dir, int64_t max_bytes)
    : files_(explicit_dir, max_bytes, program_format()) {}

}  // namespace hsched::opencl
