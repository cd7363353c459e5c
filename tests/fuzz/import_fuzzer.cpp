// libFuzzer target for the ONNX importer: any bytes must give a Graph or a Status, never a crash,
// a sanitizer report, or a hang. Inputs that once crashed are kept in corpus/ (docs/building.md).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "graph/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An empty base_dir refuses external data, so the fuzzer never reads files beside it.
  const auto result = hsched::import_onnx_bytes(
      std::string_view(reinterpret_cast<const char*>(data), size), {}, "fuzz-input", {});
  static_cast<void>(result);
  return 0;
}
