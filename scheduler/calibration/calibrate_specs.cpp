#include "scheduler/calibration/calibrate_specs.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <utility>

#include "scheduler/planner/cost_model.h"

namespace hsched::calibration {
namespace {

constexpr int64_t kTinyElements = 16;

// x [1, c, h, h] -> `nodes` Convs (k x k, stride 1, same padding, `group` groups) -> y.
Spec conv_spec(int64_t c, int64_t h, int64_t k, bool depthwise) {
  Spec spec;
  spec.name = std::string(depthwise ? "dwconv" : "conv") + "_k" + std::to_string(k) + "_c" +
              std::to_string(c) + "_h" + std::to_string(h);
  spec.cost_class = depthwise               ? CostClass::kDepthwiseConv
                    : h * h <= kGemvMaxRows ? CostClass::kGemv
                    : k == 1                ? CostClass::kPointwiseConv
                                            : CostClass::kConv;
  spec.build = [=](OnnxBuilder& b, int nodes) {
    b.input("x", DType::kF32, {1, c, h, h});
    std::string x = "x";
    for (int i = 0; i < nodes; ++i) {
      const std::string y = i + 1 == nodes ? "y" : "t" + std::to_string(i);
      add_conv(b, x, c, c, k, 1, k / 2, depthwise, "w" + std::to_string(i), y);
      x = y;
    }
    b.output("y", DType::kF32, {1, c, h, h});
  };
  return spec;
}

// y = x [m, k] times constant [k, n] weights named w, with a bias [n] added when `bias`: a Linear
// layer as PyTorch exports it, which the CPU adds in the product's epilogue (on this machine's
// CPU 4-9% of a 128-197 row product's time, in the same calibration).
void add_linear(OnnxBuilder& b, const std::string& x, const std::string& w, int64_t k, int64_t n,
                bool bias, const std::string& y) {
  b.initializer_random(w, {k, n}, 1.0f / std::sqrt(static_cast<float>(k)), next_seed());
  if (!bias) {
    b.node("MatMul", {x, w}, {y});
    return;
  }
  b.initializer_random(w + ".bias", {n}, 0.1f, next_seed());
  b.node("MatMul", {x, w}, {w + ".product"});
  b.node("Add", {w + ".product", w + ".bias"}, {y});
}

// x [m, n] -> `nodes` MatMuls by constant [n, n] weights (Linear layers with their bias when
// `bias`: "linear_" names them) -> y.
Spec matmul_spec(int64_t m, int64_t n, bool bias = false) {
  Spec spec;
  spec.name = (bias ? "linear_m" : "matmul_m") + std::to_string(m) + "_n" + std::to_string(n);
  spec.cost_class = m <= kGemvMaxRows ? CostClass::kGemv : CostClass::kGemm;
  spec.build = [=](OnnxBuilder& b, int nodes) {
    b.input("x", DType::kF32, {m, n});
    std::string x = "x";
    for (int i = 0; i < nodes; ++i) {
      const std::string y = i + 1 == nodes ? "y" : "t" + std::to_string(i);
      add_linear(b, x, "w" + std::to_string(i), n, n, bias, y);
      x = y;
    }
    b.output("y", DType::kF32, {m, n});
  };
  return spec;
}

// A fan of `nodes` MatMuls of x [m, k] by constant [k, n] weights (k != n cannot chain), with
// their bias when `bias`: a transformer's MLP layers, whose depth k a GPU's time follows when the
// outputs are few, and which a CPU runs a little slower than square products of their FLOPs.
Spec matmul_fan_spec(int64_t m, int64_t k, int64_t n, bool bias) {
  Spec spec;
  spec.name = (bias ? "linear_m" : "matmul_m") + std::to_string(m) + "_k" + std::to_string(k) +
              "_n" + std::to_string(n);
  spec.cost_class = CostClass::kGemm;
  spec.build = [=](OnnxBuilder& b, int nodes) {
    b.input("x", DType::kF32, {m, k});
    for (int i = 0; i < nodes; ++i) {
      const std::string y = "y" + std::to_string(i);
      add_linear(b, "x", "w" + std::to_string(i), k, n, bias, y);
      b.output(y, DType::kF32, {m, n});
    }
  };
  return spec;
}

// x [1, n] -> `nodes` Gemms by constant [n, n] weights stored by output (transB) with a bias:
// a classifier head as PyTorch exports a Linear layer. Off the host a one-row product runs by
// how B is stored (a kernel of hsched's by rows, CLBlast's GEMV by columns), so devices time the
// layout models have.
Spec gemm_head_spec(int64_t n) {
  return chain_spec(
      "gemm_head_n" + std::to_string(n), CostClass::kGemv, {1, n},
      [n](OnnxBuilder& b, const std::string& x, const std::string& y) {
        const std::string w = "w_" + y, bias = "b_" + y;
        b.initializer_random(w, {n, n}, 1.0f / std::sqrt(static_cast<float>(n)), next_seed());
        b.initializer_random(bias, {n}, 0.05f, next_seed());
        set_attr(b.node("Gemm", {x, w, bias}, {y}), "transB", 1);
      });
}

// Attention's products of two activations: a fan of MatMuls q [h, m, d] x k [h, d, m].
Spec attention_spec(int64_t heads, int64_t m, int64_t d) {
  Spec spec;
  spec.name =
      "attention_h" + std::to_string(heads) + "_m" + std::to_string(m) + "_d" + std::to_string(d);
  spec.cost_class = CostClass::kGemm;
  spec.build = [=](OnnxBuilder& b, int nodes) {
    b.input("q", DType::kF32, {heads, m, d});
    b.input("k", DType::kF32, {heads, d, m});
    for (int i = 0; i < nodes; ++i) {
      const std::string y = "y" + std::to_string(i);
      b.node("MatMul", {"q", "k"}, {y});
      b.output(y, DType::kF32, {heads, m, m});
    }
  };
  return spec;
}

// x [m, n] -> `nodes` MatMuls by constant [n, n] weights, each followed by GELU as PyTorch
// exports it (the CPU fuses it into the MatMul) or not: the difference is the fused epilogue.
Spec gelu_epilogue_spec(int64_t m, int64_t n) {
  const auto chain = [m, n](bool gelu) {
    return [m, n, gelu](OnnxBuilder& b, int nodes) {
      b.input("x", DType::kF32, {m, n});
      std::string x = "x";
      for (int i = 0; i < nodes; ++i) {
        const std::string link = "l" + std::to_string(i);
        b.initializer_random(link + ".w", {n, n}, 1.0f / std::sqrt(static_cast<float>(n)),
                             next_seed());
        const std::string y = i + 1 == nodes ? "y" : link;
        b.node("MatMul", {x, link + ".w"}, {gelu ? link + ".mm" : y});
        if (gelu) {
          b.initializer_f32(link + ".sqrt2", {}, {1.41421356f});
          b.initializer_f32(link + ".one", {}, {1.0f});
          b.initializer_f32(link + ".half", {}, {0.5f});
          b.node("Div", {link + ".mm", link + ".sqrt2"}, {link + ".div"});
          b.node("Erf", {link + ".div"}, {link + ".erf"});
          b.node("Add", {link + ".erf", link + ".one"}, {link + ".add"});
          b.node("Mul", {link + ".mm", link + ".add"}, {link + ".mul"});
          b.node("Mul", {link + ".mul", link + ".half"}, {y});
        }
        x = y;
      }
      b.output("y", DType::kF32, {m, n});
    };
  };
  Spec spec;
  spec.name = "gelu_epilogue_m" + std::to_string(m) + "_n" + std::to_string(n);
  spec.cost_class = CostClass::kEpilogue;
  spec.fused_on_host = true;
  spec.work_node = 2;  // the Erf
  spec.build = chain(true);
  spec.baseline = chain(false);
  return spec;
}

// x [1, c, h, h] -> a 1x1 Conv (the channels-last producer a model's pooling reads) -> a fan of
// `nodes` GlobalAveragePools. `on_host`: instead `nodes` links of a 1x1 Conv, a
// GlobalAveragePool of its output and the output scaled by the pool (a squeeze-excitation block
// without its two small layers), the pools' steps timed alone: on a CPU a pool reads what
// oneDNN's threads wrote on both cores just before, as in a model, where it took 2 to 3 times
// its time in a fan over one tensor (mobilenet_v3_small's ten pools 0.23 ms against 0.12).
Spec global_pool_spec(int64_t c, int64_t h, bool on_host) {
  const std::string shape = "c" + std::to_string(c) + "_h" + std::to_string(h);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c));
  if (on_host) {
    Spec spec =
        chain_spec("global_avgpool_after_conv_" + shape, CostClass::kGlobalPool, {1, c, h, h},
                   [c, scale](OnnxBuilder& b, const std::string& x, const std::string& y) {
                     b.initializer_random(y + ".w", {c, c, 1, 1}, scale, next_seed());
                     b.node("Conv", {x, y + ".w"}, {y + ".conv"});
                     b.node("GlobalAveragePool", {y + ".conv"}, {y + ".pool"});
                     b.node("Mul", {y + ".conv", y + ".pool"}, {y});
                   });
    spec.fused_on_host = true;
    spec.timed_op = "GlobalAveragePool";
    spec.work_node = 1;
    return spec;
  }
  Spec spec;
  spec.name = "global_avgpool_" + shape;
  spec.cost_class = CostClass::kGlobalPool;
  spec.work_node = 1;
  spec.build = [=](OnnxBuilder& b, int nodes) {
    b.input("x", DType::kF32, {1, c, h, h});
    b.initializer_random("w", {c, c, 1, 1}, scale, next_seed());
    b.node("Conv", {"x", "w"}, {"t"});
    for (int i = 0; i < nodes; ++i) {
      const std::string y = "y" + std::to_string(i);
      b.node("GlobalAveragePool", {"t"}, {y});
      b.output(y, DType::kF32, {1, c, 1, 1});
    }
  };
  return spec;
}

