#include "sam3/model_inspect.h"

#include <algorithm>

#include "kernels/onednn_int8.h"
#include "model/layout.h"
#include "runtime/model_file_cache.h"
#include "runtime/session.h"
#include "sam3/error.h"

namespace sam3 {
namespace {

std::vector<TensorDescription> describe(const Ort::Session& session, bool inputs) {
  std::vector<TensorDescription> out;
  for (const auto& t : runtime::read_io(session, inputs)) {
    out.push_back({t.name, t.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED ? "non-tensor" : runtime::type_name(t.type), t.shape});
  }
  return out;
}

// The file's I/O from a session without graph optimisation (quick, writes nothing).
OnnxFileDescription describe_file(const std::filesystem::path& file, const runtime::FileCacheOptions& cache) {
  OnnxFileDescription d;
  d.file = file;
  std::error_code ec;
  d.bytes = std::filesystem::file_size(file, ec);
  if (const auto sidecar = runtime::external_data_file(file); !sidecar.empty()) d.external_bytes = std::filesystem::file_size(sidecar, ec);
  d.prepared = runtime::has_prepared_file(file, cache);
  try {
    Ort::SessionOptions options;
    options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_DISABLE_ALL);
    options.SetIntraOpNumThreads(1);
    Ort::Session session(runtime::env(), file.c_str(), options);
    d.inputs = describe(session, true);
    d.outputs = describe(session, false);
  } catch (const Ort::Exception& e) {
    d.error = e.what();
  }
  return d;
}

}  // namespace

Layout check_model_folder(const std::filesystem::path& directory) { return detail::detect_layout(directory).layout; }

ModelInspection inspect_model(const std::filesystem::path& directory, const ModelOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_directory(directory, ec)) {
    throw Error(ErrorCode::kModelNotFound, directory.string() + ": not a folder; pass the folder that holds the SAM3 .onnx files");
  }
  detail::check_model_folder_entries(directory);  // before any file of it is opened
  ModelInspection r;
  r.directory = directory;
  runtime::FileCacheOptions cache;
  cache.fuse_attention = options.fuse_attention;
  cache.onednn = options.onednn_kernels;
  cache.bf16 = options.precision == Precision::kFast;
  cache.onednn_min_weights = options.onednn_min_weights;
  cache.int8 = options.int8_weights == Int8Weights::kOn    ? runtime::Int8Weights::kOn
               : options.int8_weights == Int8Weights::kOff ? runtime::Int8Weights::kOff
                                                           : runtime::Int8Weights::kAuto;
  std::vector<std::filesystem::path> onnx;
  // The onnx-community repositories keep their graphs under onnx/.
  for (const auto& where : {directory, directory / "onnx"}) {
    for (const auto& e : std::filesystem::directory_iterator(where, ec)) {
      if (e.is_regular_file(ec) && e.path().extension() == ".onnx") onnx.push_back(e.path());
    }
  }
  std::sort(onnx.begin(), onnx.end());
  for (const auto& f : onnx) r.files.push_back(describe_file(f, cache));
  r.int8_kernels = options.onednn_kernels || !kernels::onednn_int8_available() ? kernels::int8_kernels_description()
                                                                               : "ONNX Runtime (oneDNN turned off)";
  r.vocabulary = detail::find_vocabulary(directory);
  if (r.vocabulary.empty()) r.vocabulary = options.fallback_vocabulary;
  // The real loader decides the generation; nothing is prepared or cached for it.
  ModelOptions load = options;
  load.cache_optimized = false;
  load.fuse_attention = false;
  load.intra_op_threads = 1;
  try {
    const auto model = Model::load(directory, load);
    r.generation = model->generation();
    if (model->kind() == ModelKind::kInteractive) r.vocabulary.clear();  // it takes no text
    r.quirks = model->quirks();
    r.input_width = model->input_width();
    r.input_height = model->input_height();
    for (const auto& f : r.files) {
      if (f.external_bytes > 0) {
        const bool hub = runtime::external_data_file(f.file).string().ends_with("_data");  // onnx-community's naming
        r.quirks.push_back(std::string("weights in ") + (hub ? ".onnx_data" : ".onnx.data") +
                           " sidecars (read beside the .onnx; no prepared graph is cached)");
        break;
      }
    }
  } catch (const Error& e) {
    r.problem = e.what();
  }
  return r;
}

}  // namespace sam3
