// OpenCL C of the sampling, spectral and per-matrix kernels of the spatial program (ops_spatial.h):
// GridSample, DFT, STFT, Det, LRN, ArgMax/ArgMin and Trilu. Built after kSpatialSource, whose
// FP_CONTRACT OFF pragma they inherit (their sums in the order the CPU's are).
#pragma once

namespace hsched::opencl {

inline constexpr const char* kSampleSource = R"CL(
// GridSample (PyTorch's grid_sample, as the CPU computes it): x [n, c, h, w], grid [n, ho, wo, 2]
// of normalized (x, y); mode 0 bilinear, 1 nearest, 2 bicubic (a = -0.75); padding 0 zeros,
// 1 border, 2 reflection. A tap outside the input has weight 0 (and reads the plane's first
// element, as the CPU's does).
float gs_unnormalize(float v, int size, int align) {
  const float n = (float)size;
  return align ? (v + 1) / 2 * (n - 1) : ((v + 1) * n - 1) / 2;
}
float gs_reflect(float x, float twice_low, float twice_high) {
  if (twice_low == twice_high) return 0.0f;
  const float low = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = fabs(x - low);
  const float extra = fmod(x, span), flips = floor(x / span);
  return fmod(flips, 2.0f) == 0 ? extra + low : span - extra + low;
}
float gs_pad(float x, int size, int align, int padding) {
  const float last = (float)(size - 1);
  if (padding == 0) return x;
  if (padding == 2) x = align ? gs_reflect(x, 0, 2 * last) : gs_reflect(x, -1, 2 * last + 1);
  return isnan(x) ? x : clamp(x, 0.0f, last);
}
float gs_cubic(float d) {  // |d| <= 1 and 1 < |d| < 2, a = -0.75
  const float a = -0.75f;
  return d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
}
float gs_tap(__global const storage_t* x, int base, int h, int w, float ix, float iy, float wt) {
  const int inside = ix >= 0 && ix < (float)w && iy >= 0 && iy < (float)h;
  return (inside ? wt : 0.0f) * LOAD(x, base + (inside ? (int)iy * w + (int)ix : 0));
}
__kernel void grid_sample(__global const storage_t* x, __global const storage_t* grid,
                          __global storage_t* y, int c, int h, int w, int ho, int wo, int mode,
                          int padding, int align, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int ox = i % wo, oy = (i / wo) % ho, ch = (i / (wo * ho)) % c, b = i / (wo * ho * c);
  const int g = ((b * ho + oy) * wo + ox) * 2;
  const float fx = gs_unnormalize(LOAD(grid, g), w, align);
  const float fy = gs_unnormalize(LOAD(grid, g + 1), h, align);
  const int base = (b * c + ch) * h * w;
  float v = 0.0f;
  if (mode == 1) {
    v = gs_tap(x, base, h, w, rint(gs_pad(fx, w, align, padding)),
               rint(gs_pad(fy, h, align, padding)), 1.0f);
  } else if (mode == 0) {
    const float ix = gs_pad(fx, w, align, padding), iy = gs_pad(fy, h, align, padding);
    const float x0 = floor(ix), y0 = floor(iy), tx = ix - x0, ty = iy - y0;
    v = v + gs_tap(x, base, h, w, x0, y0, (1 - tx) * (1 - ty));
    v = v + gs_tap(x, base, h, w, x0 + 1, y0, tx * (1 - ty));
    v = v + gs_tap(x, base, h, w, x0, y0 + 1, (1 - tx) * ty);
    v = v + gs_tap(x, base, h, w, x0 + 1, y0 + 1, tx * ty);
  } else {
    const float x0 = floor(fx), y0 = floor(fy), tx = fx - x0, ty = fy - y0;
    const float wx[4] = {gs_cubic(tx + 1), gs_cubic(tx), gs_cubic(1 - tx), gs_cubic(2 - tx)};
    const float wy[4] = {gs_cubic(ty + 1), gs_cubic(ty), gs_cubic(1 - ty), gs_cubic(2 - ty)};
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 4; ++k) {
        v = v + gs_tap(x, base, h, w, gs_pad(x0 - 1 + k, w, align, padding),
                       gs_pad(y0 - 1 + j, h, align, padding), wx[k] * wy[j]);
      }
    }
  }
  STORE(v, y, i);
}

