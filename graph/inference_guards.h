// Checks put in front of libonnx's own shape inference for the ops where libonnx 1.12 trusts
// the ranks it is given: its Conv and pooling inference read the input's spatial dims by the
// weight's (or kernel_shape's) count, so a Conv whose input has rank 2 made it read past the
// input's dims and crash (found by the run fuzzer; the input's rank may come from inference
// itself, through a Flatten, so hsched's validation before inference cannot see it).
#pragma once

namespace hsched {

// Wraps, once per process, the inference function of every version of Conv, ConvTranspose,
// ConvInteger, QLinearConv, MaxPool, AveragePool, LpPool and MaxUnpool in libonnx's registry:
// an input X of rank below 3, a weight whose rank differs from X's, or kernel_shape, strides,
// dilations or pads of the wrong length make the node's inference fail (libonnx records it and
// leaves the outputs untyped; hsched then refuses the model naming the value) instead of reading
// out of bounds. Einsum's (version 12) is followed by the output's dims where every input's dims
// are known (libonnx 1.12 infers only its rank: MaxViT's attention had no static shape).
void install_inference_guards();

}  // namespace hsched
