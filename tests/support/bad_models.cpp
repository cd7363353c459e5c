#include "support/bad_models.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include <limits>
#include <numeric>
#include <random>

#include "graph/onnx_builder.h"
#include "support/temp_dir.h"

namespace hsched::test {

onnx::FunctionProto& add_function(onnx::ModelProto& model, const std::string& name,
                                  const std::vector<onnx::NodeProto>& nodes,
                                  const std::vector<std::string>& inputs) {
  onnx::FunctionProto& fn = *model.add_functions();
  fn.set_domain("local");
  fn.set_name(name);
  for (const auto& in : inputs) fn.add_input(in);
  fn.add_output("b");
  for (const auto& node : nodes) *fn.add_node() = node;
  for (const auto& [domain, version] : {std::pair<std::string, int64_t>{"", 17}, {"local", 1}}) {
    auto& import = *fn.add_opset_import();
    import.set_domain(domain);
    import.set_version(version);
  }
  return fn;
}

onnx::NodeProto make_node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name,
                          const std::string& domain) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(name);
  node.set_domain(domain);
  for (const auto& in : inputs) node.add_input(in);
  for (const auto& out : outputs) node.add_output(out);
  return node;
}

OnnxBuilder function_call_model(const std::string& function) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {1, 4});
  b.node(function, {"x"}, {"y"}, "call").set_domain("local");
  auto& import = *b.model().add_opset_import();
  import.set_domain("local");
  import.set_version(1);
  return b;
}

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