// x [1, c, h, h] -> `nodes` links of a depthwise 3x3 Conv and LayerNorm over the channels
// (Transpose, LayerNormalization, Transpose), as ConvNeXt's blocks begin; the baseline is the
// same chain of Convs alone. The Conv between two norms keeps them apart as in a model (back to
// back, a norm's closing Transpose and the next one's opening Transpose meet).
Spec channel_norm_spec(int64_t c, int64_t h) {
  const auto chain = [c, h](bool norm) {
    return [c, h, norm](OnnxBuilder& b, int nodes) {
      b.input("x", DType::kF32, {1, c, h, h});
      std::string x = "x";
      for (int i = 0; i < nodes; ++i) {
        const std::string link = "l" + std::to_string(i);
        const std::string y = i + 1 == nodes ? "y" : link;
        b.initializer_random(link + ".w", {c, 1, 3, 3}, 1.0f / 3, next_seed());
        onnx::NodeProto& conv = b.node("Conv", {x, link + ".w"}, {norm ? link + ".conv" : y});
        set_attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
        set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
        set_attr(conv, "group", c);
        if (norm) {
          b.initializer_random(link + ".scale", {c}, 1.0f, next_seed());
          b.initializer_random(link + ".bias", {c}, 0.1f, next_seed());
          set_attr(b.node("Transpose", {link + ".conv"}, {link + ".nhwc"}), "perm",
                   std::vector<int64_t>{0, 2, 3, 1});
          set_attr(b.node("LayerNormalization", {link + ".nhwc", link + ".scale", link + ".bias"},
                          {link + ".norm"}),
                   "axis", -1);
          set_attr(b.node("Transpose", {link + ".norm"}, {y}), "perm",
                   std::vector<int64_t>{0, 3, 1, 2});
        }
        x = y;
      }
      b.output("y", DType::kF32, {1, c, h, h});
    };
  };
  Spec spec;
  spec.name = "channel_layernorm_c" + std::to_string(c) + "_h" + std::to_string(h);
  spec.cost_class = CostClass::kChannelNorm;
  spec.fused_on_host = true;
  spec.work_node = 1;  // the opening Transpose, which heads the fused step
  spec.build = chain(true);
  spec.baseline = chain(false);
  return spec;
}

