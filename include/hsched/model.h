// A model loaded for planning and running: an ONNX file (or the built-in demo model) imported,
// validated and shape-inferred.
//
//   hsched::ImportOptions options;
//   options.input_shapes["images"] = {1, 3, 640, 640};
//   hsched::Result<hsched::Model> model = hsched::load_model("yolo.onnx", options);
//
// A Model is a cheap handle: copies share one immutable graph, which an Executable compiled from
// it keeps alive. Threading: every const use is safe from several threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hsched/dtype.h"
#include "hsched/ids.h"
#include "hsched/shape.h"
#include "hsched/status.h"
#include "hsched/tensor.h"

namespace hsched {

class Graph;  // hsched's graph IR (graph/graph.h), internal

struct ImportOptions {
  // Fixes the dims of graph inputs (`--input-shape NAME=1,3,640,640`). Each name must be an input.
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

// Parses "NAME=1,3,224,224" into `options.input_shapes`.
Status add_input_shape_flag(const std::string& flag, ImportOptions& options);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
};

// What `hsched info` reports about a model: inputs/outputs, op histogram, parameters, GFLOP, a
// peak activation memory estimate and the count of tensors not statically shaped.
struct ModelSummary {
  std::string model;  // file name or built-in model name
  int64_t opset = 0;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  int64_t nodes = 0;
  std::map<std::string, int64_t> ops;  // op type -> count
  int64_t params = 0;                // elements of the initializers nodes read or outputs name
  int64_t param_bytes = 0;
  double gflop = 0;                  // total over nodes; 1 multiply-add = 2 FLOP
  int64_t peak_activation_bytes = 0; // live activations at the worst point of a topological run
  int64_t non_static_tensors = 0;    // values without a static shape or known dtype (0 is the goal)
};

std::string summary_to_text(const ModelSummary& summary);
std::string summary_to_json_text(const ModelSummary& summary);  // a JSON object, indented

class Model {
 public:
  // The file name the model was loaded from, or the built-in model's name.
  const std::string& name() const { return name_; }
  // The graph inputs a run takes, in order (initializers excluded), and its outputs.
  std::vector<TensorInfo> inputs() const;
  std::vector<TensorInfo> outputs() const;
  int64_t node_count() const;
  // A node as messages and reports name it: its name, or "#id" when it has none.
  std::string node_label(NodeId node) const;
  const std::string& op_type(NodeId node) const;
  const std::string& value_name(ValueId value) const;
  ModelSummary summary() const;

  // The graph itself, for hsched's own code (graph/graph.h).
  const Graph& graph() const { return *graph_; }
  const std::shared_ptr<const Graph>& shared_graph() const { return graph_; }
  Model(std::shared_ptr<const Graph> graph, std::string name);

 private:
  std::shared_ptr<const Graph> graph_;
  std::string name_;
};

// Inputs by name: `named` holds one tensor per model input, under the input's name; returned in
// the order Executable::run() takes them. InvalidArgument naming a missing or unknown input.
Result<std::vector<Tensor>> inputs_in_order(const Model& model,
                                            const std::map<std::string, Tensor>& named);

// Every error message starts with the file name and names the node, tensor or flag at fault.
Result<Model> load_model(const std::filesystem::path& path, const ImportOptions& options = {});
// The built-in demo model: a small CNN built in memory ("demo-cnn", input "input" 1x3x64x64
// f32, output "logits" 1x10, seeded weights).
Result<Model> demo_model();

// `.pb` files holding one serialized onnx.TensorProto (the ONNX test-data layout); a file over
// 2 GiB - 1 is refused. `name`, when given, gets the tensor's name.
Result<Tensor> read_tensor_file(const std::filesystem::path& path, std::string* name = nullptr);
// Writes atomically (temp file + rename): a failed write leaves no partial file.
Status write_tensor_file(const Tensor& tensor, const std::string& name,
                         const std::filesystem::path& path);

}  // namespace hsched
