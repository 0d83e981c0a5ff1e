// Loading a SAM3 ONNX model directory and encoding images with it. A Model is the loaded files
// and the image encoder both task facades share; prompts go through the facade of its kind:
// sam3/image_segmenter.h (text and exemplar boxes) or sam3/interactive_segmenter.h (clicks,
// boxes of one object, "segment everything").
//
//   std::shared_ptr<const sam3::Model> model = sam3::Model::load("models/sam3");  // expensive, share it
//   if (model->kind() == sam3::ModelKind::kText) {
//     sam3::ImageSegmenter segmenter(model);
//     auto result = segmenter.segment(segmenter.encode(image), {.text = "car"});
//   }
//
// Thread safety: a Model is immutable after load() except for internal caches guarded by
// locks; encode() and the facades' calls may run concurrently from many threads. ImageEmbedding
// is an immutable value that can be shared between threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sam3/execution_provider.h"
#include "sam3/image.h"
#include "sam3/types.h"

namespace sam3 {

// A model's family: the stable id of its row in the family registry (src/pure/families/,
// docs/architecture.md): "usls", "samexporter", "geti", "sam3.1-ailia", "efficientsam3", or
// "sam3-tracker" for the interactive model. Compared by id; the constants name the families
// code may test for.
class Layout {
 public:
  constexpr Layout() noexcept = default;
  constexpr explicit Layout(const char* id) noexcept : id_(id) {}
  constexpr const char* id() const noexcept { return id_; }
  friend constexpr bool operator==(Layout a, Layout b) noexcept { return std::string_view(a.id_) == std::string_view(b.id_); }

  static const Layout kUsls;         // vision-encoder.onnx, text-encoder.onnx, decoder.onnx, tokenizer.json
  static const Layout kSamexporter;  // sam3_image_encoder.onnx, sam3_language_encoder.onnx, sam3_decoder.onnx
  static const Layout kTracker;      // vision_encoder.onnx, prompt_encoder_mask_decoder.onnx (interactive: points, boxes)
  static const Layout kGeti;         // vision-encoder, text-encoder, geometry-encoder, prompt-decoder (Intel geti-instant-learn)