// x [2, rows / 2, 256] -> `nodes` (even) links of a MatMul by constant [256, 256] weights and
// `op` (Softmax or LayerNormalization over the rows, or a Transpose of the first two axes), the
// op's steps timed alone. On a CPU such an op runs right
// after a oneDNN primitive whose OpenMP threads still spin on the cores it needs, and reads what
// the other core wrote: in transformers it took 2 to 3 times its time in a chain of its own.
Spec after_matmul_spec(const std::string& op, CostClass cost_class, int64_t rows,
                       const std::string& size) {
  constexpr int64_t kRow = 256;
  std::string name = op;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  Spec spec;
  spec.name = name + "_after_matmul_" + size;
  spec.cost_class = cost_class;
  spec.fused_on_host = true;
  spec.work_node = 1;
  spec.timed_op = op;
  spec.build = [op, rows](OnnxBuilder& b, int nodes) {
    const std::vector<int64_t> dims{2, rows / 2, kRow};
    b.input("x", DType::kF32, dims);
    std::string x = "x";
    for (int i = 0; i < nodes; ++i) {
      const std::string link = "l" + std::to_string(i);
      const std::string y = i + 1 == nodes ? "y" : link;
      b.initializer_random(link + ".w", {kRow, kRow}, 1.0f / 16, next_seed());
      const std::string mm = link + ".mm";
      b.node("MatMul", {x, link + ".w"}, {mm});
      if (op == "Softmax") {
        set_attr(b.node("Softmax", {mm}, {y}), "axis", -1);
      } else if (op == "LayerNormalization") {
        b.initializer_random(link + ".scale", {kRow}, 1.0f, next_seed());
        b.initializer_random(link + ".bias", {kRow}, 0.1f, next_seed());
        set_attr(b.node(op, {mm, link + ".scale", link + ".bias"}, {y}), "axis", -1);
      } else {  // Transpose: [2, rows / 2] and [rows / 2, 2] alternate
        set_attr(b.node("Transpose", {mm}, {y}), "perm", std::vector<int64_t>{1, 0, 2});
      }
      x = y;
    }
    b.output("y", DType::kF32, dims);
  };
  return spec;
}

