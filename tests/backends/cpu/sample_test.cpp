// Conformance of GridSample and RoiAlign (sample_kernels.cpp): hand-computed values, plain
// references written from the operators' text, and malformed nodes and data that must be
// refused without reading out of bounds.
#include <cmath>
#include <limits>
#include <string>

#include "backends/cpu/op_test_util.h"

namespace hsched::cpu::test {
namespace {

Result<Tensor> run1(const std::string& op, const AttributeMap& attrs,
                    const std::vector<OpInput>& inputs, const std::vector<int64_t>& out_dims,
                    int64_t opset = 16) {
  HSCHED_ASSIGN_OR_RETURN(auto outs, run_op(op, attrs, inputs, {{DType::kF32, out_dims}}, opset));
  return std::move(outs[0]);
}

Tensor expect_ok(Result<Tensor> r) {
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? std::move(r.value()) : Tensor(DType::kF32, {0});
}

// ---- GridSample ---------------------------------------------------------------------------------

AttributeMap grid_attrs(const std::string& mode, const std::string& padding, int64_t align) {
  return {{"mode", mode}, {"padding_mode", padding}, {"align_corners", align}};
}

Tensor grid_sample(const Tensor& x, const Tensor& grid, const AttributeMap& attrs) {
  const auto& xd = x.dims();
  const auto& gd = grid.dims();
  return expect_ok(run1("GridSample", attrs, {{x}, {grid}}, {xd[0], xd[1], gd[1], gd[2]}));
}

TEST(CpuSample, GridSampleHandComputed) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  // Points (x, y): the top-left corner, the centre, the bottom-right corner, and one outside.
  const Tensor grid = f32({1, 1, 4, 2}, {-1, -1, 0, 0, 1, 1, 2, -1});
  // align_corners: the corners are pixel centres; (2, -1) is pixel (1.5, 0), half a pixel right
  // of the top-right one: half of it under zeros padding, all of it under border, and mirrored
  // about the centre of pixel 1 to 0.5 under reflection.
  EXPECT_TRUE(all_close(grid_sample(x, grid, grid_attrs("bilinear", "zeros", 1)),
                        f32({1, 1, 1, 4}, {1, 2.5f, 4, 1})));
  EXPECT_TRUE(all_close(grid_sample(x, grid, grid_attrs("bilinear", "border", 1)),
                        f32({1, 1, 1, 4}, {1, 2.5f, 4, 2})));
  EXPECT_TRUE(all_close(grid_sample(x, grid, grid_attrs("bilinear", "reflection", 1)),
                        f32({1, 1, 1, 4}, {1, 2.5f, 4, 1.5f})));
  // Without align_corners the corners are the outer edges: (-1, -1) is pixel (-0.5, -0.5), a
  // quarter of pixel (0, 0) under zeros padding, all of it under border and reflection; (1, 1)
  // likewise a quarter of pixel (1, 1). (2, -1) is pixel (2.5, -0.5): nothing, the edge pixel 2,
  // or mirrored about the outer edge 1.5 to (0.5, 0).
  EXPECT_TRUE(all_close(grid_sample(x, grid, grid_attrs("bilinear", "zeros", 0)),
                        f32({1, 1, 1, 4}, {0.25f, 2.5f, 1, 0})));
  EXPECT_TRUE(all_close(grid_sample(x, grid, grid_attrs("bilinear", "border", 0)),
                        f32({1, 1, 1, 4}, {1, 2.5f, 4, 2})));
  EXPECT_TRUE(all_close(grid_sample(x, grid, grid_attrs("bilinear", "reflection", 0)),
                        f32({1, 1, 1, 4}, {1, 2.5f, 4, 1.5f})));
  // Nearest rounds half to even: -0.5 and 0.5 go to pixel 0, 1.5 and 2.5 to pixel 2 (outside).
  EXPECT_TRUE(all_close(grid_sample(x, grid, grid_attrs("nearest", "zeros", 0)),
                        f32({1, 1, 1, 4}, {1, 1, 0, 0})));
  // Bicubic reproduces a constant wherever all 16 taps are inside (border padding: always).
  const Tensor c = f32({1, 2, 3, 3}, std::vector<float>(18, 5.0f));
  const Tensor g2 = f32({1, 2, 2, 2}, {-0.3f, 0.2f, 0.9f, -1, 1.7f, 0.4f, 0.1f, 0.1f});
  EXPECT_TRUE(all_close(grid_sample(c, g2, grid_attrs("bicubic", "border", 0)),
                        f32({1, 2, 2, 2}, std::vector<float>(8, 5.0f))));
}

// Reference written from PyTorch's grid_sample documentation, in double: the sample's
// coordinate padded (bilinear, nearest) or each bicubic tap's, taps outside read 0.
double ref_pad(double v, int64_t n, const std::string& padding, bool align) {
  if (padding == "zeros") return v;
  if (padding == "reflection") {
    // Mirror about -0.5 and n - 0.5 (the outer edges), or 0 and n - 1 (the corner centres).
    const double lo = align ? 0 : -0.5, hi = align ? double(n - 1) : double(n) - 0.5;
    const double span = hi - lo;
    if (span <= 0) return 0;
    double d = std::fmod(std::fabs(v - lo), 2 * span);
    v = lo + (d > span ? 2 * span - d : d);
  }
  return std::clamp(v, 0.0, double(n - 1));
}

Tensor ref_grid_sample(const Tensor& x, const Tensor& grid, const std::string& mode,
                       const std::string& padding, bool align) {
  const auto& xd = x.dims();
  const int64_t n = xd[0], c = xd[1], h = xd[2], w = xd[3];
  const int64_t ho = grid.dims()[1], wo = grid.dims()[2];
  Tensor out(DType::kF32, {n, c, ho, wo});
  const auto src = x.values<float>();
  const auto g = grid.values<float>();
  auto dst = out.values<float>();
  auto at = [&](int64_t b, int64_t ch, double iy, double ix) -> double {
    if (iy < 0 || iy >= double(h) || ix < 0 || ix >= double(w)) return 0;
    return src[static_cast<size_t>(((b * c + ch) * h + int64_t(iy)) * w + int64_t(ix))];
  };
  auto cubic = [](double d) {
    const double a = -0.75;
    d = std::fabs(d);
    return d <= 1  ? (a + 2) * d * d * d - (a + 3) * d * d + 1
           : d < 2 ? a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a
                   : 0;
  };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oy = 0; oy < ho; ++oy) {
      for (int64_t ox = 0; ox < wo; ++ox) {
        const size_t gi = static_cast<size_t>(((b * ho + oy) * wo + ox) * 2);
        auto unnorm = [&](double v, int64_t size) {
          return align ? (v + 1) / 2 * double(size - 1) : ((v + 1) * double(size) - 1) / 2;
        };
        const double fx = unnorm(g[gi], w), fy = unnorm(g[gi + 1], h);
        for (int64_t ch = 0; ch < c; ++ch) {
          double v = 0;
          if (mode == "nearest") {
            v = at(b, ch, std::nearbyint(ref_pad(fy, h, padding, align)),
                   std::nearbyint(ref_pad(fx, w, padding, align)));
          } else if (mode == "bilinear") {
            const double px = ref_pad(fx, w, padding, align), py = ref_pad(fy, h, padding, align);
            const double x0 = std::floor(px), y0 = std::floor(py);
            for (int dy = 0; dy < 2; ++dy) {
              for (int dx = 0; dx < 2; ++dx) {
                const double wt = (dx ? px - x0 : 1 - (px - x0)) * (dy ? py - y0 : 1 - (py - y0));
                v += wt * at(b, ch, y0 + dy, x0 + dx);
              }
            }
          } else {
            const double x0 = std::floor(fx), y0 = std::floor(fy);
            for (int j = -1; j <= 2; ++j) {
              for (int i = -1; i <= 2; ++i) {
                v += cubic(fx - (x0 + i)) * cubic(fy - (y0 + j)) *
                     at(b, ch, ref_pad(y0 + j, h, padding, align),
                        ref_pad(x0 + i, w, padding, align));
              }
            }
          }
          dst[static_cast<size_t>(((b * c + ch) * ho + oy) * wo + ox)] = static_cast<float>(v);
        }
      }
    }
  }
  return out;
}

