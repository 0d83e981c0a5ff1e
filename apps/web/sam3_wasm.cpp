// The WebAssembly face of the pure core (src/pure, tokenizer, pre- and post-processing,
// result JSON): C functions over JSON strings and tensors in the module's memory, for the
// JavaScript wrapper (sam3-browser.mjs), which only moves tensors between ONNX Runtime Web and
// these functions. Every rule of a generation is the core's; nothing here decides one.
//
// Each function returns a JSON string owned by the module until the next call on any
// handle; on failure {"error": {"code": "...", "message": "..."}}.
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
#include "predictor/postprocess.h"
#include "predictor/preprocess.h"
#include "pure/generation.h"
#include "pure/layout_names.h"
#include "pure/prompt_json.h"
#include "pure/prompt_rules.h"
#include "sam3/error.h"
#include "sam3/image.h"
#include "sam3/result_json.h"
#include "sam3/tokenizer.h"
#include "tokenizer/unicode_props.h"

namespace {

using nlohmann::json;
using sam3::pure::Generation;
using sam3::pure::Tensor;

struct Model {
  Generation generation;
  std::optional<sam3::ClipTokenizer> tokenizer;
  std::vector<Tensor> staged_inputs;                            // the last call's tensors
  std::map<std::string, std::vector<std::uint8_t>> output_bytes;  // staged decoder outputs
  sam3::pure::TensorViews outputs;
};

std::map<int, std::unique_ptr<Model>> models;
int next_handle = 1;
std::string reply;
std::string rewritten;  // the last sam3_int8_as_float's graph, until sam3_release_rewritten

template <typename J>
const char* answer(const J& j) {
  reply = j.dump();
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
    out.push_back({{"name", t.name}, {"dtype", sam3::pure::dtype_name(t.type)}, {"shape", t.shape},
                   {"ptr", reinterpret_cast<std::uintptr_t>(t.bytes.data())}, {"bytes", t.bytes.size()}});
  }
  return out;
}

// segment()'s {text, boxes}, read by sam3's one prompt codec (errors name the field: prompt.boxes[0][4]).
sam3::Prompt prompt_from_json(const json& j) { return sam3::pure::concept_from_json(j, "prompt"); }

// The server's request names: threshold, mask_threshold, nms, min_area, max_instances.
sam3::SegmentOptions options_from_json(const json& j) {
  sam3::SegmentOptions o;
  if (j.contains("threshold")) o.score_threshold = j["threshold"].get<float>();
  if (j.contains("mask_threshold")) o.mask_threshold = j["mask_threshold"].get<float>();
  if (j.contains("nms")) o.nms_iou = j["nms"].get<float>();
  if (j.contains("min_area")) o.min_area = j["min_area"].get<std::int64_t>();
  if (j.contains("max_instances")) o.max_instances = j["max_instances"].get<int>();
  return o;
}

json string_list(const std::vector<std::string>& v) { return json(v); }

}  // namespace

