// The part of ONNX Runtime's Python API that ailia-models' SAM 3.1 driver calls
// (InferenceSession(path, providers=...), run(names, feeds), get_inputs/get_outputs), over the
// ONNX Runtime C++ API and library that sam3 itself links. It exists so that the driver runs
// here, where no ONNX Runtime for Python is installed, on the same runtime as sam3
// (tools/ailia_driver/compare_video_driver.py). Imported as `onnxruntime`.
//
// For benchmarks (tools/ailia_driver/bench_video_driver.py) it also keeps the time spent in each
// session's run(), keyed by the file name of its graph: `onnxruntime.sam3_run_times()` returns
// {file: (calls, seconds)}, and with SAM3_ORT_RUN_TIMES set they are written at exit as JSON to
// that path ("-": stderr). The driver's code is untouched; the rest of its frame is host work.
// SAM3_ORT_THREADS sets every session's intra-op threads (ONNX Runtime's default otherwise).
#include <onnxruntime_cxx_api.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

Ort::Env& env() {
  // Never destroyed: sessions may outlive the module's teardown at interpreter exit.
  // Telemetry off as in sam3's own runtime (src/runtime/session.cpp says why).
  static auto* e = (setenv("ORT_DISABLE_TELEMETRY", "1", /*overwrite=*/0), new Ort::Env(ORT_LOGGING_LEVEL_WARNING, "sam3-ailia-driver"));
  return *e;
}

struct RunTime {
  long long calls = 0;
  double seconds = 0;
};

std::map<std::string, RunTime>& run_times() {
  static auto* times = new std::map<std::string, RunTime>();  // never destroyed, as env()
  return *times;
}

// The whole of run(): the numpy copies in and out as well as ONNX Runtime's Run, as ONNX
// Runtime's own Python binding spends them.
class RunTimer {
 public:
  explicit RunTimer(RunTime& into) : into_(into), start_(std::chrono::steady_clock::now()) {}
  ~RunTimer() {
    into_.calls += 1;
    into_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  RunTime& into_;
  std::chrono::steady_clock::time_point start_;
};

void write_run_times() {
  const char* to = std::getenv("SAM3_ORT_RUN_TIMES");
  if (!to || !*to) return;
  std::string json = "{";
  for (const auto& [file, t] : run_times())
    json += (json.size() > 1 ? ", \"" : "\"") + file + "\": [" + std::to_string(t.calls) + ", " + std::to_string(t.seconds) + "]";
  json += "}\n";
  if (std::string(to) == "-") {
    std::fputs(json.c_str(), stderr);
  } else if (FILE* f = std::fopen(to, "w")) {
    std::fputs(json.c_str(), f);
    std::fclose(f);
  }
}

struct ElementType {
  ONNXTensorElementDataType ort;
  const char* numpy;  // numpy dtype name
  const char* onnx;   // the name in ONNX Runtime's "tensor(...)" type strings
};

constexpr ElementType kTypes[] = {
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, "float32", "float"},     {ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, "float64", "double"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, "float16", "float16"}, {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, "int64", "int64"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, "int32", "int32"},       {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, "int16", "int16"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, "int8", "int8"},          {ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, "uint8", "uint8"},
    {ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, "bool", "bool"},
};

const ElementType& element_type(ONNXTensorElementDataType t) {
  for (const auto& e : kTypes)
    if (e.ort == t) return e;
  throw py::type_error("tensor element type " + std::to_string(static_cast<int>(t)) + " is not supported by this shim");
}

const ElementType& element_type(const py::dtype& d) {
  for (const auto& e : kTypes)
    if (d.equal(py::dtype(e.numpy))) return e;
  throw py::type_error("numpy dtype " + py::repr(static_cast<const py::handle&>(d)).cast<std::string>() + " is not supported by this shim");
}

std::string type_string(ONNXTensorElementDataType t) { return std::string("tensor(") + element_type(t).onnx + ")"; }