TEST(CpuSample, GridSampleAgainstReference) {
  const Tensor x = random_f32({2, 3, 5, 7}, 31);
  const Tensor grid = random_f32({2, 4, 6, 2}, 32, -1.6f, 1.6f);  // some points outside
  for (const std::string mode : {"bilinear", "nearest", "bicubic"}) {
    for (const std::string padding : {"zeros", "border", "reflection"}) {
      for (const int64_t align : {0, 1}) {
        EXPECT_TRUE(all_close(grid_sample(x, grid, grid_attrs(mode, padding, align)),
                              ref_grid_sample(x, grid, mode, padding, align != 0)))
            << mode << " " << padding << " align_corners=" << align;
      }
    }
  }
  // Large enough to run in parallel.
  const Tensor big_x = random_f32({1, 8, 64, 64}, 33);
  const Tensor big_grid = random_f32({1, 96, 96, 2}, 34, -1.1f, 1.1f);
  EXPECT_TRUE(all_close(grid_sample(big_x, big_grid, grid_attrs("bilinear", "zeros", 0)),
                        ref_grid_sample(big_x, big_grid, "bilinear", "zeros", false)));
}

TEST(CpuSample, GridSampleSurvivesWildGridValues) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor grid = f32({1, 1, 4, 2}, {inf, 0, -inf, nan, 3e38f, -3e38f, nan, nan});
  for (const std::string mode : {"bilinear", "nearest", "bicubic"}) {
    for (const std::string padding : {"zeros", "border", "reflection"}) {
      // Only the absence of a crash (and of a sanitizer report) is asserted: PyTorch itself
      // gives NaN or edge values here.
      EXPECT_TRUE(
          run1("GridSample", grid_attrs(mode, padding, 0), {{x}, {grid}}, {1, 1, 1, 4}).is_ok())
          << mode << " " << padding;
    }
  }
  // Zeros padding: far-away points read nothing.
  const Tensor y =
      grid_sample(x, f32({1, 1, 2, 2}, {3e38f, 0, -3e38f, 0}), grid_attrs("bilinear", "zeros", 0));
  EXPECT_TRUE(all_close(y, f32({1, 1, 1, 2}, {0, 0})));
}

