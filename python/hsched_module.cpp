// hsched._hsched: the Python binding of hsched's public API (pybind11). python/hsched/__init__.py
// re-exports it; docs/python.md is its reference. Errors of the library raise hsched.Error with
// the library's one-line message; NumPy arrays in, NumPy arrays out, the GIL released while a
// model compiles or runs.
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "hsched/hsched.h"

namespace py = pybind11;

namespace hsched::python {
namespace {

// The exception every library error becomes (registered as hsched.Error, a RuntimeError).
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T value_or_raise(Result<T> result) {
  if (!result.is_ok()) throw Error(result.status().message());
  return std::move(result).value();
}

py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return py::dtype::of<float>();
    case DType::kF64:
      return py::dtype::of<double>();
    case DType::kF16:
      return py::dtype("float16");
    case DType::kI8:
      return py::dtype::of<int8_t>();
    case DType::kU8:
      return py::dtype::of<uint8_t>();
    case DType::kI16:
      return py::dtype::of<int16_t>();
    case DType::kU16:
      return py::dtype::of<uint16_t>();
    case DType::kI32:
      return py::dtype::of<int32_t>();
    case DType::kU32:
      return py::dtype::of<uint32_t>();
    case DType::kI64:
      return py::dtype::of<int64_t>();
    case DType::kU64:
      return py::dtype::of<uint64_t>();
    case DType::kBool:
      return py::dtype::of<bool>();
    case DType::kBF16:
    case DType::kUndefined:
      break;
  }
  throw Error("tensors of type " + std::string(dtype_name(dtype)) + " have no NumPy type");
}

// A NumPy array that owns `tensor` (no copy: the array's base keeps the tensor alive).
py::array to_numpy(Tensor tensor) {
  const py::dtype dtype = numpy_dtype(tensor.dtype());
  std::vector<py::ssize_t> shape(tensor.dims().begin(), tensor.dims().end());
  auto* owned = new Tensor(std::move(tensor));
  py::capsule base(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype, shape, owned->raw(), base);
}

// The tensor a run reads for `info`: the array's own memory when it is C-contiguous and of the
// input's type (zero copy), else a converted copy, which `keep` holds while the run lasts.
Tensor from_numpy(const TensorInfo& info, const py::handle& value, std::vector<py::array>& keep) {
  const py::dtype want = numpy_dtype(info.dtype);
  py::array array = py::array::ensure(value);
  if (!array) throw Error("input '" + info.name + "' is not an array");
  if (!array.dtype().is(want) || !(array.flags() & py::array::c_style)) {
    array = py::array(py::module_::import("numpy").attr("ascontiguousarray")(array, want));
  }
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  if (info.shape.rank_known && info.shape.is_static() && dims != info.shape.dims) {
    throw Error("input '" + info.name + "' has shape " + Shape(dims).to_string() +
                ", the model takes " + info.shape.to_string());
  }
  keep.push_back(array);
  // Read only: a run never writes its inputs (read-only arrays are taken in place too).
  return Tensor::borrow(info.dtype, std::move(dims), const_cast<void*>(array.data()));
}

