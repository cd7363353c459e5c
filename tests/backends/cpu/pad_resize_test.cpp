// Conformance of Pad and Resize (pad_kernels.cpp, resize_kernels.cpp) against plain references,
// plus ONNX's own backend-test vectors for Resize.
#include <array>
#include <cmath>

#include "layout_test_util.h"

namespace hsched::cpu::test {
namespace {

std::optional<int64_t> pad_source(int64_t i, int64_t d, const std::string& mode) {
  if (i >= 0 && i < d) return i;
  if (mode == "constant") return std::nullopt;
  if (mode == "edge") return i < 0 ? 0 : d - 1;
  if (mode == "wrap") return ((i % d) + d) % d;
  while (i < 0 || i >= d) i = i < 0 ? -i : 2 * (d - 1) - i;  // reflect, one bounce at a time
  return i;
}

void check_pad(DType t, const std::vector<int64_t>& dims, const std::vector<int64_t>& pads,
               const std::string& mode, int64_t opset, bool constant_pads = true) {
  const Tensor x = pattern(t, dims, 6);
  const size_t rank = dims.size();
  std::vector<int64_t> out_dims(rank);
  for (size_t a = 0; a < rank; ++a) out_dims[a] = dims[a] + pads[a] + pads[a + rank];
  std::vector<std::byte> fill(dtype_size(t));
  Tensor value(t, {});
  if (t == DType::kF32) {
    value.values<float>()[0] = 2.5f;
  } else if (t == DType::kI64) {
    value.values<int64_t>()[0] = -7;
  }
  std::memcpy(fill.data(), value.raw(), fill.size());
  const Tensor want = reference(
      x, out_dims,
      [&](const Index& o) -> std::optional<Index> {
        Index i(rank);
        for (size_t a = 0; a < rank; ++a) {
          const auto s = pad_source(o[a] - pads[a], dims[a], mode);
          if (!s) return std::nullopt;
          i[a] = *s;
        }
        return i;
      },
      fill);
  AttributeMap attrs = {{"mode", mode}};
  std::vector<OpInput> inputs = {{x}};
  if (opset < 11) {
    attrs["pads"] = pads;
    if (t == DType::kF32) attrs["value"] = 2.5f;
    if (t == DType::kI64) attrs["value"] = -7.0f;
  } else {
    inputs.push_back({i64({static_cast<int64_t>(pads.size())}, pads), constant_pads});
    if (t == DType::kF32 || t == DType::kI64) inputs.push_back({value, true});
  }
  EXPECT_TRUE(all_close(run1("Pad", attrs, inputs, t, out_dims, opset), want))
      << mode << " opset " << opset << " " << dtype_name(t);
}

TEST(CpuLayout, PadModes) {
  for (const std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    for (DType t : {DType::kF32, DType::kI64, DType::kU8}) {
      check_pad(t, {2, 5, 7}, {0, 2, 3, 1, 0, 4}, mode, 13);
      check_pad(t, {3, 4}, {1, 1, 2, 3}, mode, 13, false);
      check_pad(t, {1, 3, 6, 9}, {0, 0, 1, 1, 0, 0, 1, 1}, mode, 11);
    }
    if (mode != "wrap") check_pad(DType::kF32, {2, 3, 4}, {1, 0, 2, 0, 2, 1}, mode, 2);
    check_pad(DType::kF32, {4, 5, 6}, {0, -1, 1, -2, 1, -3}, mode, 13);  // negative pads crop
    check_pad(DType::kF32, {8, 64, 64}, {0, 3, 3, 0, 3, 3}, mode, 13);   // above the grain
  }
  check_pad(DType::kF32, {2, 0, 3}, {0, 1, 0, 0, 2, 0}, "constant", 13);
  check_pad(DType::kBool, {3, 3}, {1, 1, 1, 1}, "edge", 13);
  check_pad(DType::kF32, {5}, {7, 9}, "reflect", 13);  // pads past the edge keep bouncing
}

TEST(CpuLayout, PadAxesInputOpset18) {
  const Tensor x = pattern(DType::kF32, {2, 3, 4});
  const Tensor want = reference(
      x, {2, 3, 7},
      [&](const Index& o) -> std::optional<Index> {
        if (o[2] < 1 || o[2] >= 5) return std::nullopt;
        return Index{o[0], o[1], o[2] - 1};
      },
      std::vector<std::byte>(4));
  const Tensor out = run1(
      "Pad", {}, {{x}, {i64({2}, {1, 2}), true}, {Tensor(), false, true}, {i64({1}, {-1}), true}},
      DType::kF32, {2, 3, 7}, 18);
  EXPECT_TRUE(all_close(out, want));
}

// ---------------------------------------------------------------- Resize

Tensor run_resize(const Tensor& x, const AttributeMap& attrs, const std::vector<float>& scales,
                  const std::vector<int64_t>& out_dims, int64_t opset = 13,
                  const std::vector<float>& roi = {}, bool use_sizes = false) {
  std::vector<OpInput> inputs = {{x}};
  const auto n = static_cast<int64_t>(x.dims().size());
  inputs.push_back(roi.empty() ? OpInput{Tensor(), false, true}
                               : OpInput{f32({static_cast<int64_t>(roi.size())}, roi), true});
  if (use_sizes) {
    inputs.push_back({Tensor(), false, true});
    inputs.push_back({i64({n}, out_dims), true});
  } else {
    inputs.push_back({f32({n}, scales), true});
  }
  return run1("Resize", attrs, inputs, x.dtype(), out_dims, opset);
}

TEST(CpuLayout, ResizeOnnxBackendVectors) {
  const Tensor x22 = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor x24 = f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(all_close(
      run_resize(x22, {{"mode", std::string("nearest")}}, {1, 1, 2, 3}, {1, 1, 4, 6}),
      f32({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4})));
  EXPECT_TRUE(all_close(
      run_resize(x24, {{"mode", std::string("nearest")}}, {1, 1, 0.6f, 0.6f}, {1, 1, 1, 2}),
      f32({1, 1, 1, 2}, {1, 3})));
  EXPECT_TRUE(all_close(
      run_resize(x22, {{"mode", std::string("linear")}}, {1, 1, 2, 2}, {1, 1, 4, 4}),
      f32({1, 1, 4, 4},
          {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4})));
  EXPECT_TRUE(
      all_close(run_resize(x22,
                           {{"mode", std::string("linear")},
                            {"coordinate_transformation_mode", std::string("align_corners")}},
                           {1, 1, 2, 2}, {1, 1, 4, 4}),
                f32({1, 1, 4, 4}, {1, 4 / 3.f, 5 / 3.f, 2, 5 / 3.f, 2, 7 / 3.f, 8 / 3.f, 7 / 3.f,
                                   8 / 3.f, 3, 10 / 3.f, 3, 10 / 3.f, 11 / 3.f, 4})));
  EXPECT_TRUE(all_close(
      run_resize(x24, {{"mode", std::string("linear")}}, {1, 1, 0.6f, 0.6f}, {1, 1, 1, 2}),
      f32({1, 1, 1, 2}, {2.6666665f, 4.3333331f})));
  // Resize-10 and Upsample-9: asymmetric, floor up / ceil down.
  const Tensor up =
      run1("Resize", {{"mode", std::string("nearest")}},
           {{x24}, {f32({4}, {1, 1, 0.6f, 0.6f}), true}}, DType::kF32, {1, 1, 1, 2}, 10);
  EXPECT_TRUE(all_close(up, f32({1, 1, 1, 2}, {1, 3})));
  EXPECT_TRUE(all_close(
      run1("Upsample", {{"mode", std::string("nearest")}}, {{x22}, {f32({4}, {1, 1, 2, 3}), true}},
           DType::kF32, {1, 1, 4, 6}, 9),
      f32({1, 1, 4, 6}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4})));
  // tf_crop_and_resize with and without extrapolation.
  Tensor x44(DType::kF32, {1, 1, 4, 4});
  std::iota(x44.values<float>().begin(), x44.values<float>().end(), 1.0f);
  const AttributeMap crop = {{"mode", std::string("linear")},
                             {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                             {"extrapolation_value", 10.0f}};
  EXPECT_TRUE(all_close(
      run_resize(x44, crop, {}, {1, 1, 3, 3}, 13, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}, true),
      f32({1, 1, 3, 3}, {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f})));
  EXPECT_TRUE(all_close(
      run_resize(x44, crop, {}, {1, 1, 3, 3}, 13, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}, true),
      f32({1, 1, 3, 3}, {7.6f, 10, 10, 12.4f, 10, 10, 10, 10, 10})));
}