TEST(CpuSample, GridSampleRefusesMalformedNodes) {
  const Tensor x = random_f32({2, 3, 4, 4}, 35);
  const Tensor grid = random_f32({2, 5, 6, 2}, 36);
  auto code = [](const Result<Tensor>& r) {
    return r.is_ok() ? ErrorCode::kOk : r.status().code();
  };
  const AttributeMap ok = grid_attrs("bilinear", "zeros", 0);
  EXPECT_EQ(code(run1("GridSample", ok, {{x}, {random_f32({1, 5, 6, 2}, 1)}}, {2, 3, 5, 6})),
            ErrorCode::kInvalidArgument);  // grid batch differs
  EXPECT_EQ(code(run1("GridSample", ok, {{x}, {random_f32({2, 5, 6, 3}, 1)}}, {2, 3, 5, 6})),
            ErrorCode::kInvalidArgument);  // points of 3 coordinates
  EXPECT_EQ(code(run1("GridSample", ok, {{x}, {random_f32({2, 5, 6}, 1)}}, {2, 3, 5, 6})),
            ErrorCode::kInvalidArgument);  // grid of rank 3
  EXPECT_EQ(code(run1("GridSample", ok, {{x}, {grid}}, {2, 3, 6, 5})),
            ErrorCode::kInvalidArgument);  // output shape
  EXPECT_EQ(code(run1("GridSample", ok, {{random_f32({2, 3, 4, 4, 4}, 1)}, {grid}}, {2, 3, 5, 6})),
            ErrorCode::kUnimplemented);  // 5-D input (opset 20)
  EXPECT_EQ(code(run1("GridSample", grid_attrs("area", "zeros", 0), {{x}, {grid}}, {2, 3, 5, 6})),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      code(run1("GridSample", grid_attrs("bilinear", "wrap", 0), {{x}, {grid}}, {2, 3, 5, 6})),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(run1("GridSample", ok, {{random_f32({2, 3, 0, 4}, 1)}, {grid}}, {2, 3, 5, 6})),
            ErrorCode::kInvalidArgument);  // nothing to sample from
  const auto r = run_op("GridSample", ok, {{i64({1, 1, 1, 1}, {1})}, {random_f32({1, 1, 1, 2}, 1)}},
                        {{DType::kI64, {1, 1, 1, 1}}}, 16);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("GridSample"), std::string::npos);
}

