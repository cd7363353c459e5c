// The program-binary cache on its own: format checks, atomic writes, unusable directories and
// the size cap, with made-up binaries (no OpenCL device needed).
#include "backends/opencl/program_cache.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace hsched::opencl {
namespace {
namespace fs = std::filesystem;

ProgramKey key_for(const std::string& source) {
  return {"Test Device", "Test Vendor", "1.0", source, "-cl-std=CL1.2"};
}

ProgramCache::Binary binary_of(size_t size, unsigned char seed) {
  ProgramCache::Binary binary(size);
  for (size_t i = 0; i < size; ++i) binary[i] = static_cast<unsigned char>(seed + i * 7);
  return binary;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ProgramCacheTest, StoredBinaryLoadsInAnotherCacheObject) {
  test::TempDir dir;
  const ProgramCache::Binary binary = binary_of(1000, 3);
  {
    ProgramCache cache(dir.path().string());
    ASSERT_TRUE(cache.writable());
    EXPECT_FALSE(cache.load(key_for("a")).has_value());  // a plain miss
    ASSERT_TRUE(cache.store(key_for("a"), binary));
  }
  ProgramCache cache(dir.path().string());
  const auto loaded = cache.load(key_for("a"));
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, binary);
  EXPECT_EQ(fs::file_size(cache.entry_path(key_for("a"))),
            sizeof(CacheEntryHeader) + binary.size());
  // Only the entry is left: the temp file was renamed, not copied.
  int files = 0;
  for ([[maybe_unused]] const auto& item : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(ProgramCacheTest, KeyDependsOnEveryField) {
  const ProgramKey base = key_for("kernel");
  EXPECT_EQ(base.digest().size(), 16u);
  EXPECT_EQ(base.digest(), key_for("kernel").digest());
  ProgramKey other = base;
  other.device_name = "Other";
  EXPECT_NE(other.digest(), base.digest());
  other = base;
  other.device_vendor = "Other";
  EXPECT_NE(other.digest(), base.digest());
  other = base;
  other.driver_version = "1.1";
  EXPECT_NE(other.digest(), base.digest());
  other = base;
  other.build_options = "-DX";
  EXPECT_NE(other.digest(), base.digest());
  other = base;
  other.source = "kernel ";
  EXPECT_NE(other.digest(), base.digest());
  // Fields are length-prefixed: moving bytes from one field to the next changes the key.
  ProgramKey a = base, b = base;
  a.device_name = "ab";
  a.device_vendor = "c";
  b.device_name = "a";
  b.device_vendor = "bc";
  EXPECT_NE(a.digest(), b.digest());
}

TEST(ProgramCacheTest, CorruptEntryIsRemovedAndMisses) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  const fs::path path = cache.entry_path(key_for("a"));
  std::string bytes = read_all(path);
  bytes[sizeof(CacheEntryHeader) + 100] ^= 0x01;  // one bit of the payload
  test::write_file(path, bytes);
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  EXPECT_FALSE(fs::exists(path));
  // Rewritten, it loads again.
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  EXPECT_TRUE(cache.load(key_for("a")).has_value());
}

TEST(ProgramCacheTest, BadHeaderIsRemovedAndMisses) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  const fs::path path = cache.entry_path(key_for("a"));
  std::string bytes = read_all(path);
  bytes[0] = 'X';  // magic
  test::write_file(path, bytes);
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  EXPECT_FALSE(fs::exists(path));
}

TEST(ProgramCacheTest, TruncatedEntryIsRemovedAndMisses) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  ASSERT_TRUE(cache.store(key_for("b"), binary_of(500, 2)));
  const fs::path path_a = cache.entry_path(key_for("a"));
  const fs::path path_b = cache.entry_path(key_for("b"));
  fs::resize_file(path_a, fs::file_size(path_a) - 1);     // last payload byte lost
  fs::resize_file(path_b, sizeof(CacheEntryHeader) / 2);  // even the header is cut
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  EXPECT_FALSE(cache.load(key_for("b")).has_value());
  EXPECT_FALSE(fs::exists(path_a));
  EXPECT_FALSE(fs::exists(path_b));
}

TEST(ProgramCacheTest, UncreatableDirectoryDisablesTheCache) {
  test::TempDir dir;
  test::write_file(dir / "a_file", "not a directory");
  // Under a regular file, and under /proc: create_directories fails; neither is an error.
  for (const fs::path& path : {dir / "a_file" / "cache", fs::path("/proc/hsched-cache-test")}) {
    ProgramCache cache(path.string());
    EXPECT_FALSE(cache.writable()) << path;
    EXPECT_FALSE(cache.store(key_for("a"), binary_of(10, 1))) << path;
    EXPECT_FALSE(cache.load(key_for("a")).has_value()) << path;
  }
}