struct NodeArg {
  std::string name;
  py::list shape;  // ints, the symbolic name of a named dimension, None for an unnamed dynamic one
  std::string type;
};

NodeArg node_arg(const std::string& name, const Ort::TypeInfo& info) {
  NodeArg arg{name, py::list(), {}};
  if (info.GetONNXType() != ONNX_TYPE_TENSOR) {
    arg.type = "non-tensor";
    return arg;
  }
  const auto tensor = info.GetTensorTypeAndShapeInfo();
  arg.type = type_string(tensor.GetElementType());
  const auto dims = tensor.GetShape();
  std::vector<const char*> symbols(dims.size(), nullptr);
  tensor.GetSymbolicDimensions(symbols.data(), symbols.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0)
      arg.shape.append(dims[i]);
    else if (symbols[i] && *symbols[i])
      arg.shape.append(std::string(symbols[i]));
    else
      arg.shape.append(py::none());
  }
  return arg;
}

class InferenceSession {
 public:
  InferenceSession(const std::string& path, const py::object& /*sess_options*/, const py::object& providers)
      : path_(path), time_(run_times()[std::filesystem::path(path).filename().string()]) {
    if (!providers.is_none())
      for (const auto& p : providers) {
        const std::string name = py::isinstance<py::tuple>(p) ? py::str(p.cast<py::tuple>()[0]) : py::str(p);
        if (name != "CPUExecutionProvider")  // ONNX Runtime for Python warns and falls back likewise
          PyErr_WarnEx(PyExc_UserWarning, ("Specified provider '" + name + "' is not available; using CPUExecutionProvider").c_str(), 1);
      }
    Ort::SessionOptions options;
    // SAM3_ORT_THREADS: intra-op threads of every session (benchmarks pin both runners to the
    // same count); unset, ONNX Runtime's default, as the driver gets it.
    if (const char* threads = std::getenv("SAM3_ORT_THREADS"); threads && *threads) {
      char* end = nullptr;
      const long n = std::strtol(threads, &end, 10);
      if (*end != '\0' || n < 1 || n > 4096)
        throw py::value_error(std::string("SAM3_ORT_THREADS=") + threads + ": give a thread count from 1");
      options.SetIntraOpNumThreads(static_cast<int>(n));
    }
    session_ = std::make_unique<Ort::Session>(env(), path.c_str(), options);
    Ort::AllocatorWithDefaultOptions allocator;
    for (size_t i = 0; i < session_->GetInputCount(); ++i) {
      inputs_.push_back(node_arg(session_->GetInputNameAllocated(i, allocator).get(), session_->GetInputTypeInfo(i)));
      input_types_.push_back(session_->GetInputTypeInfo(i).GetTensorTypeAndShapeInfo().GetElementType());
    }
    for (size_t i = 0; i < session_->GetOutputCount(); ++i)
      outputs_.push_back(node_arg(session_->GetOutputNameAllocated(i, allocator).get(), session_->GetOutputTypeInfo(i)));
  }

  std::vector<NodeArg> get_inputs() const { return inputs_; }
  std::vector<NodeArg> get_outputs() const { return outputs_; }
  std::vector<std::string> get_providers() const { return {"CPUExecutionProvider"}; }

