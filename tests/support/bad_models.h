// Generated malformed inputs for the importer and the CLI: each is one bad-input case of
// issue 2, with the text its one-line error must contain.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/onnx_builder.h"

namespace hsched::test {

struct BadInput {
  std::string name;                // test name
  std::vector<std::string> args;   // what follows `hsched info`: the model path, then flags
  std::string expect;              // a substring of the one-line error
};

// y = x + w, x and w 1x4 f32, w read from `location` beside the model: 16 bytes at `offset`.
onnx::ModelProto external_weight_model(const std::string& location, int64_t offset);

// A model-local function of domain "local" from `inputs` to "b", importing opset 17 of the
// default domain and version 1 of "local".
onnx::FunctionProto& add_function(onnx::ModelProto& model, const std::string& name,
                                  const std::vector<onnx::NodeProto>& nodes,
                                  const std::vector<std::string>& inputs = {"a"});
onnx::NodeProto make_node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "",
                          const std::string& domain = "");
// x[1,4] -> the node "call" of local.<function> -> y[1,4], at opset 17, importing "local".
OnnxBuilder function_call_model(const std::string& function);

// Writes the files of every case into `dir` and returns the cases.
std::vector<BadInput> make_bad_inputs(const std::filesystem::path& dir);

}  // namespace hsched::test