// DFT along the middle axis of x [outer, length, inner, channels] (channels 1: real, 2: complex)
// into y [outer, bins, inner, 2]: y[k] = sum over j < min(n, length) of x[j] e^(-+2 pi i jk / n),
// divided by n when inverse; the angle from (jk mod n) / n, in float (the CPU sums in double).
__kernel void dft(__global const storage_t* x, __global storage_t* y, int length, int inner,
                  int channels, int n, int bins, int inverse, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int in = i % inner, k = (i / inner) % bins, o = i / (inner * bins);
  const float sign = inverse ? 1.0f : -1.0f;
  float re = 0.0f, im = 0.0f;
  for (int j = 0; j < min(n, length); ++j) {
    const float turn = 2.0f * (float)(int)(((long)j * k) % n) / (float)n;
    const float c = cospi(turn), s = sign * sinpi(turn);
    const int at = ((o * length + j) * inner + in) * channels;
    const float xr = LOAD(x, at), xi = channels == 2 ? LOAD(x, at + 1) : 0.0f;
    re += xr * c - xi * s;
    im += xr * s + xi * c;
  }
  if (inverse) {
    re /= n;
    im /= n;
  }
  STORE(re, y, 2 * i);
  STORE(im, y, 2 * i + 1);
}

// STFT: y [batch, frames, bins, 2] from signal [batch, length, channels]: frame f of batch b is
// the n samples from f * step, times the window (has_window) before its DFT.
__kernel void stft(__global const storage_t* x, __global const storage_t* window, int has_window,
                   __global storage_t* y, int length, int channels, int step, int n, int frames,
                   int bins, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int k = i % bins, f = (i / bins) % frames, b = i / (bins * frames);
  float re = 0.0f, im = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float turn = 2.0f * (float)(int)(((long)j * k) % n) / (float)n;
    const float c = cospi(turn), s = -sinpi(turn);
    const float w = has_window ? LOAD(window, j) : 1.0f;
    const int at = (b * length + f * step + j) * channels;
    const float xr = LOAD(x, at) * w, xi = channels == 2 ? LOAD(x, at + 1) * w : 0.0f;
    re += xr * c - xi * s;
    im += xr * s + xi * c;
  }
  STORE(re, y, 2 * i);
  STORE(im, y, 2 * i + 1);
}

// Det of each n x n matrix of x, one work item per matrix: LU with partial pivoting (the largest
// magnitude, the first on ties) on a copy in `work`, in float (the CPU computes in double).
__kernel void det(__global const storage_t* x, __global float* work, __global storage_t* y, int n,
                  int count) {
  const int b = get_global_id(0);
  if (b >= count) return;
  __global float* a = work + (long)b * n * n;
  for (int i = 0; i < n * n; ++i) a[i] = LOAD(x, b * n * n + i);
  float det = 1.0f;
  for (int c = 0; c < n; ++c) {
    int pivot = c;
    for (int r = c + 1; r < n; ++r) {
      if (fabs(a[r * n + c]) > fabs(a[pivot * n + c])) pivot = r;
    }
    const float p = a[pivot * n + c];
    if (p == 0.0f) {
      det = 0.0f;
      break;
    }
    if (pivot != c) {
      for (int j = 0; j < n; ++j) {
        const float t = a[c * n + j];
        a[c * n + j] = a[pivot * n + j];
        a[pivot * n + j] = t;
      }
      det = -det;
    }
    det *= p;
    for (int r = c + 1; r < n; ++r) {
      const float f = a[r * n + c] / p;
      for (int j = c + 1; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
    }
  }
  STORE(det, y, b);
}

// LRN across the channels of [N, C, inner]: x / (bias + alpha / size * the sum of squares over
// channels [c - (size - 1) / 2, c + size / 2] within [0, C))^beta.
__kernel void lrn(__global const storage_t* x, __global storage_t* y, int channels, int inner,
                  int size, float alpha, float beta, float bias, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int c = (i / inner) % channels;
  const int base = i - c * inner;
  const int lo = max(c - (size - 1) / 2, 0), hi = min(c + size / 2, channels - 1);
  float sum = 0.0f;
  for (int k = lo; k <= hi; ++k) {
    const float v = LOAD(x, base + k * inner);
    sum += v * v;
  }
  STORE(LOAD(x, i) / pow(bias + alpha / size * sum, beta), y, i);
}

// ArgMax (want_max) or ArgMin along the middle axis of x [outer, n, inner] into y (int64)
// [outer, inner]; ties go to the first index, or the last with select_last, as on the CPU.
__kernel void arg_reduce(__global const storage_t* x, __global long* y, int n, int inner,
                         int want_max, int select_last, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int base = (i / inner) * n * inner + i % inner;
  float best = LOAD(x, base);
  int at = 0;
  for (int k = 1; k < n; ++k) {
    const float v = LOAD(x, base + k * inner);
    const int better = want_max ? (select_last ? v >= best : v > best)
                                : (select_last ? v <= best : v < best);
    if (better) {
      best = v;
      at = k;
    }
  }
  y[i] = at;
}

// Trilu over the last two axes [h, w]: keeps x where column - row >= k (upper) or <= k (lower),
// zero elsewhere.
__kernel void trilu(__global const storage_t* x, __global storage_t* y, int h, int w, int k,
                    int upper, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int d = i % w - (i / w) % h;
  STORE((upper ? d >= k : d <= k) ? LOAD(x, i) : 0.0f, y, i);
}
)CL";

}  // namespace hsched::opencl
