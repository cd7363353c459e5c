// The public API end to end, with only include/hsched on the include path: a model loaded,
// planned for this machine's CPU, reported, compiled and run with inputs by name, after the
// Model handle itself is gone.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hsched/config.h"
#include "hsched/executor.h"
#include "hsched/model.h"
#include "hsched/report.h"
#include "hsched/schedule.h"

namespace hsched {
namespace {

TEST(PublicApiTest, DemoModelDescribesItself) {
  Result<Model> model = demo_model();
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_EQ(model->name(), "demo-cnn");
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "input");
  EXPECT_EQ(model->inputs()[0].dtype, DType::kF32);
  EXPECT_EQ(model->inputs()[0].shape, Shape({1, 3, 64, 64}));
  ASSERT_EQ(model->outputs().size(), 1u);
  EXPECT_EQ(model->outputs()[0].shape, Shape({1, 10}));
  const ModelSummary summary = model->summary();
  EXPECT_EQ(summary.nodes, model->node_count());
  EXPECT_GT(summary.ops.at("Conv"), 0);
  EXPECT_NE(summary_to_json_text(summary).find("\"nodes\""), std::string::npos);
}

TEST(PublicApiTest, LoadingAMissingFileNamesIt) {
  Result<Model> model = load_model("/nonexistent/model.onnx");
  ASSERT_FALSE(model.is_ok());
  EXPECT_NE(model.status().message().find("/nonexistent/model.onnx"), std::string::npos)
      << model.status().message();
}

TEST(PublicApiTest, InputsByNameComeInRunOrder) {
  Result<Model> model = demo_model();
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const Tensor image(DType::kF32, {1, 3, 64, 64});
  Result<std::vector<Tensor>> inputs = inputs_in_order(*model, {{"input", image}});
  ASSERT_TRUE(inputs.is_ok()) << inputs.status().message();
  ASSERT_EQ(inputs->size(), 1u);
  EXPECT_EQ((*inputs)[0].raw(), image.raw());  // shared, not copied

  Result<std::vector<Tensor>> missing = inputs_in_order(*model, {});
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("input"), std::string::npos);
  Result<std::vector<Tensor>> unknown =
      inputs_in_order(*model, {{"input", image}, {"logits", image}});
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("'logits' is not an input"), std::string::npos)
      << unknown.status().message();
}

TEST(PublicApiTest, PlanReportCompileAndRunOnTheCpu) {
  Result<Target> target = restrict_devices(discover_target(), "cpu");
  ASSERT_TRUE(target.is_ok()) << target.status().message();
  std::unique_ptr<Executable> exe;
  std::vector<Tensor> inputs;
  {
    Result<Model> model = demo_model();
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    Result<Plan> plan = schedule(*model, *target, devices_policy("cpu", Precision::kFp32));
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    EXPECT_EQ(plan->nodes.size(), static_cast<size_t>(model->node_count()));
    EXPECT_NE(plan_json(*model, *plan).find("\"partitions\""), std::string::npos);
    Result<std::string> text = format_report(*model, *plan, ReportFormat::kText);
    ASSERT_TRUE(text.is_ok()) << text.status().message();
    EXPECT_FALSE(text->empty());
    Result<std::unique_ptr<Executable>> compiled = compile(*model, *plan);
    ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
    exe = std::move(compiled).value();
    Result<std::vector<Tensor>> named =
        inputs_in_order(*model, {{"input", Tensor(DType::kF32, {1, 3, 64, 64})}});
    ASSERT_TRUE(named.is_ok()) << named.status().message();
    inputs = std::move(named).value();
  }
  // The Model handle is gone; the Executable keeps its graph.
  Result<std::vector<Tensor>> outputs = exe->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ((*outputs)[0].dims(), (std::vector<int64_t>{1, 10}));
}

}  // namespace
}  // namespace hsched
