// The program-binary cache on its own: format checks, the trust model (directory and entry
// ownership and modes, links, keys stored in entries), atomic writes, unusable directories and
// the size cap, with made-up binaries (no OpenCL device needed).
#include "backends/opencl/cache.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
  ProgramKey key;
  key.platform_name = "Test Platform";
  key.platform_version = "OpenCL 3.0 Test 1.0";
  key.device_name = "Test Device";
  key.device_vendor = "Test Vendor";
  key.vendor_id = 0x8086;
  key.device_version = "OpenCL 3.0 Test";
  key.driver_version = "1.0";
  key.source = source;
  key.build_options = "-cl-std=CL1.2";
  return key;
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
            sizeof(CacheEntryHeader) + key_for("a").bytes().size() + binary.size());
  // Only the entry is left: the temp file was renamed, not copied.
  int files = 0;
  for ([[maybe_unused]] const auto& item : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(ProgramCacheTest, KeyDependsOnEveryField) {
  const ProgramKey base = key_for("kernel");
  EXPECT_EQ(base.digest().size(), 64u);  // SHA-256
  EXPECT_EQ(base.digest(), key_for("kernel").digest());
  // The entry's file name is the digest of the full key.
  test::TempDir dir;
  EXPECT_EQ(ProgramCache(dir.path().string()).entry_path(base),
            dir / (base.digest() + kCacheEntryExtension));
  const auto changed = [&](auto&& change) {
    ProgramKey other = base;
    change(other);
    return other.digest() != base.digest() && other.bytes() != base.bytes();
  };
  EXPECT_TRUE(changed([](ProgramKey& key) { key.device_name = "Other"; }));
  EXPECT_TRUE(changed([](ProgramKey& key) { key.device_vendor = "Other"; }));
  EXPECT_TRUE(changed([](ProgramKey& key) { key.build_options = "-DX"; }));
  EXPECT_TRUE(changed([](ProgramKey& key) { key.source = "kernel "; }));
  // Fields are length-prefixed: moving bytes from one field to the next changes the key.
  ProgramKey a = base, b = base;
  a.device_name = "ab";
  a.device_vendor = "c";
  b.device_name = "a";
  b.device_vendor = "bc";
  EXPECT_NE(a.digest(), b.digest());
}

// A program binary is native code for one platform, device and driver: a new version of any of
// them is another key.
TEST(ProgramCacheTest, KeyDependsOnPlatformDeviceAndDriverVersions) {
  const ProgramKey base = key_for("kernel");
  const auto changed = [&](auto&& change) {
    ProgramKey other = base;
    change(other);
    return other.digest() != base.digest();
  };
  EXPECT_TRUE(changed([](ProgramKey& key) { key.platform_name = "Other Platform"; }));
  EXPECT_TRUE(changed([](ProgramKey& key) { key.platform_version = "OpenCL 3.0 Test 1.1"; }));
  EXPECT_TRUE(changed([](ProgramKey& key) { key.device_version = "OpenCL 3.0 Test 2"; }));
  EXPECT_TRUE(changed([](ProgramKey& key) { key.driver_version = "1.1"; }));
  EXPECT_TRUE(changed([](ProgramKey& key) { key.vendor_id = 0x10DE; }));
  // And hsched's own format and version start the key.
  EXPECT_NE(base.bytes().find("HSCLPRG"), std::string::npos);
  EXPECT_NE(base.bytes().find("hsched "), std::string::npos);
}

TEST(ProgramCacheTest, CorruptEntryIsRemovedAndMisses) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  const fs::path path = cache.entry_path(key_for("a"));
  std::string bytes = read_all(path);
  bytes[bytes.size() - 100] ^= 0x01;  // one bit of the payload (the file's last 500 bytes)
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
  const int64_t kEntry = sizeof(CacheEntryHeader) + key_for("a").bytes().size() + kPayload;
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

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

// Expects the cache on `dir` refused: off for loads and stores, one warning line naming the
// directory and `reason`, and no second warning for the same directory.
void expect_refused(const fs::path& dir, const std::string& reason) {
  ::testing::internal::CaptureStderr();
  ProgramCache cache(dir.string());
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.usable()) << dir;
  EXPECT_FALSE(cache.writable()) << dir;
  EXPECT_NE(cache.refusal().find(reason), std::string::npos) << cache.refusal();
  EXPECT_NE(warning.find(dir.string()), std::string::npos) << warning;
  EXPECT_NE(warning.find(reason), std::string::npos) << warning;
  EXPECT_EQ(std::count(warning.begin(), warning.end(), '\n'), 1) << warning;
  EXPECT_FALSE(cache.store(key_for("a"), binary_of(10, 1)));
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  ::testing::internal::CaptureStderr();
  ProgramCache again(dir.string());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "warned twice for " << dir;
  EXPECT_FALSE(again.usable());
}

// A directory that held a good entry, then had its mode changed: the entry is not loaded.
fs::path directory_with_entry(const test::TempDir& dir, const std::string& name) {
  const fs::path path = dir / name;
  ProgramCache cache(path.string());
  EXPECT_TRUE(cache.store(key_for("a"), binary_of(100, 1)));
  return path;
}

TEST(ProgramCacheTest, MissingDirectoriesAreCreated0700WhateverTheUmask) {
  test::TempDir dir;
  const fs::path path = dir / "a" / "b" / "cache";
  const mode_t saved = ::umask(0);  // 0777 & ~umask would be 0777
  ProgramCache cache(path.string());
  ::umask(saved);
  EXPECT_TRUE(cache.usable()) << cache.refusal();
  EXPECT_TRUE(cache.writable());
  EXPECT_EQ(mode_of(dir / "a"), 0700u);
  EXPECT_EQ(mode_of(dir / "a" / "b"), 0700u);
  EXPECT_EQ(mode_of(path), 0700u);
  ::umask(0);
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(100, 1)));
  ::umask(saved);
  EXPECT_EQ(mode_of(cache.entry_path(key_for("a"))), 0600u);
  EXPECT_TRUE(cache.load(key_for("a")).has_value());
}

