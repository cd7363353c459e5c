// The op layer's convolutions (backends/opencl/kernels/ops_spatial.h) on the first OpenCL device,
// fp32 and fp16 storage: channel slices read and written in place, a Concat's copy carried, and
// Winograd's F(2x2, 3x3) against the implicit GEMM. Skipped (never passed) without an OpenCL
// device.
#include <cmath>
#include <string>
#include <vector>

#include "backends/opencl/kernels/ops_spatial.h"
#include "backends/opencl/ops_test_util.h"

namespace hsched::opencl {
namespace {

// A Conv reading channels 3..7 of a 9-channel input in place (ConvParams::read_from) gives what
// it gives on those channels copied out, by each algorithm, batch 1 and 2.
TEST_P(OpenClOpsTest, ConvReadsAChannelSliceInPlace) {
  for (const int64_t n : {1, 2}) {
    const Shape full = {n, 9, 6, 5}, part = {n, 4, 6, 5}, w_shape = {5, 4, 1, 1};
    const Shape y_shape = {n, 5, 6, 5};
    const std::vector<float> x = stored(random_values(count_of(full), -1, 1, 83));
    const std::vector<float> w = stored(random_values(count_of(w_shape), -1, 1, 89));
    std::vector<float> sliced;
    for (int64_t b = 0; b < n; ++b) {
      const auto first = x.begin() + (b * 9 + 3) * 30;
      sliced.insert(sliced.end(), first, first + 4 * 30);
    }
    cl::Buffer x_buffer = upload(x), sliced_buffer = upload(sliced), w_buffer = upload(w);
    for (const ConvAlgorithm algorithm : {ConvAlgorithm::kImplicitGemm, ConvAlgorithm::kIm2colGemm,
                                          ConvAlgorithm::kDirect, ConvAlgorithm::kRows}) {
      ConvParams params;
      params.window.kernel = {1, 1};
      params.algorithm = algorithm;
      cl::Buffer want_buffer = output(count_of(y_shape)), got_buffer = output(count_of(y_shape));
      auto want = enqueue_conv(ops(), queue_, sliced_buffer, part, w_buffer, w_shape, nullptr,
                               params, want_buffer, y_shape);
      params.read_from = std::make_pair(int64_t{9}, int64_t{3});
      auto got = enqueue_conv(ops(), queue_, x_buffer, part, w_buffer, w_shape, nullptr, params,
                              got_buffer, y_shape);
      expect_close(download(got, got_buffer, count_of(y_shape)),
                   download(want, want_buffer, count_of(y_shape)),
                   "Conv of a channel slice, batch " + std::to_string(n) + ", algorithm " +
                       std::to_string(static_cast<int>(algorithm)));
    }
  }
}

// A Conv storing its channels interleaved in a larger tensor (ConvParams::stored_in {11, 1},
// stored_step 2: a Concat followed by a channel shuffle, written in place) puts channel c at
// 1 + 2c and touches no other channel, by each algorithm, batch 1 and 2; a step reaching past the
// tensor is refused.
TEST_P(OpenClOpsTest, ConvStoresInterleavedChannelsInPlace) {
  for (const int64_t n : {1, 2}) {
    const Shape x_shape = {n, 4, 6, 5}, w_shape = {5, 4, 3, 3}, y_shape = {n, 5, 6, 5};
    const int64_t plane = 30, full = n * 11 * plane;
    cl::Buffer x_buffer = upload(stored(random_values(count_of(x_shape), -1, 1, 97)));
    cl::Buffer w_buffer = upload(stored(random_values(count_of(w_shape), -1, 1, 101)));
    for (const ConvAlgorithm algorithm : {ConvAlgorithm::kImplicitGemm, ConvAlgorithm::kIm2colGemm,
                                          ConvAlgorithm::kDirect, ConvAlgorithm::kRows}) {
      const std::string what = "batch " + std::to_string(n) + ", algorithm " +
                               std::to_string(static_cast<int>(algorithm));
      ConvParams params;
      params.window.kernel = {3, 3};
      params.window.pads_begin = {1, 1};
      params.algorithm = algorithm;
      cl::Buffer want_buffer = output(count_of(y_shape)), got_buffer = output(full);
      const std::vector<float> want =
          download(enqueue_conv(ops(), queue_, x_buffer, x_shape, w_buffer, w_shape, nullptr,
                                params, want_buffer, y_shape),
                   want_buffer, count_of(y_shape));
      params.stored_in = std::make_pair(int64_t{11}, int64_t{1});
      params.stored_step = 2;
      const std::vector<float> got =
          download(enqueue_conv(ops(), queue_, x_buffer, x_shape, w_buffer, w_shape, nullptr,
                                params, got_buffer, y_shape),
                   got_buffer, full);
      ASSERT_EQ(got.size(), static_cast<size_t>(full)) << what;
      std::vector<float> interleaved;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t c = 0; c < 11; ++c) {
          const auto begin = got.begin() + (b * 11 + c) * plane;
          if (c % 2 == 1) {
            interleaved.insert(interleaved.end(), begin, begin + plane);
            continue;
          }
          for (auto it = begin; it != begin + plane; ++it) EXPECT_TRUE(std::isnan(*it)) << what;
        }
      }
      expect_close(interleaved, want, "Conv stored interleaved, " + what);
      params.stored_in = std::make_pair(int64_t{10}, int64_t{1});  // 1 + 4 * 3 is past 9
      params.stored_step = 3;
      EXPECT_FALSE(enqueue_conv(ops(), queue_, x_buffer, x_shape, w_buffer, w_shape, nullptr,
                                params, got_buffer, y_shape)
                       .is_ok())
          << what;
    }
  }
}