// x[1,1,4,4] -> local.c(x, w) -> y where c's body is one Conv whose strides come from `strides`
// given on the Conv itself, or through the function's attribute "s" when `by_reference`.
onnx::ModelProto function_conv_model(const std::vector<int64_t>& strides, bool by_reference) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 1, 4, 4}).output("y", DType::kF32, {1, 1, 4, 4});
  b.initializer_random("w", {1, 1, 1, 1}, 1.0f, 3);
  onnx::NodeProto& call = b.node("c", {"x", "w"}, {"y"}, "call");
  call.set_domain("local");
  auto& import = *b.model().add_opset_import();
  import.set_domain("local");
  import.set_version(1);
  onnx::NodeProto conv = make_node("Conv", {"a", "w"}, {"b"}, "conv");
  if (by_reference) {
    set_attr(call, "s", strides);
    auto& attr = *conv.add_attribute();
    attr.set_name("strides");
    attr.set_type(onnx::AttributeProto::INTS);
    attr.set_ref_attr_name("s");
  } else {
    set_attr(conv, "strides", strides);
  }
  auto& fn = add_function(b.model(), "c", {conv}, {"a", "w"});
  if (by_reference) fn.add_attribute("s");
  return b.model();
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
        14);
    cases.push_back({"UnsupportedDtype", {save(dir, "complex.onnx", model)}, "dtype COMPLEX64"});
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
    cases.push_back({"ExternalDataSymlink", {inner + "/symlink.onnx"}, "is a symbolic link"});
    // A link to a folder inside the model's folder is not followed either.
    fs::create_directories(dir / "inner" / "real");
    write_file(dir / "inner" / "real" / "w.bin", std::string(16, 'x'));
    fs::create_directory_symlink("real", dir / "inner" / "linked");
    save(dir / "inner", "dirlink.onnx", external_weight_model("linked/w.bin", 0));
    cases.push_back({"ExternalDataFolderLink", {inner + "/dirlink.onnx"},
                     "'linked' is a symbolic link"});
    // offset + length would overflow int64 if added.
    save(dir / "inner", "hugeoffset.onnx",
         external_weight_model("weights.bin", std::numeric_limits<int64_t>::max()));
    cases.push_back({"ExternalDataHugeOffset", {inner + "/hugeoffset.onnx"}, "past the end"});
    // A FIFO blocked open() until a writer came: refused without blocking now.
    ::mkfifo((dir / "inner" / "fifo.bin").c_str(), 0600);
    save(dir / "inner", "fifo.onnx", external_weight_model("fifo.bin", 0));
    cases.push_back({"ExternalDataFifo", {inner + "/fifo.onnx"}, "is a FIFO, not a regular file"});
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
    model.mutable_opset_import(0)->set_version(23);
    cases.push_back({"NewOpset", {save(dir, "opset23.onnx", model)}, "opset 23 is not supported"});
  }
  {  // IR 10's function overload (NodeProto field 8), which onnx 1.12's proto keeps as unknown.
    auto model = relu_model().model();
    model.set_ir_version(10);
    model.mutable_graph()->mutable_node(0)->mutable_unknown_fields()->AddLengthDelimited(8, "fast");
    cases.push_back({"FunctionOverload", {save(dir, "overload.onnx", model)},
                     "calls the function overload 'fast' (IR 10)"});
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
  {
    ::mkfifo((dir / "model_fifo.onnx").c_str(), 0600);
    cases.push_back({"ModelFifo", {(dir / "model_fifo.onnx").string()}, "is a FIFO"});
  }
  {  // Exactly 2 GiB, sparse: one byte more than protobuf parses.
    const fs::path path = dir / "two_gib.onnx";
    write_file(path, "");
    fs::resize_file(path, uintmax_t{1} << 31);
    cases.push_back({"ModelTwoGiB", {path.string()}, "more than protobuf's limit of 2 GiB - 1"});
  }
  {  // libonnx's shape inference recursed until the stack overflowed.
    OnnxBuilder b = function_call_model("f");
    add_function(b.model(), "f", {make_node("f", {"a"}, {"b"}, "again", "local")});
    cases.push_back({"FunctionCallsItself", {save(dir, "recursive.onnx", b.model())},
                     "function 'local.f' calls itself (local.f -> local.f)"});
  }
  {
    OnnxBuilder b = function_call_model("f");
    add_function(b.model(), "f", {make_node("g", {"a"}, {"b"}, "", "local")});
    add_function(b.model(), "g", {make_node("f", {"a"}, {"b"}, "", "local")});
    cases.push_back({"FunctionsCallEachOther", {save(dir, "mutual.onnx", b.model())},
                     "calls itself (local.f -> local.g -> local.f)"});
  }
  {  // f0 -> f1 -> ... -> f9: 10 levels of calls.
    OnnxBuilder b = function_call_model("f0");
    for (int i = 0; i < 10; ++i) {
      const std::string callee = i < 9 ? "f" + std::to_string(i + 1) : "";
      add_function(b.model(), "f" + std::to_string(i),
                   {callee.empty() ? make_node("Relu", {"a"}, {"b"})
                                   : make_node(callee, {"a"}, {"b"}, "", "local")});
    }
    cases.push_back({"FunctionsNestTooDeep", {save(dir, "deep_functions.onnx", b.model())},
                     "call one another more than 8 deep"});
  }
  {  // hsched's attribute guards now see the nodes of a function body: no SIGFPE in libonnx.
    cases.push_back({"FunctionZeroStride",
                     {save(dir, "function_stride0.onnx", function_conv_model({1, 0}, false))},
                     "node 'call/conv' (Conv): attribute 'strides' has the value 0"});
    cases.push_back({"FunctionZeroStrideByReference",
                     {save(dir, "function_ref_stride0.onnx", function_conv_model({1, 0}, true))},
                     "node 'call/conv' (Conv): attribute 'strides' has the value 0"});
  }
  {  // A million axes made libonnx build a million-dim shape (seconds, most of a GB).
    OnnxBuilder b(11);
    b.input("x", DType::kF32, {1, 4}).output("y", DType::kF32, {});
    std::vector<int64_t> axes(1000000);
    std::iota(axes.begin(), axes.end(), 0);
    set_attr(b.node("Unsqueeze", {"x"}, {"y"}, "unsqueeze"), "axes", axes);
    cases.push_back({"UnsqueezeMillionAxes", {save(dir, "unsqueeze_axes.onnx", b.model())},
                     "node 'unsqueeze' (Unsqueeze): attribute 'axes' has 1000000 values"});
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