// ---- RoiAlign -----------------------------------------------------------------------------------

struct Roi {
  int64_t batch;
  float x1, y1, x2, y2;
};

AttributeMap roi_attrs(const std::string& mode, int64_t out_h, int64_t out_w, int64_t ratio,
                       float scale, const std::string& coord) {
  return {{"mode", mode},           {"output_height", out_h},
          {"output_width", out_w},  {"sampling_ratio", ratio},
          {"spatial_scale", scale}, {"coordinate_transformation_mode", coord}};
}

Result<Tensor> roi_align(const Tensor& x, const std::vector<Roi>& rois, const AttributeMap& attrs,
                         int64_t out_h, int64_t out_w, int64_t opset = 16) {
  std::vector<float> boxes;
  std::vector<int64_t> batch;
  for (const Roi& r : rois) {
    boxes.insert(boxes.end(), {r.x1, r.y1, r.x2, r.y2});
    batch.push_back(r.batch);
  }
  const auto k = static_cast<int64_t>(rois.size());
  return run1("RoiAlign", attrs, {{x}, {f32({k, 4}, boxes)}, {i64({k}, batch)}},
              {k, x.dims()[1], out_h, out_w}, opset);
}

// ONNX Runtime's RoiAlign restated per sample, in double.
Tensor ref_roi_align(const Tensor& x, const std::vector<Roi>& rois, bool max_mode, int64_t out_h,
                     int64_t out_w, int64_t ratio, double scale, bool half_pixel) {
  const auto& d = x.dims();
  const int64_t c = d[1], h = d[2], w = d[3];
  Tensor out(DType::kF32, {static_cast<int64_t>(rois.size()), c, out_h, out_w});
  auto dst = out.values<float>();
  const auto src = x.values<float>();
  size_t e = 0;
  for (const Roi& r : rois) {
    const double off = half_pixel ? 0.5 : 0;
    const double sx = r.x1 * scale - off, sy = r.y1 * scale - off;
    double rw = r.x2 * scale - off - sx, rh = r.y2 * scale - off - sy;
    if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / double(out_h), bw = rw / double(out_w);
    const int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(rh / double(out_h)));
    const int64_t gw = ratio > 0 ? ratio : int64_t(std::ceil(rw / double(out_w)));
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* plane = src.data() + (r.batch * c + ch) * h * w;
      for (int64_t ph = 0; ph < out_h; ++ph) {
        for (int64_t pw = 0; pw < out_w; ++pw) {
          double sum = 0, best = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy) {
            for (int64_t ix = 0; ix < gw; ++ix) {
              double y = sy + ph * bh + (iy + 0.5) * bh / double(gh);
              double xx = sx + pw * bw + (ix + 0.5) * bw / double(gw);
              double corner[4] = {0, 0, 0, 0};
              if (!(y < -1 || y > double(h) || xx < -1 || xx > double(w))) {
                y = std::max(y, 0.0);
                xx = std::max(xx, 0.0);
                int64_t y0 = int64_t(y), x0 = int64_t(xx), y1 = y0 + 1, x1 = x0 + 1;
                if (y0 >= h - 1) y0 = y1 = h - 1, y = double(y0);
                if (x0 >= w - 1) x0 = x1 = w - 1, xx = double(x0);
                const double ly = y - double(y0), lx = xx - double(x0);
                corner[0] = (1 - ly) * (1 - lx) * plane[y0 * w + x0];
                corner[1] = (1 - ly) * lx * plane[y0 * w + x1];
                corner[2] = ly * (1 - lx) * plane[y1 * w + x0];
                corner[3] = ly * lx * plane[y1 * w + x1];
              }
              const double m =
                  std::max(std::max(corner[0], corner[1]), std::max(corner[2], corner[3]));
              best = first ? m : std::max(best, m);
              first = false;
              sum += corner[0] + corner[1] + corner[2] + corner[3];
            }
          }
          const int64_t count = gh * gw;
          dst[e++] = static_cast<float>(max_mode ? best : count > 0 ? sum / double(count) : 0);
        }
      }
    }
  }
  return out;
}