 private:
  const char* id_ = "usls";
};
inline constexpr Layout Layout::kUsls{"usls"};
inline constexpr Layout Layout::kSamexporter{"samexporter"};
inline constexpr Layout Layout::kTracker{"sam3-tracker"};
inline constexpr Layout Layout::kGeti{"geti"};
// The family's stable id (Layout::id()).
const char* layout_name(Layout layout) noexcept;

// Whether MatMulInteger's uint8 weights are rewritten as int8 (exact, about twice as fast on
// CPUs with VNNI/AMX/dot-product; kAuto uses it only there: AVX2's u8s8 path can saturate).
enum class Int8Weights { kAuto, kOn, kOff };

// How float work is computed on the CPU. kExact: in float, as the files say. kFast: the fused
// attention and large float matrix products (constant weights of 256 K elements or more) in
// bf16 on oneDNN: operands rounded to bf16, products summed and the softmax computed in float.
// Used only where oneDNN has native bf16 kernels for the CPU (AVX512-BF16 or AMX; else the
// exact path runs and the log says so once); int8 products are exact either way. Masks and
// scores may differ slightly from kExact (docs/performance.md has the measured differences).
// Applied by the prepare step, so it needs ModelOptions::cache_optimized, like fuse_attention.
enum class Precision { kExact, kFast };
const char* precision_name(Precision precision) noexcept;  // "exact", "fast"

struct ModelOptions {
  // Where the sessions run, as a fallback order (sam3/execution_provider.h); empty: the CPU.
  // A provider the loaded ONNX Runtime lacks makes load() throw kRuntime (unless a later one in
  // the list is usable); a malformed list throws kInvalidArgument.
  std::vector<ExecutionProvider> providers;
  int intra_op_threads = 0;  // 0: ONNX Runtime's default (one per physical core)
  Int8Weights int8_weights = Int8Weights::kAuto;
  // Attention written out op by op (MatMul, Softmax, MatMul) is fused into ONNX Runtime's
  // MultiHeadAttention, which never materialises the score matrix: less memory (about 3.4 GB
  // less for SAM3's vision encoder) and faster. Equal to the original within float rounding.
  // Needs cache_optimized (the rewritten graph is kept in the cache).
  bool fuse_attention = true;
  // Keep per-host prepared files (int8 weights, ONNX Runtime's optimized graph) in
  // <model dir>/.sam3-cache so later loads skip the work.
  bool cache_optimized = true;
  // ONNX Runtime's CPU memory arena keeps a session's peak allocation for reuse (faster). The
  // text encoder and decoder always keep theirs. The image encoder's is on when its attention
  // was fused (its peak is then small) and off otherwise, so that the unfused attention's
  // score matrices (gigabytes) go back to the system before the decoder runs; set this to
  // force it either way (see the README's performance section).
  std::optional<bool> encoder_memory_arena;
  // ONNX Runtime's worker threads spin while waiting for work: faster hand-offs, but they burn
  // CPU between runs (turn off for servers sharing the machine).
  bool spin_threads = true;
  // Run all sessions (of every model in the process) on one process-wide thread pool (ONNX
  // Runtime's defaults: a thread per physical core, spinning) instead of one pool per session;
  // intra_op_threads and spin_threads then do not apply.
  bool shared_thread_pool = false;
  // Exact int8 products (the int8 weights' MatMulInteger) on oneDNN, which reaches the CPU's
  // VNNI/AMX engines, where the build has oneDNN and the CPU has them; results are
  // bit-identical to ONNX Runtime's. false: ONNX Runtime's kernels.
  bool onednn_kernels = true;
  // Products with fewer weights (K x N) stay with ONNX Runtime, whose fused DynamicQuantizeMatMul
  // is faster on small products such as the decoder's width-256 ones (docs/performance.md).
  std::int64_t onednn_min_weights = 1024 * 1024;
  Precision precision = Precision::kExact;
  // Vocabulary used when the directory has neither tokenizer.json nor clip_tokenizer.json.
  std::filesystem::path fallback_vocabulary;
  std::size_t text_cache_entries = 256;
};

// Which task facade a model serves: kText, SAM3's text-prompted image models (words and
// exemplar boxes; sam3::ImageSegmenter), or kInteractive, SAM3's tracker model (clicks, a box
// around one object, "segment everything"; sam3::InteractiveSegmenter).
enum class ModelKind { kText, kInteractive };
const char* model_kind_name(ModelKind kind) noexcept;  // "text", "interactive"

// How each network file was loaded (see ModelOptions::cache_optimized).
struct ModelFileInfo {
  std::filesystem::path file;          // the model's file
  std::filesystem::path loaded_from;   // the file ONNX Runtime read (a cache entry or `file`)
  bool pre_optimized = false;          // a saved optimized graph was used
  int int8_weights = 0;                // weights rewritten as int8
  int fused_attention = 0;             // attention blocks fused into MultiHeadAttention
  std::vector<std::string> providers;  // execution providers of its session, first choice first ("cpu" last)
  int onednn_int8 = 0;                 // int8 products (MatMulInteger nodes) run by oneDNN
  int bf16_attention = 0;              // attention nodes run in bf16 on oneDNN (Precision::kFast)
  int bf16_matmuls = 0;                // float products (MatMul nodes) run in bf16 on oneDNN
  int uint8_weights = 0;               // int8 weights rewritten as uint8 (CPUs whose u8 x s8 saturates)
};

struct ModelStats {
  std::int64_t image_encodes = 0;
  std::int64_t text_encodes = 0;  // runs of the text encoder (none for a decoder that reads the ids itself: SAM 3.1)
  std::int64_t decodes = 0;
  std::int64_t text_cache_hits = 0;  // text encoder runs saved by the cache of recent texts
  std::int64_t stopped = 0;          // encode and segment calls ended by their StopToken (kCancelled)
};

namespace detail {
struct EmbeddingData;
struct EmbeddingAccess;
struct ModelAccess;
}  // namespace detail

// One encoded image, made by Model::encode (or a facade's encode). Cheap to copy (shared,
// immutable); a default-constructed one is empty and refused by segment (kInvalidArgument).
class ImageEmbedding {
 public:
  ImageEmbedding() = default;
  int width() const noexcept { return width_; }  // original image size
  int height() const noexcept { return height_; }
  double preprocess_ms() const noexcept { return preprocess_ms_; }
  double encode_ms() const noexcept { return encode_ms_; }
  std::size_t memory_bytes() const noexcept { return bytes_; }  // feature tensors held
  bool empty() const noexcept { return !data_; }