// Reference nearest: ONNX's formulas written out plainly, per element.
Tensor ref_resize_nearest(const Tensor& x, const std::vector<int64_t>& out_dims,
                          const std::vector<float>& scales, const std::string& coord,
                          const std::string& nearest) {
  return reference(x, out_dims, [&](const Index& o) {
    Index i(o.size());
    for (size_t a = 0; a < o.size(); ++a) {
      const float s = scales[a];
      const auto in = static_cast<float>(x.dims()[a]);
      const auto out = static_cast<float>(out_dims[a]);
      const auto xo = static_cast<float>(o[a]);
      float c = 0;
      if (coord == "half_pixel") c = (xo + 0.5f) / s - 0.5f;
      if (coord == "asymmetric") c = xo / s;
      if (coord == "pytorch_half_pixel") c = out > 1 ? (xo + 0.5f) / s - 0.5f : 0;
      if (coord == "tf_half_pixel_for_nn") c = (xo + 0.5f) / s;
      if (coord == "align_corners") c = out == 1 ? 0 : xo * (in - 1) / (out - 1);
      float r = 0;
      const bool half = c - std::floor(c) == 0.5f;
      if (nearest == "floor") r = std::floor(c);
      if (nearest == "ceil") r = std::ceil(c);
      if (nearest == "round_prefer_floor") r = half ? std::floor(c) : std::round(c);
      if (nearest == "round_prefer_ceil") r = half ? std::ceil(c) : std::round(c);
      i[a] = std::clamp<int64_t>(static_cast<int64_t>(r), 0, x.dims()[a] - 1);
    }
    return std::optional<Index>(i);
  });
}

