#include "support/bad_models.h"

#include <onnx/onnx_pb.h>

#include <random>

#include "graph/onnx_builder.h"
#include "support/temp_dir.h"

namespace hsched::test {
namespace {

namespace fs = std::filesystem;

// x[1,4] -> Relu -> y: the valid base most cases break in one place.
OnnxBuilder relu_model() {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
  b.node("Relu", {"x"}, {"y"}, "relu");
  return b;
}

std::string save(const fs::path& dir, const std::string& name, const onnx::ModelProto& model) {
  const fs::path path = dir / name;
  write_file(path, model.SerializeAsString());
  return path.string();
}

}  // namespace

onnx::ModelProto external_weight_model(const std::string& location, int64_t offset) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
  auto& w = *b.model().mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(1);
  w.add_dims(1);
  w.add_dims(4);
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location},
                                   {"offset", std::to_string(offset)},
                                   {"length", "16"}}) {
    auto* entry = w.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  b.node("Add", {"x", "w"}, {"y"}, "add");
  return b.model();
}

std::vector<BadInput> make_bad_inputs(const fs::path& dir) {
  std::vector<BadInput> cases;
  const std::string valid = save(dir, "valid.onnx", relu_model().model());

  cases.push_back({"MissingFile", {(dir / "missing.onnx").string()}, "no such file"});
  cases.push_back({"Directory", {dir.string()}, "is a directory"});
  write_file(dir / "empty.onnx", "");
  cases.push_back({"EmptyFile", {(dir / "empty.onnx").string()}, "empty file"});

  {  // Cut inside the raw bytes of a 4 KiB weight: protobuf parsing must fail.
    OnnxBuilder b = relu_model();
    b.initializer_random("big", {1024}, 1.0f, 7);
    const std::string bytes = b.serialize();
    write_file(dir / "truncated.onnx", bytes.substr(0, bytes.size() / 2));
    cases.push_back({"Truncated", {(dir / "truncated.onnx").string()}, "not an ONNX model"});
  }
  {  // Random bytes. With this seed protobuf rejects them outright.
    std::mt19937 rng(1234);
    std::string bytes(4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    write_file(dir / "random.onnx", bytes);
    cases.push_back({"RandomBytes", {(dir / "random.onnx").string()}, "not an ONNX model"});
  }
  {  // a = Add(x, c); c = Relu(a): a cycle.
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {1, 4}).output("a", DType::kF32, {1, 4});
    b.node("Add", {"x", "c"}, {"a"}, "add");
    b.node("Relu", {"a"}, {"c"}, "relu");
    cases.push_back({"Cycle", {save(dir, "cycle.onnx", b.model())}, "cycle through node 'add'"});
  }
  {
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
    b.node("Add", {"x", "ghost"}, {"y"}, "add");
    cases.push_back({"UndefinedInput",
                     {save(dir, "undefined.onnx", b.model())},
                     "node 'add' (Add): input 'ghost' is produced by no node"});
  }
  {
    auto model = relu_model().model();
    model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        99);
    cases.push_back({"UnknownDtype", {save(dir, "dtype99.onnx", model)}, "dtype UNKNOWN"});
    model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        11);
    cases.push_back({"UnsupportedDtype", {save(dir, "double.onnx", model)}, "dtype DOUBLE"});
  }
  {  // 2^40 x 2^40 elements: the product overflows int64's safe range.
    OnnxBuilder b = relu_model();
    auto& w = *b.model().mutable_graph()->add_initializer();
    w.set_name("huge");
    w.set_data_type(1);
    w.add_dims(int64_t{1} << 40);
    w.add_dims(int64_t{1} << 40);
    cases.push_back({"SizeOverflow", {save(dir, "overflow.onnx", b.model())}, "tensor 'huge'"});
  }
  {  // 2^20 x 2^20 x 2^10 = 2^50 elements fit in int64 but pass the element bound.
    auto model = relu_model().model();
    auto* shape =
        model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->mutable_dim(0)->set_dim_value(int64_t{1} << 20);
    shape->mutable_dim(1)->set_dim_value(int64_t{1} << 20);
    shape->add_dim()->set_dim_value(int64_t{1} << 10);
    cases.push_back({"SizeBound", {save(dir, "bound.onnx", model)}, "exceeds the limit"});
  }
  {  // A weight claiming 1M floats with 16 bytes of data.
    OnnxBuilder b = relu_model();
    auto& w = *b.model().mutable_graph()->add_initializer();
    w.set_name("short");
    w.set_data_type(1);
    w.add_dims(1000000);
    w.set_raw_data(std::string(16, '\0'));
    cases.push_back({"ShortRawData", {save(dir, "short.onnx", b.model())}, "bytes of raw data"});
  }
  {
    fs::create_directories(dir / "inner");
    write_file(dir / "secret.bin", std::string(64, 'x'));
    write_file(dir / "inner" / "weights.bin", std::string(8, 'x'));
    const std::string inner = (dir / "inner").string();
    save(dir / "inner", "escape.onnx", external_weight_model("../secret.bin", 0));
    cases.push_back({"ExternalDataEscapes", {inner + "/escape.onnx"}, "leaves the model's folder"});
    save(dir / "inner", "absolute.onnx",
         external_weight_model((dir / "secret.bin").string(), 0));
    cases.push_back({"ExternalDataAbsolute", {inner + "/absolute.onnx"}, "must be a path relative"});
    fs::create_symlink(dir / "secret.bin", dir / "inner" / "link.bin");
    save(dir / "inner", "symlink.onnx", external_weight_model("link.bin", 0));
    cases.push_back({"ExternalDataSymlink", {inner + "/symlink.onnx"}, "resolves outside"});
    save(dir / "inner", "pastend.onnx", external_weight_model("weights.bin", 0));
    cases.push_back({"ExternalDataPastEnd", {inner + "/pastend.onnx"}, "past the end"});
  }
  {
    auto conv = relu_model();
    conv.node("Conv", {"x"}, {"z"}, "conv");  // one input: Conv needs X and W
    cases.push_back({"WrongArity", {save(dir, "arity.onnx", conv.model())}, "node 'conv' (Conv) has 1 inputs"});
  }
  {
    auto model = relu_model().model();
    set_attr(*model.mutable_graph()->mutable_node(0), "alpha", 0.5f);  // Relu has no attributes
    cases.push_back({"UnknownAttribute", {save(dir, "attr.onnx", model)}, "no attribute 'alpha'"});
  }
  {
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
    set_attr(b.node("Softmax", {"x"}, {"y"}, "softmax"), "axis", 1.5f);
    cases.push_back({"AttributeType", {save(dir, "attrtype.onnx", b.model())},
                     "attribute 'axis' has type FLOAT, expected INT"});
  }
  {
    auto model = relu_model().model();
    model.mutable_opset_import(0)->set_version(8);
    cases.push_back({"OldOpset", {save(dir, "opset8.onnx", model)}, "opset 8 is not supported"});
  }
  {
    auto model = relu_model().model();
    model.mutable_graph()->mutable_node(0)->set_op_type("Frobnicate");
    cases.push_back({"UnknownOp", {save(dir, "unknown_op.onnx", model)},
                     "'Frobnicate' is not an ONNX operator"});
  }
  {  // libonnx's Conv shape inference would divide by this zero stride.
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {1, 1, 4, 4}).output("y", DType::kF32, {1, 1, 4, 4});
    b.initializer_random("w", {1, 1, 1, 1}, 1.0f, 3);
    set_attr(b.node("Conv", {"x", "w"}, {"y"}, "conv"), "strides", std::vector<int64_t>{1, 0});
    cases.push_back({"ZeroStride", {save(dir, "stride0.onnx", b.model())},
                     "node 'conv' (Conv): attribute 'strides' has the value 0"});
  }
  cases.push_back({"InputShapeNoSuchInput",
                   {valid, "--input-shape", "image=1,4"},
                   "--input-shape image: the model has no input named 'image'"});
  cases.push_back({"InputShapeBadNumber", {valid, "--input-shape", "x=1,four"}, "'four' is not a dimension"});
  cases.push_back({"InputShapeNegative", {valid, "--input-shape", "x=1,-4"}, "out of range"});
  cases.push_back({"InputShapeWrongRank", {valid, "--input-shape", "x=1,4,1"}, "input has rank 2"});
  return cases;
}

}  // namespace hsched::test
