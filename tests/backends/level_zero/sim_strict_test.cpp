// The simulated driver's strict behaviours, those of Intel's driver and compiler (graph_ext.cpp
// lists them with their sources): outputs named after their producer layer, build flags required
// before driver 1.10 and checked when given, 255 graphs per context, BF16 refused, Gelu's tanh
// form computed as erf, the query of supported layers and the build log. The lenient switch
// restores the old naming, which binding by name relied on.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/level_zero/sim/npu_numerics.h"
#include "sim_test_util.h"

namespace hsched::zesim {
namespace {

// The test graph's IR in fp32: its outputs y and z come from the layers "relu" and "pool".
std::vector<uint8_t> fp32_payload() {
  auto model = ir::write_ir(test_graph(), Precision::kFp32);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  return model.is_ok() ? ir::pack_ngraph_lite(*model, 1, 0) : std::vector<uint8_t>{};
}

// The payload with its XML edited (`from` replaced by `to`, every occurrence).
std::vector<uint8_t> edited_payload(const std::vector<uint8_t>& payload, const std::string& from,
                                    const std::string& to) {
  auto model = ir::unpack_ngraph_lite(payload);
  EXPECT_TRUE(model.is_ok());
  if (!model.is_ok()) return {};
  for (size_t at = model->xml.find(from); at != std::string::npos;
       at = model->xml.find(from, at + to.size())) {
    model->xml.replace(at, from.size(), to);
  }
  return ir::pack_ngraph_lite(*model, 1, 0);
}

std::string build_log(const Session& s) {
  uint32_t size = 0;
  if (s.graph->pfnBuildLogGetString(nullptr, &size, nullptr) != ZE_RESULT_SUCCESS) return "?";
  std::string log(size, '\0');
  if (s.graph->pfnBuildLogGetString(nullptr, &size, log.data()) != ZE_RESULT_SUCCESS) return "?";
  return log.c_str();
}

std::string supported_layers(const Session& s, const std::vector<uint8_t>& payload) {
  ze_graph_desc_t desc{ZE_STRUCTURE_TYPE_GRAPH_DESC_PROPERTIES,
                       nullptr,
                       ZE_GRAPH_FORMAT_NGRAPH_LITE,
                       payload.size(),
                       payload.data(),
                       nullptr};
  ze_graph_query_network_handle_t query = nullptr;
  if (s.graph->pfnQueryNetworkCreate(s.context, s.device, &desc, &query) != ZE_RESULT_SUCCESS)
    return "query failed";
  size_t size = 0;
  EXPECT_EQ(s.graph->pfnQueryNetworkGetSupportedLayers(query, &size, nullptr), ZE_RESULT_SUCCESS);
  std::string text(size, '\0');
  EXPECT_EQ(s.graph->pfnQueryNetworkGetSupportedLayers(query, &size, text.data()),
            ZE_RESULT_SUCCESS);
  EXPECT_EQ(s.graph->pfnQueryNetworkDestroy(query), ZE_RESULT_SUCCESS);
  return text.c_str();
}

TEST(SimStrict, OutputsAreNamedAfterTheLayerFeedingTheirResult) {
  Session s;
  ASSERT_EQ(s.open(), "");
  GraphRun run(s);
  ASSERT_EQ(run.create(ZE_GRAPH_FORMAT_NGRAPH_LITE, fp32_payload()), "");
  ASSERT_EQ(run.args().size(), 4u);
  EXPECT_STREQ(run.args()[0].name, "x");
  EXPECT_STREQ(run.args()[1].name, "s");
  EXPECT_STREQ(run.args()[2].name, "relu");  // the value is "y"
  EXPECT_STREQ(run.args()[3].name, "pool");  // the value is "z"
}

TEST(SimStrict, ReportsDriverRelease110ByDefault) {
  Session s;
  ASSERT_EQ(s.open(), "");
  ze_driver_properties_t driver{};
  driver.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
  ASSERT_EQ(zeDriverGetProperties(s.driver, &driver), ZE_RESULT_SUCCESS);
  EXPECT_EQ(driver.driverVersion, ZE_MAKE_VERSION(1, 10));  // the default release
}

TEST(SimStrict, BuildFlagsAreCheckedAgainstTheArguments) {
  Session s;
  ASSERT_EQ(s.open(), "");
  const std::vector<uint8_t> payload = fp32_payload();
  ze_graph_handle_t handle = nullptr;
  const char* good =
      "--inputs_precisions=\"x:FP32 s:FP32\" --inputs_layouts=\"x:NCHW s:NCHW\" "
      "--outputs_precisions=\"relu:FP32 pool:fp32\" --outputs_layouts=\"0:NCHW 1:NCHW\" "
      "--config PERFORMANCE_HINT=\"LATENCY\"";
  ASSERT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, payload, &handle, good), ZE_RESULT_SUCCESS);
  EXPECT_EQ(s.graph->pfnDestroy(handle), ZE_RESULT_SUCCESS);
  struct Bad {
    const char* flags;
    const char* logged;
  };
  for (const Bad& bad : {
           Bad{"--inputs_precisions=\"x:FP16 s:FP32\"", "'x' is FP32, not FP16"},
           Bad{"--inputs_precisions=\"x:FP32\"", "lists 1 of 2 arguments"},
           Bad{"--outputs_precisions=\"y:FP32 z:FP32\"", "'y' is not argument 0 ('relu')"},
           Bad{"--inputs_precision=\"x:FP32 s:FP32\"", "unknown option"},
       }) {
    handle = nullptr;
    EXPECT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, payload, &handle, bad.flags),
              ZE_RESULT_ERROR_INVALID_ARGUMENT)
        << bad.flags;
    EXPECT_NE(build_log(s).find(bad.logged), std::string::npos) << build_log(s);
  }
}