TEST(ProgramCacheTest, GroupWritableDirectoryIsRefused) {
  test::TempDir dir;
  const fs::path path = directory_with_entry(dir, "cache");
  ASSERT_EQ(::chmod(path.c_str(), 0770), 0);
  expect_refused(path, "writable by group or others (mode 0770)");
}

// The deploy file's cache_dir reaches the cache as its explicit directory: a world-writable one
// (/tmp-like, sticky bit included) turns the cache off, entries already there included.
TEST(ProgramCacheTest, WorldWritableExplicitDirectoryDisablesTheCache) {
  test::TempDir dir;
  const fs::path path = directory_with_entry(dir, "shared");
  ASSERT_EQ(::chmod(path.c_str(), 01777), 0);
  expect_refused(path, "writable by group or others (mode 1777)");
  EXPECT_TRUE(fs::exists(path / (key_for("a").digest() + kCacheEntryExtension)));  // untouched
}

TEST(ProgramCacheTest, OtherWritableDirectoryIsRefused) {
  test::TempDir dir;
  const fs::path path = dir / "cache";
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0702), 0);
  expect_refused(path, "writable by group or others (mode 0702)");
}

TEST(ProgramCacheTest, DirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a directory away";
  test::TempDir dir;
  const fs::path path = directory_with_entry(dir, "cache");
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);  // nobody
  expect_refused(path, "owned by uid 65534");
}

TEST(ProgramCacheTest, SymbolicLinkToADirectoryIsRefused) {
  test::TempDir dir;
  const fs::path real = directory_with_entry(dir, "real");
  const fs::path link = dir / "link";
  fs::create_directory_symlink(real, link);
  expect_refused(link, "symbolic link");
  // Nor is a directory created through a link in the last component.
  fs::create_directory_symlink(dir / "missing", dir / "dangling");
  expect_refused(dir / "dangling", "symbolic link");
  EXPECT_FALSE(fs::exists(dir / "missing"));
}

TEST(ProgramCacheTest, RegularFileAsDirectoryIsRefused) {
  test::TempDir dir;
  test::write_file(dir / "a_file", "not a directory");
  expect_refused(dir / "a_file", "not a directory");
}

TEST(ProgramCacheTest, TamperedKeyIsAMiss) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  const fs::path path = cache.entry_path(key_for("a"));
  std::string bytes = read_all(path);
  bytes[sizeof(CacheEntryHeader) + key_for("a").bytes().size() - 1] ^= 0x01;  // the source's end
  test::write_file(path, bytes);
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
}

// An entry moved to another key's file name (what a mix-up or an attacker would do) holds the
// wrong key: a miss, replaced by the next store.
TEST(ProgramCacheTest, EntryRenamedToAnotherKeysNameIsAMiss) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  ASSERT_TRUE(cache.store(key_for("b"), binary_of(500, 2)));
  fs::rename(cache.entry_path(key_for("a")), cache.entry_path(key_for("b")));
  EXPECT_FALSE(cache.load(key_for("b")).has_value());
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  ASSERT_TRUE(cache.store(key_for("b"), binary_of(500, 2)));
  EXPECT_EQ(cache.load(key_for("b")).value_or(ProgramCache::Binary{}), binary_of(500, 2));
  // A longer key under the name of a shorter one: the same.
  ProgramKey long_key = key_for("a");
  long_key.source += " and more";
  ASSERT_TRUE(cache.store(long_key, binary_of(50, 3)));
  fs::rename(cache.entry_path(long_key), cache.entry_path(key_for("b")));
  EXPECT_FALSE(cache.load(key_for("b")).has_value());
}

TEST(ProgramCacheTest, EntryThatIsASymbolicLinkIsAMiss) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  const fs::path path = cache.entry_path(key_for("a"));
  const fs::path target = dir / "elsewhere";
  fs::rename(path, target);
  fs::create_symlink(target, path);
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  EXPECT_FALSE(fs::is_symlink(path));  // the link is removed, never followed
  EXPECT_EQ(read_all(target).size(), sizeof(CacheEntryHeader) + key_for("a").bytes().size() + 500);
}

TEST(ProgramCacheTest, EntryWritableByOthersIsAMiss) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  const fs::path path = cache.entry_path(key_for("a"));
  ASSERT_EQ(::chmod(path.c_str(), 0620), 0);
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  EXPECT_FALSE(fs::exists(path));
}

TEST(ProgramCacheTest, EntryOfAnotherUserIsAMiss) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file away";
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  const fs::path path = cache.entry_path(key_for("a"));
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
}

TEST(ProgramCacheTest, EntryOfAnOlderFormatIsRemoved) {
  test::TempDir dir;
  ProgramCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(key_for("a"), binary_of(500, 1)));
  const fs::path path = cache.entry_path(key_for("a"));
  std::string bytes = read_all(path);
  bytes[8] = 1;  // format version 1
  test::write_file(path, bytes);
  EXPECT_FALSE(cache.load(key_for("a")).has_value());
  EXPECT_FALSE(fs::exists(path));
  // Version 1 named entries by a 16-digit hash; the next scan removes them.
  const fs::path old_name = dir / ("0123456789abcdef" + std::string(kCacheEntryExtension));
  test::write_file(old_name, "an entry of format 1");
  ASSERT_TRUE(cache.store(key_for("b"), binary_of(10, 1)));
  EXPECT_FALSE(fs::exists(old_name));
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
