// CpuProgram's memory plan: view ops become aliases, then one arena holds every activation,
// values whose lifetimes never overlap sharing bytes.
#include <algorithm>
#include <optional>
#include <set>

#include "backends/cpu/program.h"
#include "backends/cpu/step_plan.h"

namespace hsched::cpu {

// Views first (alias_views, step_plan.h): the output of a view op shares its input's storage (at
// an offset) and the step is dropped, unless the storage is a graph input (bound anew each run) or
// either side a graph output (handed to the caller). Then greedy placement in one arena: storage
// roots sorted by size, each at the lowest 64-byte-aligned offset not overlapping a placed root
// whose lifetime (producing step .. last step reading it or any of its views) intersects its own.
Status CpuProgram::plan_memory() {
  const size_t n = graph_.values().size();
  const std::set<ValueId> graph_outputs(graph_.outputs().begin(), graph_.outputs().end());
  std::vector<const Node*> nodes;
  for (const auto& step : steps_) nodes.push_back(&step->node);
  const ViewAliases views = alias_views(graph_, nodes);
  const std::vector<size_t>& root = views.root;
  const std::vector<int64_t>& offset_in_root = views.offset_in_root;
  std::vector<std::unique_ptr<Step>> kept;
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (views.aliased[s]) {
      ++stats_.aliased_views;
    } else {
      kept.push_back(std::move(steps_[s]));
    }
  }
  steps_ = std::move(kept);
  stats_.kernels = static_cast<int>(steps_.size());

  std::vector<int> first(n, -1), last(n, -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    const int at = static_cast<int>(s);
    for (ValueId v : steps_[s]->node.outputs) {
      if (v != kNoValue)
        first[root[static_cast<size_t>(v)]] = last[root[static_cast<size_t>(v)]] = at;
    }
    for (ValueId v : steps_[s]->node.inputs) {
      if (v != kNoValue) last[root[static_cast<size_t>(v)]] = at;
    }
  }
  struct Block {
    size_t value;
    int64_t size, offset;
  };
  std::vector<Block> blocks;
  for (size_t v = 0; v < n; ++v) {
    if (first[v] < 0 || root[v] != v || graph_outputs.count(static_cast<ValueId>(v))) continue;
    const int64_t size = (graph_.values()[v].byte_size() + 63) / 64 * 64;
    blocks.push_back({v, size, 0});
    stats_.activation_bytes += size;
  }
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const Block& a, const Block& b) { return a.size > b.size; });
  std::vector<const Block*> placed;
  int64_t total = 0;
  for (auto& block : blocks) {
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Block* p : placed) {
      if (first[p->value] <= last[block.value] && first[block.value] <= last[p->value]) {
        busy.emplace_back(p->offset, p->offset + p->size);
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + block.size <= begin) break;
      offset = std::max(offset, end);
    }
    block.offset = offset;
    total = std::max(total, offset + block.size);
    placed.push_back(&block);
  }
  stats_.arena_bytes = total;
  for (ValueId v : graph_outputs) {
    if (!graph_.value(v).is_constant()) {
      stats_.output_bytes += static_cast<int64_t>(graph_.value(v).byte_size());
    }
  }
  HSCHED_RETURN_IF_ERROR(
      check_memory(total + stats_.output_bytes, "its activations and outputs"));
  // Not zero-filled: every step writes the whole of each output before a later step reads it.
  arena_memory_ = Tensor::uninitialized(DType::kU8, {std::max<int64_t>(total, 1)}).storage();
  std::vector<int64_t> arena_offset(n, -1);
  for (const auto& block : blocks) arena_offset[block.value] = block.offset;
  buffers_.assign(n, std::nullopt);
  for (size_t v = 0; v < n; ++v) {
    if (arena_offset[root[v]] < 0) continue;  // not produced by a step, or a graph output
    const Value& value = graph_.values()[v];
    std::byte* data = arena_memory_.get() + arena_offset[root[v]] + offset_in_root[v];
    buffers_[v] =
        Tensor(value.dtype, value.shape.dims, std::shared_ptr<std::byte>(arena_memory_, data));
  }
  return Status::ok();
}

}  // namespace hsched::cpu