TEST(CpuLayout, ResizeNearestVaeDecoderStyle) {
  // vae_decoder_small: [1, C, 32, 32] -> x2, nearest, asymmetric, floor.
  const Tensor x = random_f32({1, 64, 32, 32}, 11);
  const AttributeMap attrs = {{"mode", std::string("nearest")},
                              {"coordinate_transformation_mode", std::string("asymmetric")},
                              {"nearest_mode", std::string("floor")}};
  const Tensor want = reference(x, {1, 64, 64, 64}, [](const Index& o) {
    return std::optional<Index>(Index{0, o[1], o[2] / 2, o[3] / 2});
  });
  EXPECT_TRUE(all_close(run_resize(x, attrs, {1, 1, 2, 2}, {1, 64, 64, 64}, 13), want));
  EXPECT_TRUE(all_close(run_resize(x, attrs, {}, {1, 64, 64, 64}, 13, {}, true), want));
}

TEST(CpuLayout, ResizeNearestModesAndDtypes) {
  const std::vector<std::string> coords = {"half_pixel", "asymmetric", "pytorch_half_pixel",
                                           "tf_half_pixel_for_nn", "align_corners"};
  const std::vector<std::string> modes = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"};
  struct Case {
    std::vector<int64_t> in;
    std::vector<float> scales;
  };
  const std::vector<Case> cases = {{{1, 2, 7, 9}, {1, 1, 2.5f, 1.5f}},
                                   {{1, 2, 9, 8}, {1, 1, 0.5f, 0.75f}},
                                   {{2, 3, 5}, {1, 1, 3.0f}},
                                   {{1, 1, 1, 6}, {1, 1, 3.0f, 0.34f}}};
  for (const auto& c : cases) {
    std::vector<int64_t> out;
    for (size_t a = 0; a < c.in.size(); ++a) {
      out.push_back(static_cast<int64_t>(std::floor(static_cast<float>(c.in[a]) * c.scales[a])));
    }
    for (DType t : {DType::kF32, DType::kI64, DType::kU8}) {
      const Tensor x = pattern(t, c.in, 8);
      for (const auto& coord : coords) {
        for (const auto& mode : modes) {
          const AttributeMap attrs = {{"mode", std::string("nearest")},
                                      {"coordinate_transformation_mode", coord},
                                      {"nearest_mode", mode}};
          EXPECT_TRUE(all_close(run_resize(x, attrs, c.scales, out),
                                ref_resize_nearest(x, out, c.scales, coord, mode)))
              << coord << " " << mode << " " << Shape(c.in).to_string();
        }
      }
    }
  }
}

