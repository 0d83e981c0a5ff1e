// The WebAssembly module's C ABI: the pure core (src/pure, tokenizer, pre- and post-processing,
// the result JSON) for the JavaScript wrapper (sam3-browser.mjs), which only moves tensors
// between ONNX Runtime Web and these functions. Every rule of a generation is the core's.
//
// Version: sam3_abi_version() answers {"abi": SAM3_WASM_ABI, "unicode": "14.0.0"}; the wrapper
// refuses a module of another ABI (a stale sam3.wasm beside a newer wrapper).
//
// Handles: sam3_create() answers {"handle": N, ...}; N names the model in every later call
// until sam3_destroy(N). A handle holds the model's rules, its vocabulary, the tensors of its
// last call and the outputs staged for it; an unknown handle is an invalid_argument error.
//
// Strings: arguments are NUL-terminated UTF-8 owned by the caller. Every `const char*` answer
// is JSON owned by the module and valid until the next call of any function (copy it first).
//
// Errors: an answer {"error": {"code": "...", "message": "..."}}, with sam3's error codes
// (invalid_argument, model_not_found, model_mismatch, tokenizer, runtime, ...) and the native
// library's messages. Nothing here aborts or prints.
//
// Tensors: an answer's tensors are [{"name", "dtype" ("float32", "int64", ...), "shape",
// "ptr", "bytes"}]: `bytes` bytes at `ptr` in the module's memory, valid until the next call
// on that handle. Session outputs go the other way through sam3_stage_output().
//
// Plans (every prompt, text or click): the core says which session to run with which feeds,
// the wrapper runs it and stages its outputs. The plans are the pure core's, the ones the
// native facades run too (pure::TextPlan for text, pure::Tracker's runs for clicks):
//   step = sam3_plan(h, request)
//   while step has "run": {"session": "text"|"geometry"|"decoder", "tensors", "feeds": {input:
//       {"from": "embedding", "name"} | {"from": "kept", "key", "name"}}, "keep"?, "stage"?}
//     run session `session` on `tensors` plus the feeds (the embedding's outputs, or outputs
//     kept under `key`); with "keep": key, the wrapper may keep the outputs under that key and
//     skip the run when it holds them already (a text encoder's outputs per text, as the native
//     cache); with "stage": true, stage every output with sam3_stage_output(); then
//     step = sam3_step(h)
//   step["result"] is the CLI's prompts[] entry; for {"prompts": [...]}, step["results"] holds
//   one entry per prompt, after the family's rule across the prompts of one image.
#pragma once

#include <cstdint>

#define SAM3_WASM_ABI 5

extern "C" {

const char* sam3_abi_version();
// {"candidates": [graph names to look for], "vocabularies": [...], "external_data": [suffixes]}
const char* sam3_layout_candidates();
// names: JSON list of the names that exist -> {"layout", "candidates": [family ids], "parts": {part: name}}
const char* sam3_choose_files(const char* where, const char* names_json);
// {"layout", "candidates", "parts": {part: {"file", "inputs": [{name, type, shape}], "outputs"}}}
// -> {"handle", "layout", "generation", "interactive", "quirks", "input_width", "input_height",
//     "box_limit", "image_feeds", "text_feeds", "geometry_image_feeds", "has_geometry", "unicode"}
const char* sam3_create(const char* spec_json);
const char* sam3_destroy(int handle);
// The vocabulary's bytes (decompressed); `name` tells a tokenizer.json from a BPE file.
const char* sam3_set_vocabulary(int handle, const char* data, int length, const char* name);
const char* sam3_tokenize(int handle, const char* text);  // {"text", "ids", "mask"}
// RGBA pixels (alpha ignored) -> {"tensors": the image encoder's inputs}.
const char* sam3_image_inputs(int handle, const std::uint8_t* rgba, int width, int height);

// request: {"prompt", "width", "height", ...} -> the first step (above); checked as natively
// before anything runs. A text model: {"prompt": {"text", "boxes": [[x0, y0, x1, y1,
// "pos"|"neg"]]}, "options": {threshold, mask_threshold, nms, min_area, max_instances}}, or
// {"prompts": [{"text", "boxes"}, ...], "options"} for every prompt of one image (as the native
// ImageSegmenter::segment_all: EfficientSAM3 drops what repeats across them). The
// interactive model: {"prompt": {"points": [[x, y, "pos"|"neg"]], "box": [x0, y0, x1, y1]} or
// {"everything": true, "points_per_side": N} (the server's /v1/segment entry), "multimask"}:
// points and boxes finite and inside the image, counts bounded, the options' ranges.
const char* sam3_plan(int handle, const char* request_json);
// The staged outputs of the step's run -> the next step, or {"result": ...}.
const char* sam3_step(int handle);
// {"model": {"layout", "name"}, "image_id", "width", "height", "prompts": [finished entries in
// order], "timings_ms": {...}} -> the answer `sam3 segment --json` and POST /v1/segment write
// (sam3/answer_json.h), with the library's envelope around the entries as they were given.
const char* sam3_answer(const char* request_json);

// Room for one session output (bytes, ONNX element type, shape as JSON) by name: the wrapper
// copies the output's bytes to the address answered (0: no memory).
std::uintptr_t sam3_stage_output(int handle, const char* name, const char* shape_json, int onnx_type, int bytes);

// A graph's bytes -> the same graph with its int8 products as float operators (WebGPU):
// {"ptr", "bytes", "quantizers", "matmuls", "convs", "skipped"}; ptr 0 when nothing changed.
// The bytes stay until sam3_release_rewritten().
const char* sam3_int8_as_float(const char* data, std::uint32_t length);
// A graph's bytes -> the graph the tab runs fastest, in one pass; options {"fuse_attention",
// "attention_chunk" (most queries per chunk, 0: none), "int8_as_float", "owns_input" (the input,
// malloc'ed by the caller, then belongs to the module, never freed by the caller)} -> {"ptr",
// "bytes", "fused", "chunked", "quantizers", "matmuls", "convs", "skipped"}; when nothing changed
// ptr is 0, or with "owns_input" the input itself (no copy). The bytes stay until
// sam3_release_rewritten(), which also frees an owned input.
const char* sam3_rewrite_for_browser(const char* data, std::uint32_t length, const char* options_json);
void sam3_release_rewritten();

}  // extern "C"