py::object parse_json(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

py::dict device_dict(const DeviceProfile& device) {
  py::dict d;
  d["id"] = device.id;
  d["name"] = device.name;
  d["kind"] = device_kind_name(device.kind);
  d["api"] = device_api_name(device.api);
  d["present"] = device.present;
  d["simulated"] = device.name.find("simulated") != std::string::npos;
  py::list precisions;
  for (Precision p : device.precisions()) precisions.append(precision_name(p));
  d["precisions"] = precisions;
  d["memory_bytes"] = device.memory_bytes;
  return d;
}

Target target_named(const std::optional<std::string>& target) {
  return value_or_raise(resolve_target_or_discover(target.value_or(kThisMachineTarget)));
}

struct PyPlan {
  std::shared_ptr<const Model> model;
  Plan plan;

  py::object report(const std::string& format) const {
    const std::optional<ReportFormat> parsed = parse_report_format(format);
    if (!parsed) throw Error("report format '" + format + "': text, json, dot or html");
    std::string text = value_or_raise(format_report(*model, plan, *parsed));
    if (*parsed == ReportFormat::kJson) return parse_json(text);
    return py::str(text);
  }
};

struct PyExecutable {
  std::shared_ptr<const Model> model;  // the graph the executable runs
  std::unique_ptr<Executable> executable;

  std::vector<Tensor> inputs(const py::dict& named, std::vector<py::array>& keep) const {
    std::vector<Tensor> ordered;
    const std::vector<TensorInfo> infos = model->inputs();
    for (const TensorInfo& info : infos) {
      if (!named.contains(info.name)) throw Error("input '" + info.name + "' is missing");
      ordered.push_back(from_numpy(info, named[py::str(info.name)], keep));
    }
    if (named.size() != infos.size()) {
      for (const auto& [key, value] : named) {
        const std::string name = py::str(key);
        bool known = false;
        for (const TensorInfo& info : infos) known |= info.name == name;
        if (!known) throw Error("'" + name + "' is not an input of the model");
      }
    }
    return ordered;
  }

  py::dict outputs(std::vector<Tensor> tensors) const {
    py::dict out;
    const std::vector<TensorInfo> infos = model->outputs();
    for (size_t k = 0; k < tensors.size() && k < infos.size(); ++k) {
      out[py::str(infos[k].name)] = to_numpy(std::move(tensors[k]));
    }
    return out;
  }

  py::dict run(const py::dict& named) {
    std::vector<py::array> keep;
    const std::vector<Tensor> ordered = inputs(named, keep);
    Result<std::vector<Tensor>> result = [&] {
      py::gil_scoped_release release;
      return executable->run(ordered);
    }();
    return outputs(value_or_raise(std::move(result)));
  }

  // A zeroed array for input `name` in the memory its devices copy from fastest
  // (Executable::allocate_input): filled in place and passed to run(), it is read without a copy.
  py::array allocate_input(const std::string& name) {
    const std::vector<TensorInfo> infos = model->inputs();
    for (size_t k = 0; k < infos.size(); ++k) {
      if (infos[k].name == name) return to_numpy(value_or_raise(executable->allocate_input(k)));
    }
    throw Error("'" + name + "' is not an input of the model");
  }

  py::dict stats() const {
    const ExecutableStats stats = executable->stats();
    py::dict d;
    d["compile_ms"] = stats.compile_ms;
    d["programs_built"] = stats.programs_built;
    d["programs_loaded"] = stats.programs_loaded;
    d["replans"] = stats.replans;
    d["quarantined"] = stats.quarantined;
    d["plan_started_ms"] = stats.plan_started_ms;
    d["plan_ready_ms"] = stats.plan_ready_ms;
    d["requests_on_cpu"] = stats.requests_on_cpu;
    d["requests_partial"] = stats.requests_partial;
    d["progressive_error"] = stats.progressive_error;
    return d;
  }

  py::list run_stream(const py::list& requests, int max_in_flight) {
    std::vector<py::array> keep;
    std::vector<std::vector<Tensor>> batch;
    for (const py::handle& request : requests)
      batch.push_back(inputs(request.cast<py::dict>(), keep));
    Result<std::vector<std::vector<Tensor>>> result = [&] {
      py::gil_scoped_release release;
      return executable->run_stream(batch, max_in_flight);
    }();
    py::list out;
    for (std::vector<Tensor>& tensors : value_or_raise(std::move(result))) {
      out.append(outputs(std::move(tensors)));
    }
    return out;
  }
};

struct PyModel {
  std::shared_ptr<const Model> model;

  std::vector<std::string> names(const std::vector<TensorInfo>& infos) const {
    std::vector<std::string> out;
    for (const TensorInfo& info : infos) out.push_back(info.name);
    return out;
  }

  PyPlan plan(const std::optional<std::string>& target, const std::optional<std::string>& policy,
              const std::optional<std::string>& config) const {
    if (config && (target || policy)) {
      throw Error("plan(): config= names the target and the policy; give it alone");
    }
    Target resolved;
    Policy chosen;
    if (config) {
      Deployment deployment = value_or_raise(load_deployment_or_discover(*config));
      resolved = std::move(deployment.target);
      chosen = std::move(deployment.policy);
    } else {
      resolved = target_named(target);
      chosen = value_or_raise(resolve_policy(policy.value_or("default")));
    }
    return PyPlan{model, value_or_raise(schedule(*model, resolved, chosen))};
  }

  PyExecutable compile(const PyPlan& plan, std::optional<int> threads, bool verify,
                       const std::string& cache_dir, int64_t compile_timeout_ms,
                       bool progressive) const {
    ExecutorOptions options;
    if (threads) {
      if (*threads < 1) throw Error("threads must be at least 1");
      options.cpu_threads = *threads;
    }
    options.verify = verify;
    options.cache_dir = cache_dir;
    options.compile_timeout_ms = compile_timeout_ms;
    options.progressive_start = progressive;
    Result<std::unique_ptr<Executable>> executable = [&] {
      py::gil_scoped_release release;
      return hsched::compile(*model, plan.plan, options);
    }();
    return PyExecutable{model, value_or_raise(std::move(executable))};
  }
};

}  // namespace
}  // namespace hsched::python