// Reference N-linear in double: 2^k corner sum with the scale given (or out/in).
Tensor ref_resize_linear(const Tensor& x, const std::vector<int64_t>& out_dims,
                         const std::vector<double>& scales, const std::string& coord) {
  const size_t rank = out_dims.size();
  const auto& in = x.dims();
  Tensor out(DType::kF32, out_dims);
  auto dst = out.values<float>();
  const auto src = x.values<float>();
  Index o(rank, 0);
  for (size_t e = 0; e < dst.size(); ++e) {
    std::vector<int64_t> lo(rank), hi(rank);
    std::vector<double> w(rank);
    for (size_t a = 0; a < rank; ++a) {
      double c = coord == "align_corners"
                     ? (out_dims[a] == 1 ? 0 : o[a] * double(in[a] - 1) / double(out_dims[a] - 1))
                 : coord == "asymmetric" ? o[a] / scales[a]
                                         : (o[a] + 0.5) / scales[a] - 0.5;
      if (coord == "pytorch_half_pixel" && out_dims[a] == 1) c = 0;
      c = std::clamp(c, 0.0, double(in[a] - 1));
      lo[a] = static_cast<int64_t>(std::floor(c));
      hi[a] = std::min(lo[a] + 1, in[a] - 1);
      w[a] = c - double(lo[a]);
    }
    double v = 0;
    for (size_t corner = 0; corner < (size_t{1} << rank); ++corner) {
      double weight = 1;
      int64_t off = 0;
      for (size_t a = 0; a < rank; ++a) {
        const bool high = (corner >> a) & 1;
        weight *= high ? w[a] : 1 - w[a];
        off = off * in[a] + (high ? hi[a] : lo[a]);
      }
      v += weight * src[static_cast<size_t>(off)];
    }
    dst[e] = static_cast<float>(v);
    for (size_t a = rank; a-- > 0;) {
      if (++o[a] < out_dims[a]) break;
      o[a] = 0;
    }
  }
  return out;
}