// A fan of Convs (k x k, `stride`, bias; depthwise or of one group) from `cin` channels at h x h,
// timed on the CPU only. An image stem (cin 3) reads the graph's input, as a model's first Conv
// does; the others read what a 1x1 Conv wrote, as downsampling layers do.
Spec strided_conv_spec(int64_t cin, int64_t cout, int64_t h, int64_t k, int64_t stride,
                       bool depthwise) {
  const bool stem = cin == 3;
  const int64_t pad = k == stride ? 0 : k / 2;  // patchifying stems do not pad
  const int64_t out = (h + 2 * pad - k) / stride + 1;
  Spec spec =
      fan_spec(std::string(depthwise ? "dwconv" : "conv") + "_k" + std::to_string(k) + "_s" +
                   std::to_string(stride) + "_c" + std::to_string(cin) + "_" +
                   std::to_string(cout) + "_h" + std::to_string(h),
               depthwise ? CostClass::kStridedDepthwiseConv
               : stem    ? CostClass::kStemConv
                         : CostClass::kStridedConv,
               "Conv", 1, {1, cin, h, h}, {1, cout, out, out}, true, !stem,
               [=](OnnxBuilder& b, const std::vector<std::string>& in, const std::string& y) {
                 add_conv(b, in[0], cin, cout, k, stride, pad, depthwise, y + ".w", y);
               });
  spec.fused_on_host = true;
  return spec;
}

// MaxPools as CNNs pool: 3x3 windows at stride 2 (ResNet's and SqueezeNet's), a quarter of the
// pixels out. A chain of stride-1 pools computed 4 windows where a model's pool computes one: on
// the H200 machine's Xeon host they took 2-3 times what SqueezeNet's pools took per byte.
Spec pool_spec(const std::string& size, const std::vector<int64_t>& image, bool on_host) {
  const int64_t out = (image[2] - 1) / 2 + 1;  // 3x3, padded by 1, stride 2
  return fan_spec("maxpool_s2_" + size, CostClass::kPooling, "MaxPool", 1, image,
                  {1, image[1], out, out}, on_host, on_host,
                  [](OnnxBuilder& b, const std::vector<std::string>& in, const std::string& y) {
                    onnx::NodeProto& node = b.node("MaxPool", {in[0]}, {y});
                    set_attr(node, "kernel_shape", std::vector<int64_t>{3, 3});
                    set_attr(node, "pads", std::vector<int64_t>{1, 1, 1, 1});
                    set_attr(node, "strides", std::vector<int64_t>{2, 2});
                  });
}