// A Conv carrying a Concat's copy (ConvParams::carried: the other input of a shuffled Concat it
// writes its channels of, interleaved) stores both, in its launch (implicit GEMM) or after it
// (the others), batch 1 and 2; a copy reaching past its source is refused.
TEST_P(OpenClOpsTest, ConvCarriesAConcatCopy) {
  for (const int64_t n : {1, 2}) {
    const Shape x_shape = {n, 4, 6, 5}, w_shape = {5, 4, 3, 3}, y_shape = {n, 5, 6, 5};
    const int64_t plane = 30, full = n * 10 * plane;
    cl::Buffer x_buffer = upload(stored(random_values(count_of(x_shape), -1, 1, 131)));
    cl::Buffer w_buffer = upload(stored(random_values(count_of(w_shape), -1, 1, 137)));
    const std::vector<float> other = stored(random_values(count_of(y_shape), -1, 1, 139));
    cl::Buffer other_buffer = upload(other);
    auto copies = concat_copies({y_shape, y_shape}, 1, {}, 2);
    ASSERT_TRUE(copies.is_ok()) << copies.status().message();
    for (const ConvAlgorithm algorithm : {ConvAlgorithm::kImplicitGemm, ConvAlgorithm::kIm2colGemm,
                                          ConvAlgorithm::kDirect, ConvAlgorithm::kRows}) {
      const std::string what = "batch " + std::to_string(n) + ", algorithm " +
                               std::to_string(static_cast<int>(algorithm));
      ConvParams params;
      params.window.kernel = {3, 3};
      params.window.pads_begin = {1, 1};
      params.algorithm = algorithm;
      cl::Buffer want_buffer = output(count_of(y_shape)), got_buffer = output(full);
      const std::vector<float> want =
          download(enqueue_conv(ops(), queue_, x_buffer, x_shape, w_buffer, w_shape, nullptr,
                                params, want_buffer, y_shape),
                   want_buffer, count_of(y_shape));
      params.stored_in = std::make_pair(int64_t{10}, int64_t{1});
      params.stored_step = 2;
      params.carried = ConvParams::CarriedCopy{&other_buffer, count_of(y_shape), (*copies)[0]};
      const std::vector<float> got =
          download(enqueue_conv(ops(), queue_, x_buffer, x_shape, w_buffer, w_shape, nullptr,
                                params, got_buffer, y_shape),
                   got_buffer, full);
      ASSERT_EQ(got.size(), static_cast<size_t>(full)) << what;
      std::vector<float> convolved, copied;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t c = 0; c < 10; ++c) {
          const auto begin = got.begin() + (b * 10 + c) * plane;
          (c % 2 == 1 ? convolved : copied)
              .insert((c % 2 == 1 ? convolved : copied).end(), begin, begin + plane);
        }
      }
      expect_close(convolved, want, "Conv carrying a copy, " + what);
      EXPECT_EQ(copied, other) << what;
      params.carried->x_elements = count_of(y_shape) - 1;
      EXPECT_FALSE(enqueue_conv(ops(), queue_, x_buffer, x_shape, w_buffer, w_shape, nullptr,
                                params, got_buffer, y_shape)
                       .is_ok())
          << what;
    }
  }
}

