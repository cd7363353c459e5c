// Activations and residual adds fused into a oneDNN primitive (Conv, ConvTranspose, Gemm,
// MatMul). The program's fusion pass records them on the fused node's attributes; the oneDNN
// kernels read them back. Keeping the encoding here keeps both sides in one place.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace hsched::cpu {

struct PostOp {
  enum class Kind { kRelu, kLeakyRelu, kClip, kSigmoid, kHardSwish, kHardSigmoid, kSwish,
                    kGeluErf, kTanh, kAdd, kScale };
  Kind kind;
  float alpha = 0;  // LeakyRelu slope, Clip min, HardSigmoid alpha, Scale factor
  float beta = 0;   // Clip max, HardSigmoid beta
  // For kAdd: index in the fused node's inputs of the tensor added (same shape as the output).
  int input = -1;
};

std::vector<PostOp> post_ops_of(const Node& node);
// True when input `index` of a fused node was appended for a post-op (not one of the op's own).
bool is_post_op_input(const std::vector<PostOp>& ops, size_t index);
void set_post_ops(Node& node, const std::vector<PostOp>& ops);
const char* post_op_name(PostOp::Kind kind);

// Physical layout of activations: the program may keep 4-D activations channels-last (NHWC)
// between oneDNN primitives. Logical dims stay NCHW everywhere; only the memory order differs.
// Recorded per input and output index of a node ("_in_layouts", "_out_layouts"; 1 = NHWC).
bool input_channels_last(const Node& node, size_t input);
// A MatMul whose input 1 is the tensor before a Transpose of its last two axes, the Transpose
// fused away ("_transpose_b"): oneDNN reads it through strides.
bool matmul_transposes_b(const Node& node);
void set_matmul_transposes_b(Node& node);
bool output_channels_last(const Node& node, size_t output);
// A Conv, ConvTranspose, MatMul or Gemm the plan computes in bf16 ("_bf16"): its oneDNN primitive
// reads bf16 activations and weights (reordered from fp32) and writes fp32.
bool computes_in_bf16(const Node& node);
void mark_bf16(Node& node);
// A Conv, MatMul or Gemm with constant weights the plan computes in int8 ("_int8"), by dynamic
// quantization (dnnl_int8.h).
bool computes_in_int8(const Node& node);
void mark_int8(Node& node);
void set_layouts(Node& node, const std::vector<int64_t>& inputs, const std::vector<int64_t>& outputs);
// For kernels that work on the physical array: the dims of a channels-last 4-D tensor in memory
// order ([N, C, H, W] -> [N, H, W, C]), and where a logical axis lies in them.
std::vector<int64_t> channels_last_dims(const std::vector<int64_t>& dims);
int64_t channels_last_axis(int64_t axis);

}  // namespace hsched::cpu