// Concats of two images along the channels (SqueezeNet's fire modules): a copy of each input,
// which the transposes of data_movement are not (on the H200 machine's host SqueezeNet's
// Concats took half the time those predicted).
Spec concat_spec(const std::string& size, const std::vector<int64_t>& image, bool on_host) {
  return fan_spec("concat_" + size, CostClass::kConcat, "Concat", kConcatBenchInputs, image,
                  {1, kConcatBenchInputs * image[1], image[2], image[3]}, on_host, on_host,
                  [](OnnxBuilder& b, const std::vector<std::string>& in, const std::string& y) {
                    set_attr(b.node("Concat", in, {y}), "axis", 1);
                  });
}

// x [1, 64, h, h] -> `nodes` (even) links of QuantizeLinear, DequantizeLinear and an
// InstanceNormalization, `op`'s steps (one of the first two) timed alone: the Q/DQ nodes a QDQ
// model runs as steps of their own between float layers (vae_decoder_small's around its
// normalizations), which on this machine's CPU took 2 to 4 times an Add's time per byte.
Spec quantize_spec(const std::string& op, int64_t elements) {
  constexpr int64_t kChannels = 64;
  const auto h =
      static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(elements / kChannels))));
  Spec spec;
  spec.name =
      std::string(op == "QuantizeLinear" ? "quantize_" : "dequantize_") + size_name(elements);
  spec.cost_class = CostClass::kQuantize;
  spec.fused_on_host = true;
  spec.work_node = op == "QuantizeLinear" ? 0 : 1;
  spec.timed_op = op;
  spec.build = [h](OnnxBuilder& b, int nodes) {
    const std::vector<int64_t> dims{1, kChannels, h, h};
    b.input("x", DType::kF32, dims);
    b.initializer_f32("scale", {}, {0.02f});
    b.initializer("zero_point", Tensor::from_vector<uint8_t>(DType::kU8, {}, {128}));
    b.initializer_f32("gamma", {kChannels}, std::vector<float>(kChannels, 1.0f));
    b.initializer_f32("beta", {kChannels}, std::vector<float>(kChannels, 0.0f));
    std::string x = "x";
    for (int i = 0; i < nodes; ++i) {
      const std::string link = "l" + std::to_string(i);
      const std::string y = i + 1 == nodes ? "y" : link;
      b.node("QuantizeLinear", {x, "scale", "zero_point"}, {link + ".q"});
      b.node("DequantizeLinear", {link + ".q", "scale", "zero_point"}, {link + ".dq"});
      b.node("InstanceNormalization", {link + ".dq", "gamma", "beta"}, {y});
      x = y;
    }
    b.output("y", DType::kF32, dims);
  };
  return spec;
}