// Root writes into a 0555 directory, so as root the read-only directory is sysfs's /sys/kernel,
// which exists and where nobody can create files: the store fails and turns writing off.
TEST(ProgramCacheTest, ReadOnlyDirectoryForRootDisablesWriting) {
  if (::geteuid() != 0) GTEST_SKIP() << "the test below covers non-root users";
  const fs::path sysfs_dir = "/sys/kernel";
  if (!fs::is_directory(sysfs_dir)) GTEST_SKIP() << "no " << sysfs_dir << " here";
  ProgramCache cache(sysfs_dir.string());
  EXPECT_FALSE(cache.store(key_for("a"), binary_of(100, 1)));
  EXPECT_FALSE(cache.writable());
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  EXPECT_FALSE(fs::exists(cache.entry_path(key_for("a"))));
}

TEST(ProgramCacheTest, ReadOnlyDirectoryDisablesWriting) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a 0555 directory; see the test above";
  test::TempDir dir;
  const fs::path cache_dir = dir / "cache";
  {
    ProgramCache cache(cache_dir.string());
    ASSERT_TRUE(cache.store(key_for("a"), binary_of(100, 1)));
  }
  ASSERT_EQ(::chmod(cache_dir.c_str(), 0555), 0);
  ProgramCache cache(cache_dir.string());
  EXPECT_FALSE(cache.writable());
  EXPECT_FALSE(cache.store(key_for("b"), binary_of(100, 2)));
  EXPECT_TRUE(cache.load(key_for("a")).has_value());  // reading still works
  ::chmod(cache_dir.c_str(), 0755);
}

TEST(ProgramCacheTest, FullCacheEvictsLeastRecentlyUsed) {
  test::TempDir dir;
  constexpr size_t kPayload = 1000;
  constexpr int64_t kEntry = sizeof(CacheEntryHeader) + kPayload;
  ProgramCache cache(dir.path().string(), 2 * kEntry + 10);  // room for two entries
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(kPayload, 1)));
  ASSERT_TRUE(cache.store(key_for("b"), binary_of(kPayload, 2)));
  // Explicit ages: file times can be coarser than the gap between two stores.
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(cache.entry_path(key_for("a")), now - std::chrono::hours(2));
  fs::last_write_time(cache.entry_path(key_for("b")), now - std::chrono::hours(1));
  ASSERT_TRUE(cache.load(key_for("a")).has_value());  // a is now the most recently used
  ASSERT_TRUE(cache.store(key_for("c"), binary_of(kPayload, 3)));
  EXPECT_TRUE(fs::exists(cache.entry_path(key_for("a"))));
  EXPECT_FALSE(fs::exists(cache.entry_path(key_for("b"))));
  EXPECT_TRUE(fs::exists(cache.entry_path(key_for("c"))));
}

TEST(ProgramCacheTest, EntryLargerThanTheCapIsKeptAlone) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string(), 100);
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(50, 1)));
  ASSERT_TRUE(cache.store(key_for("b"), binary_of(500, 2)));
  EXPECT_FALSE(fs::exists(cache.entry_path(key_for("a"))));
  EXPECT_TRUE(cache.load(key_for("b")).has_value());  // the newest entry is never evicted
}

TEST(ProgramCacheTest, StaleTempFilesAreRemovedFreshOnesKept) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  const fs::path stale = dir / ".0123456789abcdef.clbin.tmp.1.0.42";
  const fs::path fresh = dir / ".0123456789abcdef.clbin.tmp.2.0.43";
  test::write_file(stale, "half written");
  test::write_file(fresh, "being written");
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(10, 1)));  // a store scans the directory
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));  // may belong to a writer still at work
}

TEST(ProgramCacheTest, DirectoryComesFromArgumentThenEnvironmentThenHome) {
  const char* saved_env = std::getenv("HSCHED_CACHE_DIR");
  const std::string saved = saved_env != nullptr ? saved_env : "";
  ::setenv("HSCHED_CACHE_DIR", "/tmp/from-env", 1);
  EXPECT_EQ(ProgramCache::resolve_dir("/tmp/explicit"), fs::path("/tmp/explicit"));
  EXPECT_EQ(ProgramCache::resolve_dir(""), fs::path("/tmp/from-env"));
  ::unsetenv("HSCHED_CACHE_DIR");
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    EXPECT_EQ(ProgramCache::resolve_dir(""), fs::path(home) / ".cache" / "hsched");
  }
  if (saved_env != nullptr) ::setenv("HSCHED_CACHE_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace hsched::opencl