TEST(CpuLayout, ResizeLinearAgainstReference) {
  const Tensor x = random_f32({1, 3, 17, 23}, 12);
  for (const std::string coord :
       {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
    const AttributeMap attrs = {{"mode", std::string("linear")},
                                {"coordinate_transformation_mode", coord}};
    // Sizes: the scale is out/in.
    EXPECT_TRUE(
        all_close(run_resize(x, attrs, {}, {1, 3, 40, 31}, 13, {}, true),
                  ref_resize_linear(x, {1, 3, 40, 31}, {1, 1, 40 / 17.0, 31 / 23.0}, coord)))
        << coord;
    // Scales: the given scale, not out/in, drives the coordinates.
    EXPECT_TRUE(all_close(run_resize(x, attrs, {1, 1, 1.7f, 0.45f}, {1, 3, 28, 10}),
                          ref_resize_linear(x, {1, 3, 28, 10}, {1, 1, 1.7f, 0.45f}, coord)))
        << coord;
    // Three interpolated axes: the separable N-linear path.
    const Tensor v = random_f32({2, 5, 6, 7}, 13);
    EXPECT_TRUE(
        all_close(run_resize(v, attrs, {}, {2, 8, 3, 9}, 13, {}, true),
                  ref_resize_linear(v, {2, 8, 3, 9}, {1, 8 / 5.0, 3 / 6.0, 9 / 7.0}, coord)))
        << coord;
  }
  // Large enough to run in parallel.
  const Tensor big = random_f32({1, 32, 48, 48}, 14);
  EXPECT_TRUE(
      all_close(run_resize(big, {{"mode", std::string("linear")}}, {1, 1, 2, 2}, {1, 32, 96, 96}),
                ref_resize_linear(big, {1, 32, 96, 96}, {1, 1, 2, 2}, "half_pixel")));
}

// Reference cubic resize in double, written as ONNX's reference picks its taps: the 4 input
// positions nearest to the coordinate on the edge-padded axis (the lower ones on a tie, so an
// integer coordinate c reads c-2 .. c+1 with ratio 1), Keys weights, and with exclude_outside
// the taps beyond the edges dropped and the rest renormalised. Axes multiply (tensor product).
Tensor ref_resize_cubic(const Tensor& x, const std::vector<int64_t>& out_dims,
                        const std::vector<double>& scales, const std::string& coord, double a,
                        bool exclude_outside, const std::vector<double>& roi = {},
                        float extrapolation = 0) {
  const size_t rank = out_dims.size();
  const auto& in = x.dims();
  auto keys = [a](double d) {
    d = std::abs(d);
    return d <= 1  ? (a + 2) * d * d * d - (a + 3) * d * d + 1
           : d < 2 ? a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a
                   : 0.0;
  };
  Tensor out(DType::kF32, out_dims);
  auto dst = out.values<float>();
  const auto src = x.values<float>();
  Index o(rank, 0);
  for (size_t e = 0; e < dst.size(); ++e) {
    std::vector<std::array<int64_t, 4>> idx(rank);
    std::vector<std::array<double, 4>> w(rank);
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      const double n_in = double(in[d]), n_out = double(out_dims[d]);
      double c = (o[d] + 0.5) / scales[d] - 0.5;
      if (coord == "asymmetric") c = o[d] / scales[d];
      if (coord == "align_corners") c = out_dims[d] == 1 ? 0 : o[d] * (n_in - 1) / (n_out - 1);
      if (coord == "pytorch_half_pixel" && out_dims[d] == 1) c = 0;
      if (coord == "tf_crop_and_resize") {
        const double r0 = roi[d], r1 = roi[d + rank];
        c = out_dims[d] == 1 ? 0.5 * (r0 + r1) * (n_in - 1)
                             : r0 * (n_in - 1) + o[d] * (r1 - r0) * (n_in - 1) / (n_out - 1);
        outside = outside || c < 0 || c > n_in - 1;
      }
      const bool integral = c == std::floor(c);
      const double ratio = integral ? 1.0 : c - std::floor(c);
      const auto first = static_cast<int64_t>(std::floor(c)) - (integral ? 2 : 1);
      double sum = 0;
      for (int t = 0; t < 4; ++t) {
        const int64_t i = first + t;
        w[d][t] = keys(ratio + 1 - t);
        if (exclude_outside && (i < 0 || i >= in[d])) w[d][t] = 0;
        sum += w[d][t];
        idx[d][t] = std::clamp<int64_t>(i, 0, in[d] - 1);
      }
      if (exclude_outside) {
        for (double& v : w[d]) v /= sum;
      }
    }
    double v = 0;
    for (size_t k = 0; k < (size_t{1} << (2 * rank)); ++k) {
      double weight = 1;
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) {
        const size_t t = (k >> (2 * d)) & 3;
        weight *= w[d][t];
        off = off * in[d] + idx[d][t];
      }
      if (weight != 0) v += weight * src[static_cast<size_t>(off)];
    }
    dst[e] = outside ? extrapolation : static_cast<float>(v);
    for (size_t d = rank; d-- > 0;) {
      if (++o[d] < out_dims[d]) break;
      o[d] = 0;
    }
  }
  return out;
}

TEST(CpuLayout, ResizeCubicOnnxBackendVector) {
  // ONNX's test_resize_upsample_scales_cubic: 4x4 -> 8x8, a = -0.75, half_pixel.
  const Tensor x = f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  const Tensor y = run_resize(x, {{"mode", std::string("cubic")}}, {1, 1, 2, 2}, {1, 1, 8, 8});
  const float row0[] = {0.47265625f, 0.76953125f, 1.24609375f, 1.875f,
                        2.28125f,    2.91015625f, 3.38671875f, 3.68359375f};
  const float col0[] = {0.47265625f, 1.66015625f,  3.56640625f,  6.08203125f,
                        7.70703125f, 10.22265625f, 12.12890625f, 13.31640625f};
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(y.values<float>()[static_cast<size_t>(i)], row0[i], 1e-5) << i;
    EXPECT_NEAR(y.values<float>()[static_cast<size_t>(8 * i)], col0[i], 1e-5) << i;
  }
  // Cubic convolution reproduces a linear ramp away from the edges: 4 -> 3 with align_corners
  // reads 0, 1.5 and 3 exactly.
  const Tensor ramp = f32({1, 4}, {1, 2, 3, 4});
  EXPECT_TRUE(
      all_close(run_resize(ramp,
                           {{"mode", std::string("cubic")},
                            {"coordinate_transformation_mode", std::string("align_corners")}},
                           {}, {1, 3}, 13, {}, true),
                f32({1, 3}, {1, 2.5f, 4})));
}

