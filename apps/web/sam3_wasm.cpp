// The WebAssembly face of the pure core: the C ABI of sam3_wasm.h (handles, string ownership,
// the error shape, plans) over the core's rules. Every rule of a generation is the core's;
// nothing here decides one.
#include "sam3_wasm.h"

#include <emscripten/emscripten.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "optimize/onnx_attention.h"
#include "optimize/onnx_attention_chunks.h"
#include "optimize/onnx_int8_as_float.h"
#include "optimize/onnx_split_attention.h"
#include "optimize/onnx_split_linears.h"
#include "optimize/onnx_split_matmuls.h"
#include "pure/result_document.h"  // the result document written as text, COCO RLE masks
#include "predictor/postprocess.h"
#include "predictor/preprocess.h"
#include "pure/generation.h"
#include "pure/layout_names.h"
#include "pure/prompt_json.h"
#include "pure/prompt_rules.h"
#include "pure/text_plan.h"
#include "pure/compact_mask.h"
#include "pure/tracker.h"
#include "pure/tracker_names.h"
#include "sam3/answer_json.h"
#include "sam3/error.h"
#include "sam3/image.h"
#include "sam3/tokenizer.h"
#include "tokenizer/unicode_props.h"

namespace {

using nlohmann::json;
using sam3::pure::Generation;
using sam3::pure::Tensor;
using sam3::pure::Tracker;

// A request under way (sam3_plan .. sam3_step): a text plan (pure/text_plan.h, the order the
// native ImageSegmenter runs), or the interactive model's decoder runs and what they gave.
struct Plan {
  std::optional<sam3::pure::TextPlan> text;
  bool many = false;  // {"prompts": [...]}: every prompt of one image, with the family's rule across them