// Winograd's F(2x2, 3x3) (kWinograd) gives the implicit GEMM's values with what a Conv fuses (a
// bias, a residual Add, an activation, per-batch input factors) over partial tiles (odd output
// sizes), asymmetric pads and batch 2, in either storage (fp16: the transforms stored in fp16
// too). It needs the weights on the host, and refuses a 5x5 kernel and stride 2.
TEST_P(OpenClOpsTest, ConvWinogradMatchesTheImplicitGemm) {
  struct Case {
    const char* name;
    Shape x, y;
    std::vector<int64_t> pads_begin;
  };
  const std::vector<Case> cases = {
      {"16 to 20 channels, 11x13, pads 1", {2, 16, 11, 13}, {2, 20, 11, 13}, {1, 1}},
      {"24 to 32 channels, 20x20 unpadded", {1, 24, 20, 20}, {1, 32, 18, 18}, {0, 0}},
      {"asymmetric pads", {1, 16, 9, 8}, {1, 17, 9, 9}, {0, 2}},
  };
  uint32_t seed = 300;
  for (const Case& c : cases) {
    const Shape w_shape = {c.y[1], c.x[1], 3, 3};
    const std::vector<float> w = stored(random_values(count_of(w_shape), -0.3f, 0.3f, ++seed));
    cl::Buffer x_buffer = upload(stored(random_values(count_of(c.x), -2, 2, ++seed)));
    cl::Buffer w_buffer = upload(w);
    cl::Buffer bias = upload(stored(random_values(c.y[1], -1, 1, ++seed)));
    cl::Buffer residual = upload(stored(random_values(count_of(c.y), -1, 1, ++seed)));
    cl::Buffer factors = upload(stored(random_values(c.x[0] * c.x[1], 0.5f, 1.5f, ++seed)));
    ConvParams params;
    params.window.kernel = {3, 3};
    params.window.pads_begin = c.pads_begin;
    params.residual = &residual;
    params.activation = Activation{.op = UnaryOp::kRelu};
    params.input_scale = &factors;
    params.input_scale_per_batch = true;
    params.weights_on_host = w.data();
    params.algorithm = ConvAlgorithm::kImplicitGemm;
    cl::Buffer want_buffer = output(count_of(c.y)), got_buffer = output(count_of(c.y));
    const std::vector<float> want = download(enqueue_conv(ops(), queue_, x_buffer, c.x, w_buffer,
                                                          w_shape, &bias, params, want_buffer, c.y),
                                             want_buffer, count_of(c.y));
    params.algorithm = ConvAlgorithm::kWinograd;
    auto got = enqueue_conv(ops(), queue_, x_buffer, c.x, w_buffer, w_shape, &bias, params,
                            got_buffer, c.y);
    expect_close(download(got, got_buffer, count_of(c.y)), want, std::string("Winograd ") + c.name);
    params.weights_on_host = nullptr;
    EXPECT_FALSE(enqueue_conv(ops(), queue_, x_buffer, c.x, w_buffer, w_shape, &bias, params,
                              got_buffer, c.y)
                     .is_ok())
        << c.name << ": no weights on the host";
  }
  ConvParams strided;
  strided.window.kernel = {3, 3};
  strided.window.strides = {2, 2};
  strided.algorithm = ConvAlgorithm::kWinograd;
  const std::vector<float> w(16 * 16 * 9, 0.1f), w5(16 * 16 * 25, 0.1f);
  strided.weights_on_host = w.data();
  cl::Buffer x_buffer = upload(std::vector<float>(16 * 10 * 10, 1.0f));
  cl::Buffer w_buffer = upload(w), w5_buffer = upload(w5), y_buffer = output(16 * 4 * 4);
  EXPECT_FALSE(enqueue_conv(ops(), queue_, x_buffer, {1, 16, 10, 10}, w_buffer, {16, 16, 3, 3},
                            nullptr, strided, y_buffer, {1, 16, 4, 4})
                   .is_ok());
  ConvParams five = strided;
  five.window.kernel = {5, 5};
  five.window.strides.clear();
  five.weights_on_host = w5.data();
  cl::Buffer y6_buffer = output(16 * 6 * 6);
  EXPECT_FALSE(enqueue_conv(ops(), queue_, x_buffer, {1, 16, 10, 10}, w5_buffer, {16, 16, 5, 5},
                            nullptr, five, y6_buffer, {1, 16, 6, 6})
                   .is_ok());
}

}  // namespace
}  // namespace hsched::opencl
