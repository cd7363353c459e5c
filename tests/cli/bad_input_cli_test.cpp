// `hsched info` on every bad input: exit code 2, exactly one line on stderr naming the file or
// flag, nothing on stdout, no crash (the same cases as tests/graph/bad_input_test.cpp).
#include <gtest/gtest.h>

#include "cli/cli_runner.h"
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

}  // namespace
}  // namespace hsched