TEST(CpuLayout, ResizeCubicAgainstReference) {
  const Tensor x = random_f32({1, 2, 9, 11}, 21);
  for (const std::string coord :
       {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
    for (const float a : {-0.75f, -0.5f}) {
      for (const int exclude : {0, 1}) {
        const AttributeMap attrs = {{"mode", std::string("cubic")},
                                    {"coordinate_transformation_mode", coord},
                                    {"cubic_coeff_a", a},
                                    {"exclude_outside", int64_t{exclude}}};
        const std::string what =
            coord + " a=" + std::to_string(a) + " exclude=" + std::to_string(exclude);
        EXPECT_TRUE(all_close(
            run_resize(x, attrs, {}, {1, 2, 20, 6}, 13, {}, true),
            ref_resize_cubic(x, {1, 2, 20, 6}, {1, 1, 20 / 9.0, 6 / 11.0}, coord, a, exclude)))
            << what << " sizes";
        EXPECT_TRUE(
            all_close(run_resize(x, attrs, {1, 1, 1.5f, 2.3f}, {1, 2, 13, 25}),
                      ref_resize_cubic(x, {1, 2, 13, 25}, {1, 1, 1.5f, 2.3f}, coord, a, exclude)))
            << what << " scales";
      }
    }
  }
  // Three resized axes (separable passes through temporaries), one of them of length 1.
  const Tensor v = random_f32({3, 1, 6, 7}, 22);
  EXPECT_TRUE(all_close(
      run_resize(v, {{"mode", std::string("cubic")}}, {}, {5, 3, 6, 4}, 13, {}, true),
      ref_resize_cubic(v, {5, 3, 6, 4}, {5 / 3.0, 3, 1, 4 / 7.0}, "half_pixel", -0.75, false)));
  // tf_crop_and_resize: a roi reaching past the input, the extrapolation value outside it.
  const std::vector<float> roi = {0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.3f};
  const AttributeMap crop = {{"mode", std::string("cubic")},
                             {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                             {"extrapolation_value", 7.5f}};
  EXPECT_TRUE(
      all_close(run_resize(x, crop, {}, {1, 2, 7, 8}, 13, roi, true),
                ref_resize_cubic(x, {1, 2, 7, 8}, {1, 1, 7 / 9.0, 8 / 11.0}, "tf_crop_and_resize",
                                 -0.75, false, {roi.begin(), roi.end()}, 7.5f)));
  // Large enough to run in parallel.
  const Tensor big = random_f32({1, 16, 40, 40}, 23);
  EXPECT_TRUE(
      all_close(run_resize(big, {{"mode", std::string("cubic")}}, {1, 1, 2, 2}, {1, 16, 80, 80}),
                ref_resize_cubic(big, {1, 16, 80, 80}, {1, 1, 2, 2}, "half_pixel", -0.75, false)));
  // Scales far from the output's length put coordinates far outside the input: the taps clamp
  // to the edge (or, all excluded, give 0) instead of reading out of bounds.
  const Tensor e = f32({1, 3}, {1, 2, 4});
  const AttributeMap asym = {{"mode", std::string("cubic")},
                             {"coordinate_transformation_mode", std::string("asymmetric")}};
  EXPECT_TRUE(all_close(run_resize(e, asym, {1, 1e-30f}, {1, 3}), f32({1, 3}, {1, 4, 4})));
}

TEST(CpuLayout, ResizeRejectsWhatItLacks) {
  const Tensor x = pattern(DType::kF32, {1, 1, 4, 4});
  const std::vector<OpInput> inputs = {
      {x}, {Tensor(), false, true}, {f32({4}, {1, 1, 2, 2}), true}};
  auto r = run_op("Resize", {{"mode", std::string("cubic")}, {"antialias", int64_t{1}}}, inputs,
                  {{DType::kF32, {1, 1, 8, 8}}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("test_Resize"), std::string::npos);
  // Cubic is f32 only; a non-finite cubic_coeff_a is malformed.
  const Tensor xi = pattern(DType::kI64, {1, 1, 4, 4});
  r = run_op("Resize", {{"mode", std::string("cubic")}},
             {{xi}, {Tensor(), false, true}, {f32({4}, {1, 1, 2, 2}), true}},
             {{DType::kI64, {1, 1, 8, 8}}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnimplemented);
  r = run_op("Resize", {{"mode", std::string("cubic")}, {"cubic_coeff_a", NAN}}, inputs,
             {{DType::kF32, {1, 1, 8, 8}}});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace hsched::cpu::test
