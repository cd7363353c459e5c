// A temporary folder for generated test files, removed with everything in it at scope exit.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace hsched::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "hsched_test_XXXXXX";
    path_ = ::mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The shared reference models: $HSCHED_MODELS_DIR, else the folder configured at build time.
inline std::filesystem::path models_dir() {
  const char* env = std::getenv("HSCHED_MODELS_DIR");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env)
                                        : std::filesystem::path(HSCHED_MODELS_DIR);
}

// Their INT8 versions (ONNX Runtime's QDQ quantization): $HSCHED_MODELS_INT8_DIR, else the
// models-int8 folder beside the models.
inline std::filesystem::path int8_models_dir() {
  const char* env = std::getenv("HSCHED_MODELS_INT8_DIR");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env)
                                        : models_dir() / ".." / "models-int8";
}

}  // namespace hsched::test