TEST(CpuSample, RoiAlignHandComputed) {
  // A ramp x + 10 y: bilinear samples of it are exact and the samples of a bin are symmetric
  // about its centre, so each average is the ramp at the bin's centre.
  std::vector<float> ramp;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) ramp.push_back(float(x + 10 * y));
  }
  const Tensor x = f32({1, 1, 4, 4}, ramp);
  // half_pixel: the box [0.5, 2.5] is pixels [0, 2]; bins of 1 centred at 0.5 and 1.5.
  EXPECT_TRUE(all_close(expect_ok(roi_align(x, {{0, 0.5f, 0.5f, 2.5f, 2.5f}},
                                            roi_attrs("avg", 2, 2, 2, 1, "half_pixel"), 2, 2)),
                        f32({1, 1, 2, 2}, {5.5f, 6.5f, 15.5f, 16.5f})));
  // output_half_pixel (and opset 10, where it is the only mode): no shift; spatial_scale 0.5
  // halves the box [0, 4] x [0, 2] to [0, 2] x [0, 1]: centres x 0.5, 1.5 and y 0.5.
  const AttributeMap legacy = roi_attrs("avg", 1, 2, 2, 0.5f, "output_half_pixel");
  EXPECT_TRUE(all_close(expect_ok(roi_align(x, {{0, 0, 0, 4, 2}}, legacy, 1, 2)),
                        f32({1, 1, 1, 2}, {5.5f, 6.5f})));
  AttributeMap opset10 = legacy;
  opset10.erase("coordinate_transformation_mode");
  EXPECT_TRUE(all_close(expect_ok(roi_align(x, {{0, 0, 0, 4, 2}}, opset10, 1, 2, 10)),
                        f32({1, 1, 1, 2}, {5.5f, 6.5f})));
}

TEST(CpuSample, RoiAlignAgainstReference) {
  const Tensor x = random_f32({2, 3, 9, 11}, 41, 0.0f, 1.0f);
  const std::vector<Roi> rois = {{0, 0, 0, 8, 8},
                                 {1, 1.5f, 2.2f, 9.7f, 6.1f},
                                 {1, -2, -1.5f, 3, 12},
                                 {0, 5, 5, 5.2f, 5.1f},
                                 {1, 10.5f, 8, 14, 12}};
  for (const std::string mode : {"avg", "max"}) {
    for (const std::string coord : {"half_pixel", "output_half_pixel"}) {
      for (const int64_t ratio : {0, 2, 3}) {
        for (const float scale : {1.0f, 0.625f}) {
          const auto y = roi_align(x, rois, roi_attrs(mode, 3, 4, ratio, scale, coord), 3, 4);
          EXPECT_TRUE(all_close(expect_ok(y), ref_roi_align(x, rois, mode == "max", 3, 4, ratio,
                                                            scale, coord == "half_pixel")))
              << mode << " " << coord << " ratio " << ratio << " scale " << scale;
        }
      }
    }
  }
  // Many channels: in parallel.
  const Tensor big = random_f32({1, 256, 20, 20}, 42);
  EXPECT_TRUE(all_close(expect_ok(roi_align(big, {{0, 1, 2, 15, 18}},
                                            roi_attrs("avg", 7, 7, 0, 1, "half_pixel"), 7, 7)),
                        ref_roi_align(big, {{0, 1, 2, 15, 18}}, false, 7, 7, 0, 1, true)));
}