 private:
  friend struct detail::EmbeddingAccess;  // the model's tensors, read by the library only
  std::shared_ptr<const detail::EmbeddingData> data_;
  int width_ = 0, height_ = 0;
  double preprocess_ms_ = 0, encode_ms_ = 0;
  std::size_t bytes_ = 0;
};

struct EncodeOptions {
  StopToken stop;  // stops the image encode mid-run: throws kCancelled (sam3/stop_token.h)
};

// An image resized and laid out for the encoder, made ahead of time (e.g. on another thread
// while the previous image is being encoded).
struct PreparedImage {
  int width = 0, height = 0;              // original size
  int input_width = 0, input_height = 0;  // the encoder's input size
  std::vector<float> planes;              // [3, input_height, input_width], 0..255
  double preprocess_ms = 0;
  // The original pixels' hash (0: not known): the embedding keeps it, so that crop layers of
  // "everything" refuse another image of the same size (its crops would not match the whole).
  std::uint64_t pixels_hash = 0;
};

class Model {
 public:
  // Detects the layout from file names and checks every session's inputs and outputs.
  // Throws sam3::Error: kModelNotFound (what is missing), kModelMismatch (expected vs found).
  static std::shared_ptr<Model> load(const std::filesystem::path& directory, const ModelOptions& options = {});

  Layout layout() const noexcept;
  // The export generation ("usls", "samexporter", "samexporter (raw heads)", "osam"), told
  // apart by the files' inputs and outputs, and how sam3 treats it differently.
  std::string generation() const;
  std::vector<std::string> quirks() const;
  const std::filesystem::path& directory() const noexcept;
  // The image encoder's input size, read from its session: square for most exports, any
  // multiple of 14 for usls exports (504 x 896 by default there). input_size() is the larger side.
  int input_width() const noexcept;
  int input_height() const noexcept;
  int input_size() const noexcept;
  double load_ms() const noexcept;
  // The execution providers the sessions were created with, first choice first ({"cpu"} by
  // default, {"cuda", "cpu"} for cuda: ONNX Runtime runs on the CPU what the first cannot).
  std::vector<std::string> providers() const;

  // Throws kCancelled once options.stop asks to stop (within about a network node).
  ImageEmbedding encode(const Image& image, const EncodeOptions& options = {}) const;
  PreparedImage prepare(const Image& image) const;  // thread-safe, no ONNX Runtime work
  ImageEmbedding encode(PreparedImage prepared, const EncodeOptions& options = {}) const;
  // Which facade takes its prompts (ImageSegmenter or InteractiveSegmenter).
  ModelKind kind() const noexcept;
  // Whether sam3::VideoTracker runs on it: its family (the registry's row) has a video
  // capability (SAM 3.1's bundle as ailia-models publishes it). The video graphs themselves
  // are opened, and checked, by the first tracker.
  bool tracks_video() const noexcept;

  ModelStats stats() const;
  std::vector<ModelFileInfo> files() const;
  // Every file this model was read from: each network's graph, the weights stored beside it
  // (ONNX external data: "<file>.data", "<stem>.data", "<file>_data") and the vocabulary
  // (which may lie outside directory(): ModelOptions::fallback_vocabulary or the bundled one).
  std::vector<std::filesystem::path> source_files() const;

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

 private:
  friend struct detail::ModelAccess;  // the video tracker's access to the sessions (library only)
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// "1.30.0": the ONNX Runtime library actually loaded.
std::string onnxruntime_version();
// What runs the int8 products on this host: "oneDNN 2.6.3 (brg:avx512_core_vnni)", or
// "ONNX Runtime (...)" with the reason oneDNN does not.
std::string int8_kernels();
// What runs Precision::kFast's bf16 work on this host: "oneDNN 2.6.3 (brg:avx512_core_bf16)",
// or "none (...)" with the reason (kFast then computes exactly).
std::string bf16_kernels();

}  // namespace sam3