// `on_host`: the normalizations up to 256 Ki elements are measured after a MatMul, as they run
// in a model (after_matmul_spec); larger ones, and on other devices, in chains of their own.
std::vector<Spec> memory_specs(bool on_host) {
  std::vector<Spec> specs;
  constexpr int64_t kRow = 256;
  for (int64_t elements :
       {int64_t{1} << 10, int64_t{4} << 10, int64_t{32} << 10, int64_t{256} << 10, int64_t{1} << 20,
        int64_t{4} << 20, int64_t{16} << 20}) {
    const std::string size = size_name(elements);
    const std::vector<int64_t> rows{elements / kRow, kRow};
    // Up to 256 Ki elements the CPU's are measured after a MatMul, as a model runs them.
    const bool after_matmul = on_host && elements <= (int64_t{256} << 10);
    // Binary adds against the chain's input, as residual adds read two tensors (after a MatMul
    // the CPU fuses them into it).
    specs.push_back(chain_spec("add_" + size, CostClass::kElementwise, {elements},
                               [](OnnxBuilder& b, const std::string& x, const std::string& y) {
                                 b.node("Add", {x, "x"}, {y});
                               }));
    if (after_matmul) {
      specs.push_back(after_matmul_spec("Softmax", CostClass::kNormalization, rows[0], size));
      specs.push_back(
          after_matmul_spec("LayerNormalization", CostClass::kNormalization, rows[0], size));
      specs.push_back(after_matmul_spec("Transpose", CostClass::kDataMovement, rows[0], size));
    } else {
      specs.push_back(chain_spec("softmax_" + size, CostClass::kNormalization, rows,
                                 [](OnnxBuilder& b, const std::string& x, const std::string& y) {
                                   set_attr(b.node("Softmax", {x}, {y}), "axis", -1);
                                 }));
      specs.push_back(
          chain_spec("layernorm_" + size, CostClass::kNormalization, rows,
                     [](OnnxBuilder& b, const std::string& x, const std::string& y) {
                       const std::string scale = y + ".scale", bias = y + ".bias";
                       b.initializer_random(scale, {kRow}, 1.0f, next_seed());
                       b.initializer_random(bias, {kRow}, 0.1f, next_seed());
                       set_attr(b.node("LayerNormalization", {x, scale, bias}, {y}), "axis", -1);
                     }));
    }
    if (on_host && elements <= (int64_t{4} << 20)) {
      for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
        specs.push_back(quantize_spec(op, elements));
      }
    }
    specs.push_back(chain_spec("sigmoid_" + size, CostClass::kTranscendental, {elements},
                               [](OnnxBuilder& b, const std::string& x, const std::string& y) {
                                 b.node("Sigmoid", {x}, {y});
                               }));
    // [1, c, h, h] images of the same size for the spatial ops.
    const int64_t c = elements >= (1 << 20) ? 64 : 16;
    const auto h = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(elements / c))));
    const std::vector<int64_t> image{1, c, h, h};
    // Fans, whose outputs add up (a GPU reads them back): sizes up to a CNN's largest, 64 x 112 x
    // 112 pooled (ResNet), 2 x 64 x 55 x 55 joined (SqueezeNet).
    if (elements <= (int64_t{4} << 20)) specs.push_back(pool_spec(size, image, on_host));
    if (elements <= (int64_t{1} << 20)) specs.push_back(concat_spec(size, image, on_host));
    if (!after_matmul) {
      specs.push_back(chain_spec(
          "transpose_" + size, CostClass::kDataMovement, image,
          [](OnnxBuilder& b, const std::string& x, const std::string& y) {
            set_attr(b.node("Transpose", {x}, {y}), "perm", std::vector<int64_t>{0, 1, 3, 2});
          }));
    }
    // Reductions change the shape: a fan of ReduceMeans over the input instead.
    Spec reduce;
    reduce.name = "reducemean_" + size;
    reduce.cost_class = CostClass::kReduction;
    reduce.build = [rows](OnnxBuilder& b, int nodes) {
      b.input("x", DType::kF32, rows);
      for (int i = 0; i < nodes; ++i) {
        const std::string y = "y" + std::to_string(i);
        onnx::NodeProto& node = b.node("ReduceMean", {"x"}, {y});
        set_attr(node, "axes", std::vector<int64_t>{-1});
        b.output(y, DType::kF32, {rows[0], 1});
      }
    };
    specs.push_back(std::move(reduce));
  }
  // LayerNorm over the channels of an image (ConvNeXt): Transpose, LayerNorm, Transpose, which a
  // backend may run as one normalization. Its rate depends on the channel count as much as on
  // the size: the stages of ConvNeXt-atto (40 to 320 channels) and -tiny (96 to 768), and a
  // small and two large images.
  for (const auto& [c, h] : std::vector<std::pair<int64_t, int64_t>>{{16, 8},
                                                                     {40, 56},
                                                                     {80, 28},
                                                                     {160, 14},
                                                                     {320, 7},
                                                                     {96, 56},
                                                                     {192, 28},
                                                                     {384, 14},
                                                                     {768, 7},
                                                                     {96, 112},
                                                                     {128, 224}}) {
    specs.push_back(channel_norm_spec(c, h));
  }
  // The pooled images of CNNs: from a squeeze-excitation's 16 x 56 x 56 to a classifier's
  // 1280 x 7 x 7 and SqueezeNet's 1000 x 13 x 13.
  for (const auto& [c, h] : std::vector<std::pair<int64_t, int64_t>>{
           {16, 56}, {72, 28}, {96, 14}, {576, 7}, {1280, 7}, {1000, 13}, {256, 56}}) {
    specs.push_back(global_pool_spec(c, h, on_host));
  }
  // GELU epilogues from 32 Ki to 1.5 Mi elements, after cheap MatMuls (n = 32) so that the
  // epilogue is not lost in the MatMul's own noise.
  for (int64_t m : {1024, 4096, 12544, 50176}) specs.push_back(gelu_epilogue_spec(m, 32));
  return specs;
}