TEST(CpuSample, RoiAlignRefusesMalformedNodesAndData) {
  const Tensor x = random_f32({2, 3, 6, 6}, 43);
  const AttributeMap ok = roi_attrs("avg", 2, 2, 2, 1, "half_pixel");
  auto code = [](const Result<Tensor>& r) {
    return r.is_ok() ? ErrorCode::kOk : r.status().code();
  };
  auto run = [&](const Tensor& boxes, const Tensor& batch, const std::vector<int64_t>& out,
                 const AttributeMap& attrs) {
    return code(run1("RoiAlign", attrs, {{x}, {boxes}, {batch}}, out));
  };
  const Tensor boxes = f32({2, 4}, {0, 0, 3, 3, 1, 1, 4, 4});
  const Tensor batch = i64({2}, {0, 1});
  EXPECT_EQ(run(boxes, batch, {2, 3, 2, 2}, ok), ErrorCode::kOk);
  EXPECT_EQ(run(f32({2, 5}, std::vector<float>(10, 1)), batch, {2, 3, 2, 2}, ok),
            ErrorCode::kInvalidArgument);  // boxes of 5 numbers
  EXPECT_EQ(run(boxes, i64({3}, {0, 0, 0}), {2, 3, 2, 2}, ok), ErrorCode::kInvalidArgument);
  EXPECT_EQ(run(boxes, batch, {2, 3, 3, 2}, ok), ErrorCode::kInvalidArgument);  // output_height 2
  EXPECT_EQ(run(boxes, batch, {2, 3, 2, 2}, roi_attrs("median", 2, 2, 2, 1, "half_pixel")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(run(boxes, batch, {2, 3, 0, 2}, roi_attrs("avg", 0, 2, 2, 1, "half_pixel")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(run(boxes, batch, {2, 3, 2, 2}, roi_attrs("avg", 2, 2, -1, 1, "half_pixel")),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(run(boxes, batch, {2, 3, 2, 2}, roi_attrs("avg", 2, 2, 2, 1, "align_corners")),
            ErrorCode::kInvalidArgument);
  // Data checked as it is used: a batch index past N, a NaN box, a box so large that adaptive
  // sampling would take hours.
  EXPECT_EQ(run(boxes, i64({2}, {0, 2}), {2, 3, 2, 2}, ok), ErrorCode::kInvalidArgument);
  EXPECT_EQ(run(boxes, i64({2}, {-1, 0}), {2, 3, 2, 2}, ok), ErrorCode::kInvalidArgument);
  EXPECT_EQ(run(f32({2, 4}, {0, 0, 3, NAN, 1, 1, 4, 4}), batch, {2, 3, 2, 2}, ok),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(run(f32({2, 4}, {0, 0, 3e38f, 3e38f, 1, 1, 4, 4}), batch, {2, 3, 2, 2},
                roi_attrs("avg", 2, 2, 0, 1, "half_pixel")),
            ErrorCode::kInvalidArgument);
  // A box far outside the image with a fixed sampling ratio is fine: its samples read nothing.
  EXPECT_EQ(run(f32({2, 4}, {-3e38f, -3e38f, 3e38f, 3e38f, 1, 1, 4, 4}), batch, {2, 3, 2, 2}, ok),
            ErrorCode::kOk);
}

}  // namespace
}  // namespace hsched::cpu::test
