#include "sam3/model.h"

#include <algorithm>
#include <thread>

#include "core/timer.h"
#include "kernels/onednn_bf16.h"
#include "kernels/onednn_int8.h"
#include "model/embedding_access.h"
#include "model/backend.h"
#include "model/model_access.h"
#include "pure/families.h"
#include "model/layout.h"
#include "predictor/preprocess.h"
#include "runtime/model_file_cache.h"
#include "runtime/run_stop.h"
#include "sam3/error.h"
#include "sam3/log.h"

namespace sam3 {

const char* layout_name(Layout layout) noexcept { return layout.id(); }

std::string onnxruntime_version() { return Ort::GetVersionString(); }

std::string int8_kernels() { return kernels::int8_kernels_description(); }

std::string bf16_kernels() { return kernels::bf16_kernels_description(); }

const char* precision_name(Precision precision) noexcept { return precision == Precision::kFast ? "fast" : "exact"; }

namespace {

int capped_threads(int requested) {
  if (requested < 0) {
    throw Error(ErrorCode::kInvalidArgument, "threads must be 0 (one per core) or more, got " + std::to_string(requested));
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (requested > cores) {
    log(LogLevel::kWarning, std::to_string(requested) + " threads asked for, " + std::to_string(cores) +
                                " used: more threads than cores only compete for them");
    return cores;
  }
  return requested;
}

}  // namespace

struct Model::Impl {
  std::filesystem::path directory;
  std::unique_ptr<detail::Backend> backend;
  runtime::SessionConfig config;  // how the decoder's sessions were made (the video graphs' too)
  std::unique_ptr<ClipTokenizer> tokenizer;
  std::filesystem::path vocabulary;  // the tokenizer's file; empty for the interactive generation
  double load_ms = 0;
  mutable detail::ModelState state;  // the facades' text cache and everyone's counters