// `on_host`: for the CPU, whose convolutions reach their rate by 0.2 GFLOP; another device (a GPU)
// also gets an image decoder's larger ones (up to 4.8 GFLOP), where its rate still grows (an
// H100's 3x3 convs: 6 TFLOP/s at 0.2 GFLOP, about 14 at 4.8).
std::vector<Spec> compute_specs(Precision precision, bool on_host) {
  std::vector<Spec> specs;
  std::vector<std::pair<int64_t, int64_t>> images{
      {16, 112}, {24, 56}, {32, 56}, {64, 56}, {64, 28}, {128, 28}, {128, 14},
      {256, 14}, {256, 7}, {512, 7}, {16, 14}, {48, 7},  {96, 7}};
  if (!on_host) images.insert(images.end(), {{32, 128}, {64, 128}, {32, 256}, {64, 256}});
  for (int64_t k : {1, 3}) {
    for (const auto& [c, h] : images) specs.push_back(conv_spec(c, h, k, false));
  }
  if (on_host) {
    // Convolutions that skip pixels: stems (3x3 and 7x7 by 2, 4x4 and 16x16 patches) and the
    // downsampling layers of ResNets (1x1 and 3x3 by 2) and ConvNeXts (2x2 patches). Timed on
    // the stride-1 curves, a stem or a depthwise Conv by 2 was predicted at half its time or
    // less on this CPU.
    for (const auto& [cout, k, stride] : std::vector<std::array<int64_t, 3>>{
             {16, 3, 2}, {32, 3, 2}, {64, 3, 2}, {64, 7, 2}, {40, 4, 4}, {192, 16, 16}}) {
      specs.push_back(strided_conv_spec(3, cout, 224, k, stride, false));
    }
    for (const auto& [c, h] :
         std::vector<std::pair<int64_t, int64_t>>{{64, 56}, {128, 28}, {256, 14}}) {
      for (int64_t k : {1, 3}) specs.push_back(strided_conv_spec(c, 2 * c, h, k, 2, false));
    }
    for (const auto& [c, h] :
         std::vector<std::pair<int64_t, int64_t>>{{40, 56}, {80, 28}, {160, 14}}) {
      specs.push_back(strided_conv_spec(c, 2 * c, h, 2, 2, false));
    }
    // MobileNets' depthwise convolutions by 2 (MobileNetV2's 3x3 over 96 channels at 112x112:
    // 0.023 ms on the stride-1 curve, 0.048-0.073 measured in the model, 0.050 in its fan).
    for (const auto& [c, h, k] : std::vector<std::array<int64_t, 3>>{{16, 112, 3},
                                                                     {96, 112, 3},
                                                                     {72, 56, 3},
                                                                     {144, 56, 3},
                                                                     {96, 28, 5},
                                                                     {192, 28, 3},
                                                                     {576, 14, 3},
                                                                     {576, 14, 5}}) {
      specs.push_back(strided_conv_spec(c, c, h, k, 2, true));
    }
  }
  // Squeeze-excitation layers: 1x1 convolutions of one pixel.
  for (int64_t c : {64, 256, 1024}) specs.push_back(conv_spec(c, 1, 1, false));
  const std::vector<std::pair<int64_t, int64_t>> depthwise{
      {32, 112}, {96, 56}, {144, 56}, {192, 28}, {384, 14}, {576, 14}, {960, 7}, {72, 14}, {96, 7}};
  for (int64_t k : {3, 5, 7}) {
    for (const auto& [c, h] : depthwise) specs.push_back(conv_spec(c, h, k, true));
  }
  // On the CPU the products of a model's linear layers carry their bias; a GPU adds it in a
  // kernel of its own, timed as an elementwise node.
  for (int64_t m : {64, 128, 197}) {
    for (int64_t n : {128, 256, 512, 1024}) specs.push_back(matmul_spec(m, n, on_host));
  }
  for (int64_t m : {128, 197}) {
    for (const auto& [k, n] : std::vector<std::pair<int64_t, int64_t>>{
             {192, 768}, {768, 192}, {256, 1024}, {1024, 256}}) {
      specs.push_back(matmul_fan_spec(m, k, n, on_host));
    }
  }
  for (int64_t n : {256, 512, 1024, 2048, 4096}) {
    specs.push_back(on_host ? matmul_spec(1, n) : gemm_head_spec(n));
  }
  for (const auto& [heads, m] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 197}, {4, 128}, {3, 50}, {8, 64}}) {
    specs.push_back(attention_spec(heads, m, 64));
  }
  for (Spec& spec : specs) {
    spec.precision = precision;
    spec.name += std::string("_") + precision_name(precision);
  }
  return specs;
}

}  // namespace