extern "C" {

// {"candidates": [file names to look for], "vocabularies": [...]}
EMSCRIPTEN_KEEPALIVE const char* sam3_layout_candidates() {
  return guarded([] {
    json vocab = json::array();
    for (const char* n : sam3::pure::vocabulary_names()) vocab.push_back(n);
    json data = json::array();
    for (const char* n : sam3::pure::external_data_suffixes()) data.push_back(n);
    return json{{"candidates", sam3::pure::candidate_names()}, {"vocabularies", vocab}, {"external_data", data}};
  });
}

// names: ["vision-encoder.onnx", ...] (what exists) -> {"layout", "candidates": [family ids], "parts": {part: file name}}
EMSCRIPTEN_KEEPALIVE const char* sam3_choose_files(const char* where, const char* names_json) {
  return guarded([&] {
    const auto names = json::parse(names_json).get<std::set<std::string>>();
    const auto chosen = sam3::pure::choose_files(where, names);
    if (!chosen) {
      throw sam3::Error(sam3::ErrorCode::kModelNotFound, std::string(where) + ": not a SAM3 model folder for the browser; expected " +
                                                             sam3::pure::every_family_names());
    }
    json candidates = json::array();
    for (const auto* row : chosen->families) candidates.push_back(row->id);
    return json{{"layout", chosen->families.front()->id}, {"candidates", candidates}, {"parts", chosen->parts}};
  });
}

// {"layout", "candidates", "parts": {"image": {"file", "inputs": [{name, type, shape}], "outputs": [...]}, ...}}
// -> {"handle", "layout", "generation", "quirks", "input_width", "input_height", "box_limit",
//     "image_feeds", "text_feeds", "geometry_image_feeds", "has_geometry"}
EMSCRIPTEN_KEEPALIVE const char* sam3_create(const char* spec_json) {
  return guarded([&] {
    const auto j = json::parse(spec_json);
    const auto& parts = j.at("parts");
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
    models[handle] = std::make_unique<Model>(Model{std::move(*g), std::nullopt, {}, {}, {}});
    const auto& gen = models[handle]->generation;
    return json{{"handle", handle}, {"layout", gen.layout()}, {"generation", gen.name()},
                {"quirks", string_list(gen.quirks())}, {"input_width", gen.input_width()},
                {"input_height", gen.input_height()}, {"box_limit", gen.box_limit()},
                {"image_feeds", gen.image_feeds()}, {"text_feeds", gen.text_feeds()},
                {"geometry_image_feeds", gen.geometry_image_feeds()},
                {"has_geometry", gen.has_geometry()}, {"unicode", sam3::unicode::unicode_version()}};
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
    auto planes = sam3::resize_planar(image, m.generation.input_width(), m.generation.input_height());
    m.staged_inputs = m.generation.image_inputs(planes);
    return json{{"tensors", tensors_json(m.staged_inputs)}};
  });
}

// {"prompt": {"text", "boxes"}, "options": {...}, "width", "height"} -> {"text": the text to
// encode (the text encoder's outputs can be cached by it), "text_tensors", "decoder_tensors",
// "geometry_tensors"}: everything checked as natively (options, boxes, box slots).
EMSCRIPTEN_KEEPALIVE const char* sam3_prompt_inputs(int handle, const char* request_json) {
  return guarded([&] {
    auto& m = model(handle);
    if (!m.tokenizer) throw sam3::Error(sam3::ErrorCode::kTokenizer, "no vocabulary loaded");
    const auto j = json::parse(request_json);
    const auto prompt = prompt_from_json(j.at("prompt"));
    const auto options = options_from_json(j.value("options", json::object()));
    const int width = j.at("width"), height = j.at("height");
    const std::string text = sam3::pure::checked_prompt_text(prompt, options, width, height);
    auto decoder = m.generation.decoder_inputs(prompt.boxes, width, height);
    auto geometry = m.generation.geometry_inputs(prompt.boxes, width, height);
    auto texts = m.generation.text_inputs(m.tokenizer->encode(text));
    m.staged_inputs.clear();
    const size_t nd = decoder.size(), ng = geometry.size();
    for (auto* list : {&decoder, &geometry, &texts}) {
      for (auto& t : *list) m.staged_inputs.push_back(std::move(t));
    }
    json all = tensors_json(m.staged_inputs);
    json out = {{"text", text}, {"decoder_tensors", json::array()}, {"geometry_tensors", json::array()}, {"text_tensors", json::array()}};
    for (size_t i = 0; i < all.size(); ++i) {
      out[i < nd ? "decoder_tensors" : i < nd + ng ? "geometry_tensors" : "text_tensors"].push_back(all[i]);
    }
    out["geometry_image_feeds"] = m.generation.geometry_image_feeds();
    return out;
  });
}

// A place for one session output's bytes (the wrapper copies them in), by name.
EMSCRIPTEN_KEEPALIVE std::uintptr_t sam3_stage_output(int handle, const char* name, const char* shape_json,
                                                      int onnx_type, int bytes) {
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

// The staged tensors of usls v1's text and geometry encoders -> the decoder's prompt inputs.
EMSCRIPTEN_KEEPALIVE const char* sam3_prompt_sequence(int handle, const char* geometry_names_json) {
  return guarded([&] {
    auto& m = model(handle);
    const auto geometry_names = json::parse(geometry_names_json).get<std::set<std::string>>();
    sam3::pure::TensorViews text, geometry;
    for (const auto& [name, view] : m.outputs) (geometry_names.contains(name) ? geometry : text)[name] = view;
    auto prompt = m.generation.prompt_inputs(text, geometry.empty() ? nullptr : &geometry);
    m.staged_inputs = std::move(prompt);
    m.outputs.clear();
    m.output_bytes.clear();
    return json{{"tensors", tensors_json(m.staged_inputs)}};
  });
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
    return json{{"ptr", changed ? reinterpret_cast<std::uintptr_t>(rewritten.data()) : 0}, {"bytes", rewritten.size()},
                {"quantizers", stats.quantizers}, {"matmuls", stats.matmuls}, {"convs", stats.convs},
                {"skipped", stats.skipped}};
  });
}

