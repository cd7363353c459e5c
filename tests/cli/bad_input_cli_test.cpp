// `hsched info` on every bad input: exit code 2, exactly one line on stderr naming the file or
// flag, nothing on stdout, no crash (the same cases as tests/graph/bad_input_test.cpp).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "cli/cli_runner.h"
#include "graph/tensor_proto.h"
#include "support/bad_models.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

TEST(BadInputCliTest, EveryCaseExitsTwoWithOneLine) {
  test::TempDir dir;
  for (const auto& input : test::make_bad_inputs(dir.path())) {
    SCOPED_TRACE(input.name);
    std::vector<std::string> args{"info"};
    args.insert(args.end(), input.args.begin(), input.args.end());
    const auto run = cli_test::run_cli(args);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
    EXPECT_NE(run.err.find(input.expect), std::string::npos) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
}

// `hsched run --inputs DIR`: a tensor file over protobuf's limit was cut to 32 bits of its size
// (a 4 GiB + n byte file parsed as its first n bytes); a FIFO blocked the run. Both are refused.
TEST(BadInputCliTest, RunRefusesOversizedOrNonRegularInputFiles) {
  test::TempDir dir;
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
  b.node("Relu", {"x"}, {"y"}, "relu");
  test::write_file(dir / "relu.onnx", b.serialize());
  std::filesystem::create_directories(dir / "big");
  const auto big = dir / "big" / "input_0.pb";
  const Tensor x = Tensor::from_vector(DType::kF32, {1, 4}, std::vector<float>{-1, 2, -3, 4});
  ASSERT_TRUE(write_tensor_file(x, "x", big).is_ok());
  std::filesystem::resize_file(big, (uintmax_t{1} << 32) + std::filesystem::file_size(big));
  std::filesystem::create_directories(dir / "fifo");
  ASSERT_EQ(::mkfifo((dir / "fifo" / "input_0.pb").c_str(), 0600), 0);
  for (const auto& [folder, expect] :
       {std::pair<std::string, std::string>{"big", "more than protobuf's limit of 2 GiB - 1"},
        {"fifo", "is a FIFO, not a regular file"}}) {
    SCOPED_TRACE(folder);
    const auto run = cli_test::run_cli({"run", (dir / "relu.onnx").string(), "--devices", "cpu",
                                        "--inputs", (dir / folder).string()});
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_EQ(cli_test::count_lines(run.err), 1) << run.err;
    EXPECT_NE(run.err.find(expect), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace hsched