// Tiny Relu chains: one node and kTinyChain nodes of kTinyElements floats.
Spec tiny_spec(int nodes) {
  Spec spec = chain_spec(
      "tiny_relu_x" + std::to_string(nodes), CostClass::kElementwise, {kTinyElements},
      [](OnnxBuilder& b, const std::string& x, const std::string& y) { b.node("Relu", {x}, {y}); });
  spec.nodes = nodes;
  return spec;
}

Spec wake_spec() {
  Spec spec;
  spec.name = "wake";
  spec.nodes = 1;
  spec.build = [](OnnxBuilder& b, int) {
    constexpr int64_t kN = 256;
    b.input("x", DType::kF32, {kN, kN});
    b.initializer_random("w", {kN, kN}, 1.0f / 16, next_seed());
    b.node("MatMul", {"x", "w"}, {"t"});
    b.node("Add", {"t", "x"}, {"y"});
    b.output("y", DType::kF32, {kN, kN});
  };
  return spec;
}

// One Relu over `elements` floats: its partition's upload and download are the copy curves.
Spec copy_spec(int64_t elements) {
  Spec spec = chain_spec(
      "copy_" + size_name(elements), CostClass::kUpload, {elements},
      [](OnnxBuilder& b, const std::string& x, const std::string& y) { b.node("Relu", {x}, {y}); });
  spec.nodes = 1;
  return spec;
}

Precision base_precision(const DeviceProfile& device) {
  const std::vector<Precision> computes = device.precisions();
  if (std::find(computes.begin(), computes.end(), Precision::kFp32) != computes.end()) {
    return Precision::kFp32;
  }
  const auto other = std::find_if(computes.begin(), computes.end(),
                                  [](Precision p) { return p != Precision::kInt8; });
  return other == computes.end() ? Precision::kFp32 : *other;
}

// What to measure on `device`: every compute class in each precision it computes, the byte
// classes in base_precision (those fused into one step on the CPU only there).
std::vector<Spec> specs_for(const DeviceProfile& device) {
  const bool on_host = device.api == DeviceApi::kHost;
  const Precision base = base_precision(device);
  std::vector<Spec> specs;
  for (Precision precision : device.precisions()) {
    // int8 of an fp32 graph: the CPU's dynamic quantization; elsewhere only QDQ graphs hold it.
    if (precision == Precision::kInt8 && !on_host) continue;
    for (Spec& spec : compute_specs(precision, on_host)) specs.push_back(std::move(spec));
  }
  // int8 as a QDQ model computes it, on every device that takes one (DeviceProfile::qdq_curves;
  // a device that refuses a benchmark's nodes skips it).
  for (Spec& spec : compute_specs(Precision::kInt8, on_host)) {
    if (!spec.timed_op.empty() || spec.baseline) continue;
    spec.quantized = true;
    spec.name += "_qdq";
    specs.push_back(std::move(spec));
  }
  for (Spec& spec : memory_specs(on_host)) {
    spec.precision = base;
    if (!spec.fused_on_host || on_host) specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace hsched::calibration