// Intel's driver before 1.10 refuses a graph without build flags; 1.10 takes one.
TEST_F(SimFaultTest, NullBuildFlagsRefusedAtDriver18AndAcceptedAt110) {
  for (const char* version : {"driver_version=1.8", "driver_version=1.10"}) {
    const bool old = std::string(version) == "driver_version=1.8";
    EXPECT_EXIT(
        run_with_faults(version,
                        [old] {
                          Session s;
                          const std::string opened = s.open();
                          if (!opened.empty()) return opened;
                          const std::vector<uint8_t> payload = test_payload();
                          const ze_result_t none =
                              old ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_SUCCESS;
                          ze_graph_handle_t handle = nullptr;
                          ZE_EXPECT_RESULT(none, s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE,
                                                                payload, &handle, nullptr));
                          handle = nullptr;
                          ZE_EXPECT_RESULT(none, s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE,
                                                                payload, &handle, ""));
                          if (old) {
                            CHECK_THAT(build_log(s).find("pBuildFlags") != std::string::npos,
                                       "log: " + build_log(s));
                          }
                          handle = nullptr;
                          ZE_CHECK(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, payload, &handle,
                                                  "--inputs_precisions=\"x:FP32 s:FP32\""));
                          return std::string();
                        }),
        ::testing::ExitedWithCode(0), "")
        << version;
  }
}

TEST(SimStrict, The256thGraphOfAContextIsRefused) {
  Session s;
  ASSERT_EQ(s.open(), "");
  const std::vector<uint8_t> payload = test_payload();
  std::vector<ze_graph_handle_t> graphs(255, nullptr);
  for (ze_graph_handle_t& graph : graphs) {
    ASSERT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, payload, &graph), ZE_RESULT_SUCCESS);
  }
  ze_graph_handle_t extra = nullptr;
  EXPECT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, payload, &extra),
            ZE_RESULT_ERROR_UNINITIALIZED);  // as misleading as Intel's
  EXPECT_EQ(s.graph->pfnDestroy(graphs.back()), ZE_RESULT_SUCCESS);
  graphs.pop_back();
  ASSERT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, payload, &extra), ZE_RESULT_SUCCESS);
  graphs.push_back(extra);
  for (ze_graph_handle_t graph : graphs) EXPECT_EQ(s.graph->pfnDestroy(graph), ZE_RESULT_SUCCESS);
}

TEST(SimStrict, Bf16IsRefusedWithTheReasonInTheBuildLog) {
  Session s;
  ASSERT_EQ(s.open(), "");
  const std::vector<uint8_t> bf16 =
      edited_payload(fp32_payload(), "precision=\"FP32\"", "precision=\"BF16\"");
  ze_graph_handle_t handle = nullptr;
  EXPECT_EQ(s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, bf16, &handle),
            ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
  EXPECT_NE(build_log(s).find("BF16"), std::string::npos) << build_log(s);
  // The query leaves the bf16 layers out.
  EXPECT_EQ(supported_layers(s, bf16).find("<relu>"), std::string::npos);
}

TEST(SimStrict, QueryListsTheLayersTheCompilerTakes) {
  Session s;
  ASSERT_EQ(s.open(), "");
  const std::vector<uint8_t> payload = fp32_payload();
  const std::string all = supported_layers(s, payload);
  for (const char* layer : {"<x>", "<conv>", "<add>", "<relu>", "<pool>"}) {
    EXPECT_NE(all.find(layer), std::string::npos) << layer << " in " << all;
  }
  // A layer type the compiler's table lacks is left out; the others stay.
  const std::string some =
      supported_layers(s, edited_payload(payload, "type=\"Relu\" version=\"opset1\"",
                                         "type=\"Mish\" version=\"opset4\""));
  EXPECT_EQ(some.find("<relu>"), std::string::npos) << some;
  EXPECT_NE(some.find("<conv>"), std::string::npos) << some;
}

TEST(SimStrict, GeluTanhComputesTheErfForm) {
  Graph g;
  g.opset = 20;
  const ValueId x = g.add_value("x", DType::kF32, Shape({4}));
  const ValueId y = g.add_value("y", DType::kF32, Shape({4}));
  g.add_input(x);
  Node gelu{"gelu", "Gelu", "", {x}, {y}, {}};
  gelu.attributes["approximate"] = std::string("tanh");
  g.add_node(std::move(gelu));
  g.add_output(y);
  for (const bool erf : {false, true}) {
    auto rewritten = with_fp16_numerics(g, erf);
    ASSERT_TRUE(rewritten.is_ok()) << rewritten.status().message();
    size_t gelus = 0;
    for (const Node& node : rewritten->nodes()) {
      if (node.op_type != "Gelu") continue;
      ++gelus;
      EXPECT_EQ(node.attr_string("approximate", "none"), erf ? "none" : "tanh");
    }
    EXPECT_EQ(gelus, 1u);
  }
}

// The lenient driver names outputs after their values: what binding by name relied on.
TEST_F(SimFaultTest, LenientNamesOutputsAfterTheirValues) {
  EXPECT_EXIT(run_with_faults("lenient=1",
                              [] {
                                Session s;
                                const std::string opened = s.open();
                                if (!opened.empty()) return opened;
                                GraphRun run(s);
                                const std::string created =
                                    run.create(ZE_GRAPH_FORMAT_NGRAPH_LITE, fp32_payload());
                                if (!created.empty()) return created;
                                CHECK_THAT(std::string(run.args()[2].name) == "y" &&
                                               std::string(run.args()[3].name) == "z",
                                           "outputs not named after their values");
                                return std::string();
                              }),
              ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace hsched::zesim
