// Each fault of HSCHED_ZE_SIM_FAULTS through the loader, each in a fresh process (the driver reads
// the faults once, at zeInit): a build delay that must not hold up exit, a device lost after one
// execution, out of device memory, corrupt output, and bad values named and ignored.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/level_zero/sim/faults.h"
#include "backends/level_zero/sim/native_blob.h"
#include "backends/level_zero/sim/npu_numerics.h"
#include "sim_test_util.h"

namespace hsched::zesim {
namespace {

// --- faults, each in a fresh process ----------------------------------------------------------

TEST_F(SimFaultTest, BuildDelayDoesNotHoldUpExit) {
  EXPECT_EXIT(
      run_with_faults(
          "build_delay_s=60",
          [] {
            Session s;
            const std::string opened = s.open();
            if (!opened.empty()) return opened;
            // The payload and session stay alive for the abandoned build (statics: the process
            // ends with them reachable, so LeakSanitizer has nothing to report).
            static std::vector<uint8_t> payload_storage;
            static std::atomic<bool> returned_storage{false};
            payload_storage = test_payload();
            auto* payload = &payload_storage;
            auto* returned = &returned_storage;
            std::thread([&s, payload, returned] {
              ze_graph_handle_t handle = nullptr;
              s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, *payload, &handle);
              *returned = true;
            }).detach();
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            CHECK_THAT(!*returned, "pfnCreate returned during its 60 s build delay");
            std::exit(
                0);  // a normal exit (static destructors, the loader's teardown) while it sleeps
            return std::string();
          }),
      ::testing::ExitedWithCode(0), "");
}

TEST_F(SimFaultTest, DeviceLostAfterOneExecution) {
  EXPECT_EXIT(
      run_with_faults(
          "device_lost_after=1",
          [] {
            Session s;
            const std::string opened = s.open();
            if (!opened.empty()) return opened;
            const auto expected = cpu_reference();
            std::vector<std::vector<float>> outputs;
            {
              GraphRun run(s);
              const std::string created = run.create(ZE_GRAPH_FORMAT_NGRAPH_LITE, test_payload());
              if (!created.empty()) return created;
              const std::string first = run.run(test_inputs(), &outputs);
              if (!first.empty()) return "first execution: " + first;
              CHECK_THAT(worst_excess(outputs[0], expected[0], 5e-2, 5e-2) <= 0,
                         "first execution wrong");
              const std::string second =
                  run.run(test_inputs(), &outputs, ZE_RESULT_ERROR_DEVICE_LOST);
              if (!second.empty()) return "second execution: " + second;
              ZE_EXPECT_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeCommandQueueSynchronize(s.queue, 0));
              ZE_EXPECT_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeDeviceGetStatus(s.device));
              ze_host_mem_alloc_desc_t host_desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
              void* memory = nullptr;
              ZE_EXPECT_RESULT(ZE_RESULT_ERROR_DEVICE_LOST,
                               zeMemAllocHost(s.context, &host_desc, 64, 0, &memory));
              ze_graph_handle_t handle = nullptr;
              ZE_EXPECT_RESULT(
                  ZE_RESULT_ERROR_DEVICE_LOST,
                  s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, test_payload(), &handle));
            }  // destroying everything still works
            ZE_CHECK(zeCommandQueueDestroy(s.queue));
            s.queue = nullptr;
            ZE_CHECK(zeContextDestroy(s.context));
            s.context = nullptr;
            return std::string();
          }),
      ::testing::ExitedWithCode(0), "");
}

TEST_F(SimFaultTest, OutOfDeviceMemory) {
  EXPECT_EXIT(
      run_with_faults(
          "oom=1",
          [] {
            Session s;
            const std::string opened = s.open();
            if (!opened.empty()) return opened;
            ze_host_mem_alloc_desc_t host_desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
            ze_device_mem_alloc_desc_t device_desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr,
                                                   0, 0};
            void* memory = nullptr;
            ZE_EXPECT_RESULT(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
                             zeMemAllocDevice(s.context, &device_desc, 64, 0, s.device, &memory));
            ZE_EXPECT_RESULT(
                ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
                zeMemAllocShared(s.context, &device_desc, &host_desc, 64, 0, s.device, &memory));
            ZE_CHECK(
                zeMemAllocHost(s.context, &host_desc, 64, 0, &memory));  // host memory still works
            ZE_CHECK(zeMemFree(s.context, memory));
            ze_graph_handle_t handle = nullptr;
            ZE_EXPECT_RESULT(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
                             s.create_graph(ZE_GRAPH_FORMAT_NGRAPH_LITE, test_payload(), &handle));
            return std::string();
          }),
      ::testing::ExitedWithCode(0), "");
}

TEST_F(SimFaultTest, CorruptOutput) {
  EXPECT_EXIT(run_with_faults("corrupt_output=1",
                              [] {
                                Session s;
                                const std::string opened = s.open();
                                if (!opened.empty()) return opened;
                                GraphRun run(s);
                                const std::string created =
                                    run.create(ZE_GRAPH_FORMAT_NGRAPH_LITE, test_payload());
                                if (!created.empty()) return created;
                                std::vector<std::vector<float>> outputs;
                                const std::string ran = run.run(test_inputs(), &outputs);
                                if (!ran.empty()) return ran;
                                const auto expected = cpu_reference();
                                for (size_t o = 0; o < outputs.size(); ++o) {
                                  for (size_t i = 0; i < outputs[o].size(); ++i) {
                                    const double diff = std::abs(
                                        static_cast<double>(outputs[o][i]) - expected[o][i]);
                                    CHECK_THAT(diff > 5e-2 + 5e-2 * std::abs(expected[o][i]),
                                               "output " + std::to_string(o) + " element " +
                                                   std::to_string(i) + " is not corrupt");
                                  }
                                }
                                return std::string();
                              }),
              ::testing::ExitedWithCode(0), "");
}

TEST_F(SimFaultTest, BadFaultValuesAreNamedAndIgnored) {
  EXPECT_EXIT(
      run_with_faults("oom=maybe,build_delay_s=soon,whatever=1",
                      [] {
                        Session s;
                        const std::string opened = s.open();
                        if (!opened.empty()) return opened;
                        GraphRun run(s);  // no fault applies: the graph builds at once and runs
                        const std::string created =
                            run.create(ZE_GRAPH_FORMAT_NGRAPH_LITE, test_payload());
                        if (!created.empty()) return created;
                        std::vector<std::vector<float>> outputs;
                        return run.run(test_inputs(), &outputs);
                      }),
      ::testing::ExitedWithCode(0), "key 'oom'.*key 'build_delay_s'.*key 'whatever'");
}

}  // namespace
}  // namespace hsched::zesim