  explicit Impl(size_t cache_entries) : state(cache_entries) {}
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::shared_ptr<Model> Model::load(const std::filesystem::path& directory, const ModelOptions& options) {
  const auto t0 = core::Clock::now();
  runtime::SessionConfig config;
  config.providers = runtime::resolve_providers(options.providers);  // a bad or missing provider fails first
  auto impl = std::make_unique<Impl>(options.text_cache_entries);
  impl->directory = directory;
  const detail::ModelFiles files = detail::detect_layout(directory);
  const Layout layout = files.layout;
  std::filesystem::path vocab;
  if (layout != Layout::kTracker) {  // the interactive generation takes no text
    vocab = detail::find_vocabulary(directory);
    if (vocab.empty()) vocab = options.fallback_vocabulary.empty() ? bundled_vocabulary() : options.fallback_vocabulary;
    impl->tokenizer = std::make_unique<ClipTokenizer>(ClipTokenizer::from_file(vocab));
    impl->vocabulary = vocab;
  }
  config.intra_op_threads = capped_threads(options.intra_op_threads);
  config.spin_threads = options.spin_threads;
  config.shared_thread_pool = options.shared_thread_pool;
  config.cache.enabled = options.cache_optimized;
  config.cache.fuse_attention = options.fuse_attention;
  config.cache.onednn = options.onednn_kernels;
  config.cache.bf16 = options.precision == Precision::kFast;
  config.cache.onednn_min_weights = options.onednn_min_weights;
  config.cache.int8 = options.int8_weights == Int8Weights::kOn    ? runtime::Int8Weights::kOn
                      : options.int8_weights == Int8Weights::kOff ? runtime::Int8Weights::kOff
                                                                  : runtime::Int8Weights::kAuto;
  runtime::SessionConfig encoder_config = config;
  encoder_config.memory_arena = !options.encoder_memory_arena.has_value() ? runtime::SessionConfig::Arena::kWhenAttentionFused
                                : *options.encoder_memory_arena           ? runtime::SessionConfig::Arena::kOn
                                                                          : runtime::SessionConfig::Arena::kOff;
  try {
    impl->backend = layout == Layout::kTracker ? detail::make_tracker_backend(files, encoder_config, config)
                                               : detail::make_text_backend(files, encoder_config, config);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kModelMismatch) throw;
    // Which generation the folder looked like, then the file, tensor, expected and found.
    const char* family = files.families.empty() ? layout_name(layout) : files.families.back()->display;
    throw Error(ErrorCode::kModelMismatch,
                std::string("the file names are those of the ") + family + " layout, but its files do not fit it: " + e.what());
  }
  impl->config = config;
  impl->load_ms = core::ms_since(t0);
  log(LogLevel::kInfo, "loaded " + std::string(layout_name(impl->backend->layout())) + " model from " + directory.string() + " (input " +
                           std::to_string(impl->backend->input_width()) + "x" + std::to_string(impl->backend->input_height()) +
                           (vocab.empty() ? std::string() : ", vocabulary " + vocab.filename().string()) + ") in " +
                           std::to_string(static_cast<int>(impl->load_ms)) + " ms");
  return std::shared_ptr<Model>(new Model(std::move(impl)));
}

Layout Model::layout() const noexcept { return impl_->backend->layout(); }
std::string Model::generation() const { return impl_->backend->generation(); }
std::vector<std::string> Model::quirks() const { return impl_->backend->quirks(); }
const std::filesystem::path& Model::directory() const noexcept { return impl_->directory; }
int Model::input_width() const noexcept { return impl_->backend->input_width(); }
int Model::input_height() const noexcept { return impl_->backend->input_height(); }
int Model::input_size() const noexcept { return std::max(input_width(), input_height()); }
double Model::load_ms() const noexcept { return impl_->load_ms; }
std::vector<std::string> Model::providers() const { return impl_->backend->sessions().front()->providers(); }
ModelKind Model::kind() const noexcept { return impl_->backend->interactive() ? ModelKind::kInteractive : ModelKind::kText; }

bool Model::tracks_video() const noexcept { return impl_->backend->text() && pure::video_capability(layout().id()) != nullptr; }

const char* model_kind_name(ModelKind kind) noexcept { return kind == ModelKind::kInteractive ? "interactive" : "text"; }

namespace detail {
const Backend& ModelAccess::backend(const Model& model) { return *model.impl_->backend; }
const ClipTokenizer* ModelAccess::tokenizer(const Model& model) { return model.impl_->tokenizer.get(); }
const runtime::SessionConfig& ModelAccess::session_config(const Model& model) { return model.impl_->config; }
ModelState& ModelAccess::state(const Model& model) { return model.impl_->state; }

const EmbeddingData& checked_embedding(const ImageEmbedding& embedding, Layout layout) {
  if (embedding.empty()) throw Error(ErrorCode::kInvalidArgument, "the image embedding is empty");
  const EmbeddingData& e = *EmbeddingAccess::data(embedding);
  if (e.layout != layout) {
    throw Error(ErrorCode::kInvalidArgument, std::string("this image embedding was made by a ") + layout_name(e.layout) +
                                                 " model and cannot be decoded by a " + layout_name(layout) +
                                                 " model; encode the image with the model you prompt");
  }
  return e;
}
}  // namespace detail

PreparedImage Model::prepare(const Image& image) const {
  if (image.width <= 0 || image.height <= 0 || image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
    throw Error(ErrorCode::kInvalidArgument, "image buffer does not hold width*height*3 RGB bytes");
  }
  const auto t0 = core::Clock::now();
  PreparedImage p;
  p.width = image.width;
  p.height = image.height;
  p.input_width = input_width();
  p.input_height = input_height();
  p.planes = predictor::resize_planar(image, p.input_width, p.input_height);
  p.pixels_hash = detail::pixels_hash(image);
  p.preprocess_ms = core::ms_since(t0);
  return p;
}

ImageEmbedding Model::encode(const Image& image, const EncodeOptions& options) const { return encode(prepare(image), options); }

ImageEmbedding Model::encode(PreparedImage prepared, const EncodeOptions& options) const {
  if (prepared.input_width != input_width() || prepared.input_height != input_height() ||
      prepared.planes.size() != static_cast<size_t>(3) * prepared.input_width * prepared.input_height) {
    throw Error(ErrorCode::kInvalidArgument, "the prepared image was made for another model input size");
  }
  const auto t0 = core::Clock::now();
  auto data = std::make_shared<detail::EmbeddingData>();
  const runtime::StopScope stop(options.stop);  // every session run below obeys it
  data->features = impl_->state.counting_stops([&] { return impl_->backend->encode_image(prepared.planes); });
  data->width = prepared.width;
  data->height = prepared.height;
  data->layout = layout();
  data->pixels_hash = prepared.pixels_hash;
  std::size_t bytes = 0;
  for (const auto& [name, value] : data->features) {
    const auto info = value.GetTensorTypeAndShapeInfo();
    bytes += info.GetElementCount() * runtime::element_size(info.GetElementType());
  }
  ++impl_->state.image_encodes;
  return detail::EmbeddingAccess::make(std::move(data), prepared.width, prepared.height, prepared.preprocess_ms, core::ms_since(t0), bytes);
}

std::vector<ModelFileInfo> Model::files() const {
  std::vector<ModelFileInfo> out;
  for (const auto* s : impl_->backend->sessions()) {
    const auto& p = s->prepared();
    out.push_back({s->path(), p.pre_optimized ? p.load_path : (p.entry.empty() ? s->path() : p.entry / "optimized.onnx"), p.pre_optimized,
                   p.int8_weights, p.fused_attention, s->providers(), p.onednn_int8, p.bf16_attention, p.bf16_matmuls, p.uint8_weights});
  }
  return out;
}

std::vector<std::filesystem::path> Model::source_files() const {
  std::vector<std::filesystem::path> out;
  for (const auto* s : impl_->backend->sessions()) {
    out.push_back(s->path());
    if (auto weights = runtime::external_data_file(s->path()); !weights.empty()) out.push_back(std::move(weights));
  }
  if (!impl_->vocabulary.empty()) out.push_back(impl_->vocabulary);
  return out;
}

ModelStats Model::stats() const {
  const auto& s = impl_->state;
  return {s.image_encodes.load(), s.text_encodes.load(), s.decodes.load(), s.cache_hits.load(), s.stopped.load()};
}

}  // namespace sam3