EMSCRIPTEN_KEEPALIVE void sam3_release_rewritten() { std::string().swap(rewritten); }

// A model file's bytes -> the graph the tab runs fastest, in one pass over the module's memory
// (options: {"fuse_attention": bool, "attention_chunk": max queries per chunk, 0 for none,
// "int8_as_float": bool}):
//   - attention fused into com.microsoft.MultiHeadAttention (optimize/onnx_attention.h), as
//     natively; with attention_chunk > 0 each fused node loops over query chunks
//     (optimize/onnx_attention_chunks.h): ONNX Runtime Web's WASM kernel has no flash path and
//     would hold every score at once;
//   - the int8 products as float operators for WebGPU (as sam3_int8_as_float).
// {"ptr", "bytes", "fused", "chunked", "quantizers", "matmuls", "convs", "skipped"}; ptr 0 when
// nothing changed. The bytes stay in the module's memory until sam3_release_rewritten. With
// "owns_input" the input (malloc'ed by the caller) is freed here as soon as a rewritten copy
// exists, so that the module holds at most two copies of a large file, never three; the
// caller must not free it then.
EMSCRIPTEN_KEEPALIVE const char* sam3_rewrite_for_browser(const char* data, std::uint32_t length, const char* options_json) {
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
  const char* reply = guarded([&] {
    const auto options = json::parse(options_json);
    std::string_view bytes(data, length);
    std::string current;
    json stats = {{"fused", 0}, {"chunked", 0}, {"quantizers", 0}, {"matmuls", 0}, {"convs", 0}, {"skipped", 0}};
    if (options.value("fuse_attention", false)) {
      sam3::optimize::AttentionFusionStats fusion;
      std::string fused = sam3::optimize::fuse_attention(bytes, &fusion);
      stats["fused"] = fusion.fused;
      if (fusion.fused > 0) {
        current = std::move(fused);
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
    const bool changed = !current.empty();
    rewritten = std::move(current);
    stats["ptr"] = changed ? reinterpret_cast<std::uintptr_t>(rewritten.data()) : 0;
    stats["bytes"] = rewritten.size();
    return stats;
  });
  free_input();
  return reply;
}

// The staged decoder outputs -> the CLI's prompts[] entry {"text", "boxes", "instances"}.
// request: as sam3_prompt_inputs.
EMSCRIPTEN_KEEPALIVE const char* sam3_decode(int handle, const char* request_json) {
  return guarded([&] {
    auto& m = model(handle);
    const auto j = json::parse(request_json);
    sam3::PromptResult result;
    result.prompt = prompt_from_json(j.at("prompt"));
    const auto options = options_from_json(j.value("options", json::object()));
    result.instances = m.generation.instances(m.outputs, j.at("width"), j.at("height"), options);
    sam3::finalize_instances(result.instances, options);
    m.outputs.clear();
    m.output_bytes.clear();
    return json::parse(sam3::prompt_result_json(result));
  });
}

}  // extern "C"