  bool everything = false;
  std::vector<sam3::InteractivePrompt> prompts;
  sam3::InteractiveOptions options;
  sam3::EverythingOptions everything_options;
  int width = 0, height = 0;
  std::vector<sam3::pure::TrackerRun> runs;  // objects: the batches and their members
  size_t next = 0;                           // the run whose outputs come next
  std::vector<sam3::ObjectResult> results;
  std::vector<sam3::pure::CompactInstance> candidates;  // everything's, before the NMS
};

// A text generation or the interactive model, one of the two.
struct Model {
  std::optional<Generation> generation;
  std::optional<Tracker> tracker;
  std::optional<sam3::ClipTokenizer> tokenizer;
  std::vector<Tensor> staged_inputs;                              // the last call's tensors
  std::map<std::string, std::vector<std::uint8_t>> output_bytes;  // staged decoder outputs
  sam3::pure::TensorViews outputs;
  std::optional<Plan> plan;
};

std::map<int, std::unique_ptr<Model>> models;
int next_handle = 1;
std::string reply;
std::string rewritten;       // the last sam3_int8_as_float's graph, until sam3_release_rewritten
char* kept_input = nullptr;  // an owned input answered unchanged by sam3_rewrite_for_browser, until then

template <typename J>
const char* answer(const J& j) {
  reply = j.dump();
  return reply.c_str();
}

// An answer already written as JSON text (a plan's steps: the result entries are the library's text).
const char* answer(std::string text) {
  reply = std::move(text);
  return reply.c_str();
}

template <typename Fn>
const char* guarded(Fn&& fn) {
  try {
    return answer(fn());
  } catch (const sam3::Error& e) {
    return answer(json{{"error", {{"code", sam3::error_code_name(e.code())}, {"message", e.what()}}}});
  } catch (const std::exception& e) {
    return answer(json{{"error", {{"code", "runtime"}, {"message", e.what()}}}});
  }
}

Model& model(int handle) {
  auto it = models.find(handle);
  if (it == models.end()) throw sam3::Error(sam3::ErrorCode::kInvalidArgument, "no model " + std::to_string(handle));
  return *it->second;
}

// The native library's messages for a prompt the model does not take.
const Generation& text_generation(Model& m) {
  if (!m.generation) {
    throw sam3::Error(sam3::ErrorCode::kInvalidArgument,
                      "this is SAM3's interactive (tracker) model: it takes points and boxes, not text prompts; give "
                      "points or a box, or load a text-prompted SAM3 model for words and exemplar boxes");
  }
  return *m.generation;
}

const Tracker& interactive(Model& m) {
  if (!m.tracker) {
    throw sam3::Error(sam3::ErrorCode::kInvalidArgument,
                      "this SAM3 model takes text and exemplar boxes, not clicks: points (and \"segment everything\") need "
                      "SAM3's interactive model (onnx-community/sam3-tracker-ONNX: vision_encoder.onnx and "
                      "prompt_encoder_mask_decoder.onnx)");
  }
  return *m.tracker;
}

sam3::pure::PartSpec part_from_json(const json& j) {
  sam3::pure::PartSpec p;
  p.file = j.at("file").get<std::string>();
  for (const char* side : {"inputs", "outputs"}) {
    auto& list = std::string(side) == "inputs" ? p.inputs : p.outputs;
    for (const auto& t : j.at(side)) list.push_back({t.at("name"), t.at("type"), t.at("shape").get<std::vector<std::int64_t>>()});
  }
  return p;
}

// The tensors, with where their bytes lie in the module's memory (valid until the next call).
json tensors_json(std::vector<Tensor>& tensors) {
  json out = json::array();
  for (auto& t : tensors) {
    out.push_back({{"name", t.name},
                   {"dtype", sam3::pure::dtype_name(t.type)},
                   {"shape", t.shape},
                   {"ptr", reinterpret_cast<std::uintptr_t>(t.bytes.data())},
                   {"bytes", t.bytes.size()}});
  }
  return out;
}

// segment()'s {text, boxes}, read by sam3's one prompt codec (errors name the field: prompt.boxes[0][4]).
sam3::Prompt prompt_from_json(const json& j) { return sam3::pure::concept_from_json(j, "prompt"); }

// The server's request names and bounds (sam3's one options codec): threshold, mask_threshold,
// nms, min_area, max_instances.
sam3::SegmentOptions options_from_json(const json& j) { return sam3::pure::segment_options_from_json(j, "options"); }

json string_list(const std::vector<std::string>& v) { return json(v); }

json from_embedding(const std::string& name) { return json{{"from", "embedding"}, {"name", name}}; }

// {"result": entry} or {"results": [entry, ...]}, the entries written by the library.
std::string results_text(const std::vector<std::string>& entries, bool many) {
  if (!many) return "{\"result\":" + entries.front() + "}";
  std::string out = "{\"results\":[";
  for (size_t i = 0; i < entries.size(); ++i) out += (i ? "," : "") + entries[i];
  return out + "]}";
}

// A text plan's next run as the wrapper runs it, or the result once every run is done.
std::string next_text_step(Model& m) {
  Plan& p = *m.plan;
  sam3::pure::TextRun* run = p.text->next();
  if (run) {
    json feeds = json::object();
    for (const auto& [input, feed] : run->feeds) {
      feeds[input] = feed.from == sam3::pure::TextRun::Feed::From::kEmbedding
                         ? from_embedding(feed.name)
                         : json{{"from", "kept"}, {"key", run->text_key}, {"name", feed.name}};
    }
    json step = {{"session", sam3::pure::session_name(run->session)},
                 {"tensors", tensors_json(run->tensors)},
                 {"feeds", std::move(feeds)},
                 {"stage", run->wants_outputs}};
    // The wrapper runs the text encoder unless it kept this text's outputs.
    if (run->session == sam3::pure::TextRun::Session::kText) step["keep"] = run->text_key;
    return json{{"run", std::move(step)}}.dump();
  }
  const bool many = p.many;
  auto results = p.text->take_results();
  m.plan.reset();
  m.staged_inputs.clear();
  std::vector<std::string> entries;
  for (const auto& r : results) entries.push_back(sam3::pure::prompt_result_text(r, sam3::pure::append_rle_mask));
  return results_text(entries, many);
}

// {"prompt": {"text", "boxes"}, "options", "width", "height"}, or {"prompts": [...], ...} for
// every prompt of one image: checked as natively (options, boxes, box slots) before anything runs.
std::string text_plan(Model& m, const json& j) {
  if (!m.tokenizer) throw sam3::Error(sam3::ErrorCode::kTokenizer, "no vocabulary loaded");
  const auto options = options_from_json(j.value("options", json::object()));
  const int width = j.at("width"), height = j.at("height");
  std::vector<sam3::Prompt> prompts;
  const bool many = j.contains("prompts");
  if (many) {
    const auto& list = j.at("prompts");
    if (!list.is_array() || list.empty()) {
      throw sam3::Error(sam3::ErrorCode::kInvalidArgument, "\"prompts\" must be a non-empty list of {text, boxes}");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      prompts.push_back(sam3::pure::concept_from_json(list[i], "prompts[" + std::to_string(i) + "]"));
    }
  } else {
    prompts.push_back(prompt_from_json(j.at("prompt")));
  }
  Plan p;
  p.many = many;
  p.text.emplace(*m.generation, *m.tokenizer, std::move(prompts), options, width, height, many);
  m.plan.emplace(std::move(p));
  return next_text_step(m);
}

std::string next_step(Model& m) {
  Plan& p = *m.plan;
  if (p.text) return next_text_step(m);
  const Tracker& tracker = *m.tracker;
  const size_t total = p.runs.size();
  if (p.next < total) {
    m.staged_inputs = tracker.decoder_inputs(p.runs[p.next].batch);
    json feeds = json::object();
    for (const auto& name : Tracker::embedding_names()) feeds[name] = from_embedding(name);
    return json{{"run",
                 {{"session", "decoder"},
                  {"tensors", tensors_json(m.staged_inputs)},
                  {"feeds", feeds},
                  {"stage", true},
                  {"index", p.next},
                  {"of", total}}}}
        .dump();
  }
  std::string result;
  if (p.everything) {
    result = sam3::pure::everything_result_text(
        sam3::pure::expand(Tracker::deduplicate(std::move(p.candidates), p.everything_options.box_nms_threshold)),
        sam3::pure::append_rle_mask);
  } else {
    result = sam3::pure::object_result_text(p.results.front(), sam3::pure::append_rle_mask);
  }
  m.plan.reset();
  m.staged_inputs.clear();
  return results_text({result}, false);
}

// The answer's model: {"layout", "name"}.
sam3::AnswerModel answer_model_from_json(const nlohmann::ordered_json& j) {
  return {j.at("layout").get<std::string>(), j.value("name", std::string())};
}

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE const char* sam3_abi_version() {
  return guarded([] { return json{{"abi", SAM3_WASM_ABI}, {"unicode", sam3::tokenizer::unicode::unicode_version()}}; });
}

// The interactive model's request -> its first step (sam3_wasm.h).
EMSCRIPTEN_KEEPALIVE const char* sam3_plan(int handle, const char* request_json) {
  return guarded([&] {
    auto& m = model(handle);
    m.plan.reset();
    m.outputs.clear();
    m.output_bytes.clear();
    const auto j = json::parse(request_json);
    if (j.contains("prompts")) {
      text_generation(m);  // says that a list of concepts needs a text model
      return text_plan(m, j);
    }
    if (m.generation && !(j.at("prompt").contains("points") || j.at("prompt").contains("box") || j.at("prompt").contains("everything"))) {
      return text_plan(m, j);
    }
    const Tracker& tracker = interactive(m);
    const auto entry = sam3::pure::prompt_entry_from_json(j.at("prompt"), "prompt");
    Plan p;
    p.width = j.at("width");
    p.height = j.at("height");
    if (p.width <= 0 || p.height <= 0) throw sam3::Error(sam3::ErrorCode::kInvalidArgument, "the image is empty");
    if (entry.kind == sam3::PromptEntry::Kind::kConcept) text_generation(m);  // says text needs a text model
    if (entry.kind == sam3::PromptEntry::Kind::kEverything) {
      p.everything = true;
      p.everything_options.points_per_side = entry.points_per_side;
      for (auto& batch : tracker.everything_runs(p.everything_options, p.width, p.height)) {
        const int objects = batch.objects;
        p.runs.push_back({std::vector<size_t>(static_cast<size_t>(objects)), std::move(batch)});
      }
    } else {
      p.options.multimask = j.value("multimask", false);
      p.prompts = {entry.object};
      p.runs = tracker.object_runs(p.prompts, p.width, p.height);
      p.results.resize(p.prompts.size());
    }
    m.plan.emplace(std::move(p));
    m.outputs.clear();
    m.output_bytes.clear();
    return next_step(m);
  });
}

// The staged outputs of the current run -> the next step or the result.
EMSCRIPTEN_KEEPALIVE const char* sam3_step(int handle) {
  return guarded([&] {
    auto& m = model(handle);
    if (!m.plan) throw sam3::Error(sam3::ErrorCode::kInvalidArgument, "no plan under way: call sam3_plan first");
    Plan& p = *m.plan;
    if (p.text) {  // the staged outputs of the text plan's run
      p.text->ran(m.outputs);
      m.outputs.clear();
      m.output_bytes.clear();
      return next_text_step(m);
    }
    const auto& run = p.runs.at(p.next);
    const auto decoded = m.tracker->decoded(m.outputs, run.batch.objects);
    m.outputs.clear();
    m.output_bytes.clear();
    if (p.everything) {
      for (auto& c : m.tracker->everything_candidates(decoded, p.everything_options, p.width, p.height)) {
        p.candidates.push_back(std::move(c));
      }
    } else {
      m.tracker->object_results(decoded, run, p.prompts, p.options, p.width, p.height, p.results);
    }
    ++p.next;
    return next_step(m);
  });
}

// The answer around a finished request's entries, as the CLI and the server write it (sam3_wasm.h).
EMSCRIPTEN_KEEPALIVE const char* sam3_answer(const char* request_json) {
  return guarded([&] {
    const auto j = nlohmann::ordered_json::parse(request_json);  // ordered: the entries' keys keep their order
    sam3::Answer a;
    a.model = answer_model_from_json(j.at("model"));
    sam3::AnswerImage image{"", j.at("image_id").get<std::string>(), j.at("width").get<int>(), j.at("height").get<int>(), {}};
    for (const auto& entry : j.at("prompts")) image.prompts.push_back(entry.dump());
    a.images.push_back(std::move(image));
    const auto& t = j.at("timings_ms");
    a.timings_ms = {t.value("load", 0.0),   t.value("preprocess", 0.0),  t.value("encode_image", 0.0),  t.value("encode_text", 0.0),
                    t.value("decode", 0.0), t.value("postprocess", 0.0), t.value("image_cached", false)};
    return sam3::answer_json(a);
  });
}

// {"candidates": [file names to look for], "vocabularies": [...]}
EMSCRIPTEN_KEEPALIVE const char* sam3_layout_candidates() {
  return guarded([] {
    json vocab = json::array();
    for (const char* n : sam3::pure::vocabulary_names()) vocab.push_back(n);
    json data = json::array();
    for (const char* n : sam3::pure::external_data_suffixes()) data.push_back(n);
    auto candidates = sam3::pure::tracker_candidate_names();
    for (auto& n : sam3::pure::candidate_names()) candidates.push_back(std::move(n));
    data.push_back("_data");  // the tracker's graphs keep their weights in <file>_data (the hub's export)
    return json{{"candidates", candidates}, {"vocabularies", vocab}, {"external_data", data}};
  });
}

// names: ["vision-encoder.onnx", ...] (what exists) -> {"layout", "candidates": [family ids], "parts": {part: file name},
// "interactive": the tracker (clicks), not a text generation}
EMSCRIPTEN_KEEPALIVE const char* sam3_choose_files(const char* where, const char* names_json) {
  return guarded([&] {
    const auto names = json::parse(names_json).get<std::set<std::string>>();
    // The interactive model first, as the native loader tries it.
    if (auto tracker = sam3::pure::choose_tracker_files(where, names)) {
      return json{
          {"layout", sam3::pure::kTrackerLayout}, {"candidates", {sam3::pure::kTrackerLayout}}, {"parts", *tracker}, {"interactive", true}};
    }
    const auto chosen = sam3::pure::choose_files(where, names);
    if (!chosen) {
      throw sam3::Error(sam3::ErrorCode::kModelNotFound, std::string(where) + ": not a SAM3 model folder for the browser; expected " +
                                                             sam3::pure::every_family_names() + ", or " +
                                                             sam3::pure::kTrackerFilesDescription);
    }
    json candidates = json::array();
    for (const auto* row : chosen->families) candidates.push_back(row->id);
    return json{{"layout", chosen->families.front()->id}, {"candidates", candidates}, {"parts", chosen->parts}, {"interactive", false}};
  });
}

// {"layout", "candidates", "parts": {"image": {"file", "inputs": [{name, type, shape}], "outputs": [...]}, ...}}
// -> {"handle", "layout", "generation", "quirks", "input_width", "input_height", "box_limit",
//     "image_feeds", "text_feeds", "geometry_image_feeds", "has_geometry"}
EMSCRIPTEN_KEEPALIVE const char* sam3_create(const char* spec_json) {
  return guarded([&] {
    const auto j = json::parse(spec_json);
    const auto& parts = j.at("parts");
    if (j.at("layout") == sam3::pure::kTrackerLayout) {
      Tracker tracker(part_from_json(parts.at("image")), part_from_json(parts.at("decoder")));
      const int handle = next_handle++;
      auto m = std::make_unique<Model>();
      m->tracker.emplace(std::move(tracker));
      const auto& t = *m->tracker;
      models[handle] = std::move(m);
      json feeds = Tracker::embedding_names();
      return json{{"handle", handle},
                  {"layout", sam3::pure::kTrackerLayout},
                  {"generation", t.name()},
                  {"interactive", true},
                  {"quirks", string_list(t.quirks())},
                  {"input_width", t.input_width()},
                  {"input_height", t.input_height()},
                  {"box_limit", 1},
                  {"image_feeds", feeds},
                  {"text_feeds", json::object()},
                  {"geometry_image_feeds", json::object()},
                  {"has_geometry", false},
                  {"unicode", sam3::tokenizer::unicode::unicode_version()}};
    }
    // The families whose names fit (sam3_choose_files' "candidates"), else the one named.
    std::vector<std::string> ids = {j.at("layout").get<std::string>()};
    if (j.contains("candidates")) ids = j["candidates"].get<std::vector<std::string>>();
    std::vector<const sam3::pure::FamilyRow*> rows;
    for (const auto& id : ids) {
      const auto* row = sam3::pure::find_family(id);
      if (!row || !row->browser) throw sam3::Error(sam3::ErrorCode::kModelMismatch, "layout '" + id + "' does not run in the browser");
      rows.push_back(row);
    }
    sam3::pure::PartSpecs specs;
    for (const auto& [part, spec] : parts.items()) specs[part] = part_from_json(spec);
    std::optional<Generation> g = sam3::pure::build_generation(rows, specs);
    const int handle = next_handle++;
    auto m = std::make_unique<Model>();
    m->generation.emplace(std::move(*g));
    const auto& gen = *m->generation;
    models[handle] = std::move(m);
    return json{{"handle", handle},
                {"layout", gen.layout()},
                {"generation", gen.name()},
                {"interactive", false},
                {"quirks", string_list(gen.quirks())},
                {"input_width", gen.input_width()},
                {"input_height", gen.input_height()},
                {"box_limit", gen.box_limit()},
                {"image_feeds", gen.image_feeds()},
                {"text_feeds", gen.text_feeds()},
                {"geometry_image_feeds", gen.geometry_image_feeds()},
                {"has_geometry", gen.has_geometry()},
                {"unicode", sam3::tokenizer::unicode::unicode_version()}};
  });
}

EMSCRIPTEN_KEEPALIVE const char* sam3_destroy(int handle) {
  return guarded([&] {
    models.erase(handle);
    return json::object();
  });
}

// The vocabulary's bytes, decompressed (the wrapper un-gzips a .gz); name marks a .json.
EMSCRIPTEN_KEEPALIVE const char* sam3_set_vocabulary(int handle, const char* data, int length, const char* name) {
  return guarded([&] {
    auto& m = model(handle);
    m.tokenizer.emplace(sam3::ClipTokenizer::from_data(std::string(data, static_cast<size_t>(length)), name));
    return json::object();
  });
}

// `sam3 tokenize`'s object: {"text", "ids", "mask"}.
EMSCRIPTEN_KEEPALIVE const char* sam3_tokenize(int handle, const char* text) {
  return guarded([&] {
    auto& m = model(handle);
    if (!m.tokenizer) throw sam3::Error(sam3::ErrorCode::kTokenizer, "no vocabulary loaded");
    const auto t = m.tokenizer->encode(text);
    return json{{"text", text}, {"ids", t.ids}, {"mask", t.mask}};
  });
}

// RGBA pixels (width * height * 4, alpha ignored) -> the image encoder's input tensors.
EMSCRIPTEN_KEEPALIVE const char* sam3_image_inputs(int handle, const std::uint8_t* rgba, int width, int height) {
  return guarded([&] {
    auto& m = model(handle);
    if (width <= 0 || height <= 0) throw sam3::Error(sam3::ErrorCode::kInvalidArgument, "the image is empty");
    sam3::Image image;
    image.width = width;
    image.height = height;
    image.rgb.resize(static_cast<size_t>(width) * height * 3);
    for (size_t i = 0, n = static_cast<size_t>(width) * height; i < n; ++i) {
      for (int c = 0; c < 3; ++c) image.rgb[i * 3 + c] = rgba[i * 4 + c];
    }
    if (m.tracker) {
      auto planes = sam3::predictor::resize_planar(image, m.tracker->input_width(), m.tracker->input_height());
      m.staged_inputs = m.tracker->image_inputs(planes);
    } else {
      auto planes = sam3::predictor::resize_planar(image, m.generation->input_width(), m.generation->input_height());
      m.staged_inputs = m.generation->image_inputs(planes);
    }
    return json{{"tensors", tensors_json(m.staged_inputs)}};
  });
}

// A place for one session output's bytes (the wrapper copies them in), by name.
EMSCRIPTEN_KEEPALIVE std::uintptr_t sam3_stage_output(int handle, const char* name, const char* shape_json, int onnx_type, int bytes) {
  try {
    auto& m = model(handle);
    auto& buffer = m.output_bytes[name];
    buffer.assign(static_cast<size_t>(bytes), 0);
    sam3::pure::TensorView v;
    v.type = sam3::pure::dtype_from_onnx(onnx_type);
    v.shape = json::parse(shape_json).get<std::vector<std::int64_t>>();
    v.data = buffer.data();
    v.count = static_cast<size_t>(bytes) / sam3::pure::element_size(v.type);
    m.outputs[name] = v;
    return reinterpret_cast<std::uintptr_t>(buffer.data());
  } catch (...) {
    return 0;
  }
}

// A model file's bytes -> the same graph with its int8 products as float operators, which ONNX
// Runtime Web's WebGPU provider has kernels for (optimize/onnx_int8_as_float.h):
// {"ptr", "bytes", "quantizers", "matmuls", "convs", "skipped"}; ptr 0 when nothing changed.
// The bytes stay in the module's memory until sam3_release_rewritten.
EMSCRIPTEN_KEEPALIVE const char* sam3_int8_as_float(const char* data, std::uint32_t length) {
  return guarded([&] {
    sam3::optimize::Int8AsFloatStats stats;
    rewritten = sam3::optimize::int8_products_as_float(std::string_view(data, length), &stats);
    const bool changed = stats.matmuls + stats.convs > 0;
    if (!changed) std::string().swap(rewritten);
    return json{{"ptr", changed ? reinterpret_cast<std::uintptr_t>(rewritten.data()) : 0},
                {"bytes", rewritten.size()},
                {"quantizers", stats.quantizers},
                {"matmuls", stats.matmuls},
                {"convs", stats.convs},
                {"skipped", stats.skipped}};
  });
}

EMSCRIPTEN_KEEPALIVE void sam3_release_rewritten() {
  std::string().swap(rewritten);
  std::free(kept_input);
  kept_input = nullptr;
}

// A model file's bytes -> the graph the tab runs fastest, in one pass over the module's memory
// (options: {"fuse_attention": bool, "attention_chunk": max queries per chunk, 0 for none,
// "int8_as_float": bool}):
//   - attention fused into com.microsoft.MultiHeadAttention (optimize/onnx_attention.h), as
//     natively; with attention_chunk > 0 each fused node loops over query chunks
//     (optimize/onnx_attention_chunks.h): ONNX Runtime Web's WASM kernel has no flash path and
//     would hold every score at once;
//   - the int8 products as float operators for WebGPU (as sam3_int8_as_float);
//   - with "split_linears" and/or "split_attention", the graph split at its int8 linear layers
//     and/or its MultiHeadAttention nodes for the tab's own kernels (optimize/onnx_split_graph.h,
//     onnx_split_linears.h, onnx_split_attention.h): the answer is then a split bundle, not an
//     ONNX file. Attention split out is not chunked (the kernel streams over keys): with
//     "split_attention" give attention_chunk 0;
//   - with "split_matmuls", also at its float MatMul nodes by constant weights over at least
//     "matmul_min_rows" rows (default 1024) by weights of at least "matmul_min_weight" values
//     (default 4096) for the tab's float kernel (onnx_split_matmuls.h).
// {"ptr", "bytes", "fused", "chunked", "quantizers", "matmuls", "convs", "skipped", "linears",
// "attention_steps", "float_matmuls", "segments"}. The bytes
// stay in the module's memory until sam3_release_rewritten. With "owns_input" the input
// (malloc'ed by the caller) belongs to the module: it is freed as soon as a rewritten copy
// exists, so that the module holds at most two copies of a large file, never three, and when
// nothing changed "ptr" is the input itself (no copy at all), freed by sam3_release_rewritten.
// Without it, ptr is 0 when nothing changed.
EMSCRIPTEN_KEEPALIVE const char* sam3_rewrite_for_browser(const char* data, std::uint32_t length, const char* options_json) {
  sam3_release_rewritten();
  bool owned = false;
  try {
    owned = json::parse(options_json).value("owns_input", false);
  } catch (...) {
    // malformed options: answered as an error below
  }
  bool input_freed = false;
  const auto free_input = [&] {
    if (owned && !input_freed) std::free(const_cast<char*>(data));
    input_freed = true;
  };
  bool changed = false, answered = false;
  const char* reply = guarded([&] {
    const auto options = json::parse(options_json);
    std::string_view bytes(data, length);
    std::string current;
    json stats = {{"fused", 0}, {"chunked", 0}, {"quantizers", 0}, {"matmuls", 0}, {"convs", 0}, {"skipped", 0}};
    if (options.value("fuse_attention", false)) {
      sam3::optimize::AttentionFusionStats fusion;
      auto fused = sam3::optimize::fuse_attention_if_any(bytes, &fusion);
      stats["fused"] = fusion.fused;
      if (fused) {
        current = std::move(*fused);
        bytes = current;
        free_input();
        const std::int64_t chunk = options.value("attention_chunk", std::int64_t{0});
        if (chunk > 0) {
          sam3::optimize::AttentionChunkStats chunks;
          std::string chunked = sam3::optimize::chunk_attention_queries(bytes, chunk, &chunks);
          stats["chunked"] = chunks.chunked;
          current = std::move(chunked);
          bytes = current;
        }
      }
    }
    if (options.value("int8_as_float", false)) {
      sam3::optimize::Int8AsFloatStats int8;
      std::string floats = sam3::optimize::int8_products_as_float(bytes, &int8);
      stats["quantizers"] = int8.quantizers, stats["matmuls"] = int8.matmuls, stats["convs"] = int8.convs;
      stats["skipped"] = int8.skipped;
      if (int8.matmuls + int8.convs > 0) current = std::move(floats);
    }
    stats["linears"] = 0, stats["attention_steps"] = 0, stats["float_matmuls"] = 0, stats["segments"] = 0;
    std::vector<sam3::optimize::KernelMatcher> matchers;
    if (options.value("split_linears", false)) matchers.push_back(sam3::optimize::match_int8_linears);
    if (options.value("split_attention", false)) matchers.push_back(sam3::optimize::match_attention);
    if (options.value("split_matmuls", false)) {
      sam3::optimize::FloatMatMulOptions o;
      o.min_rows = options.value("matmul_min_rows", o.min_rows);
      o.min_weight = options.value("matmul_min_weight", o.min_weight);
      matchers.push_back(sam3::optimize::float_matmul_matcher(bytes, o));
    }
    if (!matchers.empty()) {
      sam3::optimize::SplitStats split;
      std::string bundle = sam3::optimize::split_graph(bytes, matchers, &split);
      stats["linears"] = split.kernel_steps["linear"], stats["attention_steps"] = split.kernel_steps["attention"];
      stats["float_matmuls"] = split.kernel_steps["matmul"];
      stats["segments"] = split.segments;
      if (!split.refused.empty()) stats["split_refused"] = split.refused;
      if (!bundle.empty()) {
        current = std::move(bundle);
        bytes = current;
      }
    }
    changed = !current.empty();
    rewritten = std::move(current);
    if (changed) {
      stats["ptr"] = reinterpret_cast<std::uintptr_t>(rewritten.data());
      stats["bytes"] = rewritten.size();
    } else if (owned) {
      stats["ptr"] = reinterpret_cast<std::uintptr_t>(data);
      stats["bytes"] = length;
    } else {
      stats["ptr"] = 0;
      stats["bytes"] = 0;
    }
    answered = true;
    return stats;
  });
  if (owned && answered && !changed && !input_freed) {
    kept_input = const_cast<char*>(data);  // answered as the graph itself: freed on release
  } else {
    free_input();
  }
  return reply;
}

}  // extern "C"
