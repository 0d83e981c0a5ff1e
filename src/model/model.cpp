#include "sam3/model.h"

#include <algorithm>
#include <atomic>
#include <list>
#include <thread>
#include <mutex>
#include <unordered_map>

#include "core/timer.h"
#include "kernels/onednn_bf16.h"
#include "kernels/onednn_int8.h"
#include "model/embedding_access.h"
#include "model/backend.h"
#include "model/model_access.h"
#include "pure/everything_crops.h"
#include "model/interactive.h"
#include "model/layout.h"
#include "predictor/postprocess.h"
#include "predictor/preprocess.h"
#include "pure/prompt_rules.h"
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

// Bounded LRU of text features by prompt text.
class TextCache {
 public:
  explicit TextCache(size_t capacity) : capacity_(capacity) {}

  std::shared_ptr<const detail::TextFeatures> get(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  void put(const std::string& key, std::shared_ptr<const detail::TextFeatures> value) {
    if (capacity_ == 0) return;
    std::lock_guard lock(mutex_);
    if (index_.contains(key)) return;
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const detail::TextFeatures>>;
  size_t capacity_;
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

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
  rt::SessionConfig config;  // how the decoder's sessions were made (the video graphs' too)
  std::unique_ptr<ClipTokenizer> tokenizer;
  std::filesystem::path vocabulary;  // the tokenizer's file; empty for the interactive generation
  double load_ms = 0;
  TextCache text_cache;
  std::atomic<std::int64_t> image_encodes{0}, text_encodes{0}, decodes{0}, cache_hits{0}, stopped{0};

  // Runs `call`, counting it in `stopped` when its StopToken ended it.
  template <typename F>
  auto counting_stops(F&& call) {
    try {
      return call();
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kCancelled) ++stopped;
      throw;
    }
  }

  explicit Impl(size_t cache_entries) : text_cache(cache_entries) {}
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::shared_ptr<Model> Model::load(const std::filesystem::path& directory, const ModelOptions& options) {
  const auto t0 = Clock::now();
  rt::SessionConfig config;
  config.providers = rt::resolve_providers(options.providers);  // a bad or missing provider fails first
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
  config.cache.int8 = options.int8_weights == Int8Weights::kOn    ? rt::Int8Weights::kOn
                      : options.int8_weights == Int8Weights::kOff ? rt::Int8Weights::kOff
                                                                  : rt::Int8Weights::kAuto;
  rt::SessionConfig encoder_config = config;
  encoder_config.memory_arena = !options.encoder_memory_arena.has_value() ? rt::SessionConfig::Arena::kWhenAttentionFused
                                : *options.encoder_memory_arena        ? rt::SessionConfig::Arena::kOn
                                                                       : rt::SessionConfig::Arena::kOff;
  try {
    impl->backend = layout == Layout::kTracker ? detail::make_tracker_backend(files, encoder_config, config)
                                               : detail::make_text_backend(files, encoder_config, config);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kModelMismatch) throw;
    // Which generation the folder looked like, then the file, tensor, expected and found.
    const char* family = files.families.empty() ? layout_name(layout) : files.families.back()->display;
    throw Error(ErrorCode::kModelMismatch, std::string("the file names are those of the ") + family +
                                               " layout, but its files do not fit it: " + e.what());
  }
  impl->config = config;
  impl->load_ms = ms_since(t0);
  log(LogLevel::kInfo, "loaded " + std::string(layout_name(impl->backend->layout())) + " model from " + directory.string() +
                           " (input " + std::to_string(impl->backend->input_width()) + "x" +
                           std::to_string(impl->backend->input_height()) +
                           (vocab.empty() ? std::string() : ", vocabulary " + vocab.filename().string()) + ") in " + std::to_string(static_cast<int>(impl->load_ms)) + " ms");
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

namespace detail {
const Backend& ModelAccess::backend(const Model& model) { return *model.impl_->backend; }
const ClipTokenizer* ModelAccess::tokenizer(const Model& model) { return model.impl_->tokenizer.get(); }
const rt::SessionConfig& ModelAccess::session_config(const Model& model) { return model.impl_->config; }
}  // namespace detail

PreparedImage Model::prepare(const Image& image) const {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
    throw Error(ErrorCode::kInvalidArgument, "image buffer does not hold width*height*3 RGB bytes");
  }
  const auto t0 = Clock::now();
  PreparedImage p;
  p.width = image.width;
  p.height = image.height;
  p.input_width = input_width();
  p.input_height = input_height();
  p.planes = resize_planar(image, p.input_width, p.input_height);
  p.preprocess_ms = ms_since(t0);
  return p;
}

ImageEmbedding Model::encode(const Image& image, const EncodeOptions& options) const {
  return encode(prepare(image), options);
}

ImageEmbedding Model::encode(PreparedImage prepared, const EncodeOptions& options) const {
  if (prepared.input_width != input_width() || prepared.input_height != input_height() ||
      prepared.planes.size() != static_cast<size_t>(3) * prepared.input_width * prepared.input_height) {
    throw Error(ErrorCode::kInvalidArgument, "the prepared image was made for another model input size");
  }
  const auto t0 = Clock::now();
  auto data = std::make_shared<detail::EmbeddingData>();
  const rt::StopScope stop(options.stop);  // every session run below obeys it
  data->features = impl_->counting_stops([&] { return impl_->backend->encode_image(prepared.planes); });
  data->width = prepared.width;
  data->height = prepared.height;
  data->layout = layout();
  std::size_t bytes = 0;
  for (const auto& [name, value] : data->features) {
    const auto info = value.GetTensorTypeAndShapeInfo();
    bytes += info.GetElementCount() * rt::element_size(info.GetElementType());
  }
  ++impl_->image_encodes;
  return detail::EmbeddingAccess::make(std::move(data), prepared.width, prepared.height, prepared.preprocess_ms, ms_since(t0), bytes);
}

PromptResult Model::segment(const ImageEmbedding& embedding, const Prompt& prompt,
                            const SegmentOptions& options) const {
  if (embedding.empty()) throw Error(ErrorCode::kInvalidArgument, "the image embedding is empty");
  if (interactive()) {
    throw Error(ErrorCode::kInvalidArgument,
                "this is SAM3's interactive (tracker) model: it takes points and boxes, not text prompts; give "
                "points (--point X,Y) or a box, or load a text-prompted SAM3 model for words and exemplar boxes");
  }
  detail::check_embedding_layout(*detail::EmbeddingAccess::data(embedding), layout());
  const std::string text = pure::checked_prompt_text(prompt, options, embedding.width(), embedding.height());
  PromptResult result;
  result.prompt = prompt;
  const rt::StopScope stop(options.stop);  // the text encode and the decode obey it

  auto features = impl_->text_cache.get(text);
  if (features) {
    result.timings.text_cached = true;
    ++impl_->cache_hits;
  } else {
    const auto t0 = Clock::now();
    const TokenizedText tokens = impl_->tokenizer->encode(text);
    features = std::make_shared<detail::TextFeatures>(impl_->counting_stops([&] { return impl_->backend->encode_text(tokens); }));
    result.timings.encode_text_ms = ms_since(t0);
    ++impl_->text_encodes;
    impl_->text_cache.put(text, features);
  }
  result.instances = impl_->counting_stops(
      [&] { return impl_->backend->decode(*detail::EmbeddingAccess::data(embedding), *features, prompt.boxes, options, result.timings); });
  ++impl_->decodes;
  const auto t1 = Clock::now();
  finalize_instances(result.instances, options);
  result.timings.postprocess_ms += ms_since(t1);
  return result;
}

void Model::suppress_across_prompts(std::vector<PromptResult>& results) const { impl_->backend->suppress_across_prompts(results); }

bool Model::interactive() const noexcept { return impl_->backend->interactive() != nullptr; }

std::vector<ObjectResult> Model::segment_objects(const ImageEmbedding& embedding,
                                                 const std::vector<InteractivePrompt>& prompts,
                                                 const InteractiveOptions& options) const {
  if (embedding.empty()) throw Error(ErrorCode::kInvalidArgument, "the image embedding is empty");
  int runs = 0;
  const rt::StopScope stop(options.stop);
  auto results = impl_->counting_stops(
      [&] { return detail::segment_objects(*impl_->backend, *detail::EmbeddingAccess::data(embedding), prompts, options, &runs); });
  impl_->decodes += runs;
  return results;
}

ObjectResult Model::segment(const ImageEmbedding& embedding, const InteractivePrompt& prompt,
                            const InteractiveOptions& options) const {
  return std::move(segment_objects(embedding, std::vector<InteractivePrompt>{prompt}, options).front());
}

PromptResult Model::segment_everything(const ImageEmbedding& embedding, const EverythingOptions& options) const {
  if (embedding.empty()) throw Error(ErrorCode::kInvalidArgument, "the image embedding is empty");
  if (options.crop_layers != 0) {
    throw Error(ErrorCode::kInvalidArgument, "crop layers encode crops of the image: call segment_everything(image, "
                                             "embedding, options), or set crop_layers to 0");
  }
  int runs = 0;
  const rt::StopScope stop(options.stop);
  auto found = impl_->counting_stops([&] { return detail::segment_everything(*impl_->backend, *detail::EmbeddingAccess::data(embedding), options, &runs); });
  impl_->decodes += runs;
  PromptResult result;
  result.timings = found.timings;
  result.instances = pure::expand(found.instances);  // the survivors' full masks, at last
  return result;
}

PromptResult Model::segment_everything(const Image& image, const ImageEmbedding& embedding,
                                       const EverythingOptions& options) const {
  EverythingOptions whole = options;
  whole.crop_layers = 0;
  if (options.crop_layers == 0) return segment_everything(embedding, whole);
  if (embedding.empty() || embedding.width() != image.width || embedding.height() != image.height) {
    throw Error(ErrorCode::kInvalidArgument, "the embedding given with the image is not this image's: encode the image "
                                             "and pass both");
  }
  detail::check_embedding_layout(*detail::EmbeddingAccess::data(embedding), layout());
  detail::check_everything(*impl_->backend, options);  // before any crop is encoded
  PromptResult result;
  std::vector<std::pair<pure::EverythingCrop, std::vector<pure::CompactInstance>>> per_crop;
  for (const auto& crop : pure::everything_crops(image.width, image.height, options.crop_layers, options.crop_overlap_ratio)) {
    EverythingOptions layer = whole;
    for (int i = 0; i < crop.layer; ++i) layer.points_per_side = std::max(1, layer.points_per_side / options.crop_points_downscale);
    const bool whole_image = crop.layer == 0;
    const ImageEmbedding crop_embedding = whole_image ? embedding : encode(crop_image(image, crop.window), {options.stop});
    int runs = 0;
    const rt::StopScope stop(options.stop);
    detail::EverythingCandidates part = impl_->counting_stops([&] {
      return detail::segment_everything(*impl_->backend, *detail::EmbeddingAccess::data(crop_embedding), layer, &runs,
                                        [&](const Box& box) {
                                          if (whole_image) return true;
                                          const Box in_image{box.x0 + crop.window.x0, box.y0 + crop.window.y0,
                                                             box.x1 + crop.window.x0, box.y1 + crop.window.y0};
                                          return !pure::cut_by_crop(in_image, crop.window, image.width, image.height);
                                        });
    });
    impl_->decodes += runs;
    result.timings.decode_ms += part.timings.decode_ms;
    result.timings.postprocess_ms += part.timings.postprocess_ms;
    pure::move_into_image(part.instances, crop.window, image.width, image.height);
    per_crop.emplace_back(crop, std::move(part.instances));
  }
  result.instances = pure::expand(pure::merge_crops(std::move(per_crop), options.crop_nms_threshold));
  return result;
}

std::vector<ModelFileInfo> Model::files() const {
  std::vector<ModelFileInfo> out;
  for (const auto* s : impl_->backend->sessions()) {
    const auto& p = s->prepared();
    out.push_back({s->path(), p.pre_optimized ? p.load_path : (p.entry.empty() ? s->path() : p.entry / "optimized.onnx"),
                   p.pre_optimized, p.int8_weights, p.fused_attention, s->providers(), p.onednn_int8,
                   p.bf16_attention, p.bf16_matmuls, p.uint8_weights});
  }
  return out;
}

std::vector<std::filesystem::path> Model::source_files() const {
  std::vector<std::filesystem::path> out;
  for (const auto* s : impl_->backend->sessions()) {
    out.push_back(s->path());
    if (auto weights = rt::external_data_file(s->path()); !weights.empty()) out.push_back(std::move(weights));
  }
  if (!impl_->vocabulary.empty()) out.push_back(impl_->vocabulary);
  return out;
}

ModelStats Model::stats() const {
  return {impl_->image_encodes.load(), impl_->text_encodes.load(), impl_->decodes.load(), impl_->cache_hits.load(),
          impl_->stopped.load()};
}

}  // namespace sam3