PYBIND11_MODULE(_hsched, m) {
  using namespace hsched;
  using namespace hsched::python;
  m.doc() = "hsched: heterogeneous scheduling of ONNX models over CPUs, OpenCL GPUs and NPUs";
  m.attr("__version__") = version();
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);

  m.def(
      "devices",
      [](const std::optional<std::string>& target) {
        py::list out;
        for (const DeviceProfile& device : target_named(target).devices) {
          out.append(device_dict(device));
        }
        return out;
      },
      py::arg("target") = py::none(),
      "The devices of a target (a shipped name, a YAML file) or, by default, of this machine.");

  m.def(
      "load",
      [](const std::string& path,
         const std::optional<std::map<std::string, std::vector<int64_t>>>& input_shapes) {
        ImportOptions options;
        if (input_shapes) options.input_shapes = *input_shapes;
        return PyModel{std::make_shared<const Model>(value_or_raise(load_model(path, options)))};
      },
      py::arg("path"), py::arg("input_shapes") = py::none(),
      "Loads an ONNX model; input_shapes fixes the dims of graph inputs by name.");

  py::class_<PyModel>(m, "Model")
      .def_property_readonly("name", [](const PyModel& self) { return self.model->name(); })
      .def_property_readonly("inputs",
                             [](const PyModel& self) { return self.names(self.model->inputs()); })
      .def_property_readonly("outputs",
                             [](const PyModel& self) { return self.names(self.model->outputs()); })
      .def("summary",
           [](const PyModel& self) {
             return parse_json(summary_to_json_text(self.model->summary()));
           })
      .def("plan", &PyModel::plan, py::arg("target") = py::none(), py::arg("policy") = py::none(),
           py::arg("config") = py::none(),
           "Plans the model for a target and a policy (shipped names or YAML files), or for a "
           "deployment file (config=).")
      .def("compile", &PyModel::compile, py::arg("plan"), py::arg("threads") = py::none(),
           py::arg("verify") = false, py::arg("cache_dir") = "",
           py::arg("compile_timeout_ms") = 30000, py::arg("progressive") = false,
           "Compiles a plan of this model for running; progressive=True returns once the CPU "
           "can run it and moves its device partitions in as they compile.");

  py::class_<PyPlan>(m, "Plan")
      .def("report", &PyPlan::report, py::arg("format") = "text",
           "The fallback report: text or html as a string, json as a dict.")
      .def_property_readonly("target", [](const PyPlan& self) { return self.plan.target.name; })
      .def_property_readonly("policy", [](const PyPlan& self) { return self.plan.policy.name; })
      .def_property_readonly("partitions",
                             [](const PyPlan& self) { return self.plan.partitions.size(); })
      .def_property_readonly("predicted_ms",
                             [](const PyPlan& self) { return self.plan.predicted_ms; })
      .def_property_readonly("predicted_run_ms",
                             [](const PyPlan& self) { return self.plan.predicted_run_ms; });

  py::class_<PyExecutable>(m, "Executable")
      .def_property_readonly(
          "plan",
          [](const PyExecutable& self) {
            return PyPlan{self.model, self.executable->plan()};
          },
          "The plan it runs: the compiled one, after any re-plan (late rejections) or quarantine.")
      .def("run", &PyExecutable::run, py::arg("inputs"),
           "Runs once: {input name: array} -> {output name: array}.")
      .def("allocate_input", &PyExecutable::allocate_input, py::arg("name"),
           "A zeroed array for input NAME in the memory the devices reading it copy from "
           "fastest (a GPU's page-locked memory); fill it in place and pass it to run().")
      .def("run_stream", &PyExecutable::run_stream, py::arg("requests"),
           py::arg("max_in_flight") = 0,
           "Runs a list of requests, pipelined across devices; their outputs in order.")
      .def_property_readonly("stats", &PyExecutable::stats,
                             "Compile figures and, with progressive=True, where requests ran.");

  m.def(
      "calibrate",
      [](const std::string& device, const std::optional<std::string>& target,
         std::optional<int> threads, int rounds) {
        const Target resolved = target_named(target);
        const DeviceProfile* measured = resolved.find(device);
        if (measured == nullptr) throw Error("no device '" + device + "' in " + resolved.name);
        const DeviceProfile* host = nullptr;
        for (const DeviceProfile& d : resolved.devices) {
          if (d.api == DeviceApi::kHost) host = &d;
        }
        if (host == nullptr) throw Error("target " + resolved.name + " has no host CPU");
        CalibrateOptions options;
        if (threads) options.cpu_threads = *threads;
        options.protocol.rounds = rounds;
        Result<CalibrationReport> report = [&] {
          py::gil_scoped_release release;
          return calibrate_device(*measured, *host, nullptr, options);
        }();
        CalibrationReport done = value_or_raise(std::move(report));
        py::dict out;
        out["device"] = device;
        out["lines"] = done.lines;
        out["measured"] = done.measured;
        out["skipped"] = done.skipped;
        out["rounds"] = done.rounds;
        Target single{resolved.name, "calibrated", {done.profile}};
        out["profile_yaml"] = target_yaml(single, "# hsched.calibrate()\n");
        return out;
      },
      py::arg("device"), py::arg("target") = py::none(), py::arg("threads") = py::none(),
      py::arg("rounds") = 5,
      "Measures a device's speed (hsched calibrate) and returns its profile as YAML.");
}
