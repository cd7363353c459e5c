// Every bad input of issue 2 gives one clear error that names the file (and node or flag),
// with code InvalidArgument, through the library call.
#include <gtest/gtest.h>

#include "graph/onnx_import.h"
#include "support/bad_models.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

// Mirrors `hsched info PATH [--input-shape X]...`: flags are parsed first, then the import.
Status import_case(const test::BadInput& input) {
  ImportOptions options;
  for (size_t i = 1; i + 1 < input.args.size(); i += 2) {
    HSCHED_RETURN_IF_ERROR(add_input_shape_flag(input.args[i + 1], options));
  }
  return import_onnx_file(input.args[0], options).status();
}

TEST(BadInputTest, EveryCaseIsRefusedWithOneLineNamingTheFileOrFlag) {
  test::TempDir dir;
  const auto cases = test::make_bad_inputs(dir.path());
  ASSERT_GE(cases.size(), 20u);
  for (const auto& input : cases) {
    SCOPED_TRACE(input.name);
    const Status status = import_case(input);
    ASSERT_FALSE(status.is_ok());
    EXPECT_NE(status.code(), ErrorCode::kInternal);
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(input.expect), std::string::npos) << status.message();
    const bool flag_case = input.args.size() > 1;
    if (!flag_case) {
      EXPECT_EQ(status.message().rfind(input.args[0], 0), 0u)
          << "message does not start with the file: " << status.message();
    }
  }
}

TEST(BadInputTest, ValidBaseModelImports) {
  test::TempDir dir;
  const auto cases = test::make_bad_inputs(dir.path());
  auto graph = import_onnx_file(dir / "valid.onnx", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(graph->nodes().size(), 1u);
}

TEST(BadInputTest, InMemoryModelRefusesExternalData) {
  test::TempDir dir;
  test::make_bad_inputs(dir.path());
  std::ifstream in(dir / "inner" / "pastend.onnx", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Status status = import_onnx_bytes(bytes, {}, "memory", {}).status();
  EXPECT_NE(status.message().find("external data"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace hsched
