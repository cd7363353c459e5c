// Converters of read_ir shared between its files (see ir_read.h for the context they use).
#pragma once

#include <vector>

#include "backends/level_zero/ir/ir_read.h"

namespace hsched::ir::detail {

// Numpy broadcast of two dims lists; InvalidArgument naming the layer when they do not broadcast.
Result<std::vector<int64_t>> broadcast_dims(ReadContext& ctx, const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b);

// ir_read_compute.cpp: the layers with windows, contractions and statistics.
Status read_convolution(ReadContext& ctx);
Status read_pool(ReadContext& ctx);
Status read_matmul(ReadContext& ctx);
Status read_batch_norm(ReadContext& ctx);
Status read_mvn(ReadContext& ctx);

}  // namespace hsched::ir::detail