  py::list run(const py::object& output_names, const py::dict& feeds) {
    const RunTimer timer(time_);
    Ort::AllocatorWithDefaultOptions allocator;
    std::vector<std::string> in_names;
    std::vector<Ort::Value> in_values;
    for (const auto& [key, value] : feeds) {
      const auto name = key.cast<std::string>();
      const auto arr = py::array::ensure(value, py::array::c_style);
      if (!arr) throw py::type_error("input '" + name + "' is not convertible to a numpy array");
      const auto& type = element_type(arr.dtype());
      const auto expected = declared_type(name);
      if (type.ort != expected)
        throw py::value_error("Unexpected input data type. Actual: (" + type_string(type.ort) + ") , expected: (" + type_string(expected) +
                              ")");
      std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
      // Owned by ONNX Runtime's allocator, so zero-sized inputs (the driver's empty box prompt) work too.
      auto tensor = Ort::Value::CreateTensor(allocator, shape.data(), shape.size(), type.ort);
      if (arr.nbytes() > 0) std::memcpy(tensor.GetTensorMutableRawData(), arr.data(), static_cast<size_t>(arr.nbytes()));
      in_names.push_back(name);
      in_values.push_back(std::move(tensor));
    }
    std::vector<std::string> out_names;
    if (output_names.is_none())
      for (const auto& o : outputs_) out_names.push_back(o.name);
    else
      out_names = output_names.cast<std::vector<std::string>>();
    std::vector<const char*> in_c, out_c;
    for (const auto& n : in_names) in_c.push_back(n.c_str());
    for (const auto& n : out_names) out_c.push_back(n.c_str());
    std::vector<Ort::Value> results;
    {
      py::gil_scoped_release release;
      results = session_->Run(Ort::RunOptions{nullptr}, in_c.data(), in_values.data(), in_values.size(), out_c.data(), out_c.size());
    }
    py::list out;
    for (auto& v : results) {
      const auto info = v.GetTensorTypeAndShapeInfo();
      const auto& type = element_type(info.GetElementType());
      const auto shape = info.GetShape();
      py::array arr(py::dtype(type.numpy), std::vector<py::ssize_t>(shape.begin(), shape.end()));
      if (arr.nbytes() > 0) std::memcpy(arr.mutable_data(), v.GetTensorRawData(), static_cast<size_t>(arr.nbytes()));
      out.append(arr);
    }
    return out;
  }

 private:
  ONNXTensorElementDataType declared_type(const std::string& name) const {
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (inputs_[i].name == name) return input_types_[i];
    throw py::value_error("'" + name + "' is not an input of " + path_);
  }

  std::string path_;
  RunTime& time_;  // shared by every session of the same file name
  std::unique_ptr<Ort::Session> session_;
  std::vector<NodeArg> inputs_, outputs_;
  std::vector<ONNXTensorElementDataType> input_types_;
};

}  // namespace

PYBIND11_MODULE(onnxruntime, m) {
  m.doc() = "ONNX Runtime's Python session API (the subset ailia's SAM 3.1 driver uses) over sam3's ONNX Runtime";
  m.attr("__version__") = Ort::GetVersionString();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Ort::Exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  py::class_<NodeArg>(m, "NodeArg")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("shape", &NodeArg::shape)
      .def_readonly("type", &NodeArg::type)
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type + "', shape=" + std::string(py::repr(a.shape)) + ")";
      });
  py::class_<InferenceSession>(m, "InferenceSession")
      .def(py::init<const std::string&, const py::object&, const py::object&>(), py::arg("path_or_bytes"),
           py::arg("sess_options") = py::none(), py::arg("providers") = py::none())
      .def("run", &InferenceSession::run, py::arg("output_names"), py::arg("input_feed"))
      .def("get_inputs", &InferenceSession::get_inputs)
      .def("get_outputs", &InferenceSession::get_outputs)
      .def("get_providers", &InferenceSession::get_providers);
  m.def("get_available_providers", [] { return std::vector<std::string>{"CPUExecutionProvider"}; });
  m.def("get_device", [] { return std::string("CPU"); });
  m.def(
      "sam3_run_times",
      [] {
        py::dict out;
        for (const auto& [file, t] : run_times()) out[py::str(file)] = py::make_tuple(t.calls, t.seconds);
        return out;
      },
      "Time spent in run() per graph file name: {file: (calls, seconds)} (not part of ONNX Runtime's API)");
  py::module_::import("atexit").attr("register")(py::cpp_function(&write_run_times));
}
