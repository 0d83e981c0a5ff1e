// The plan that answers the text prompts of one image, in the one order both executors run it:
// natively sam3::ImageSegmenter over model/text_backend.cpp (ONNX Runtime), in the browser
// apps/web/sam3_wasm.cpp through its JavaScript wrapper (ONNX Runtime Web). Per prompt: the
// text encoder (an executor that kept that text's outputs gives them instead of running it),
// the geometry encoder where the family has one and the prompt needs it, then the decoder;
// its outputs become the prompt's instances (post-processed). After the last prompt, the
// family's rule across the prompts of the image (EfficientSAM3 drops repeats). Clicks have
// theirs in pure::Tracker (object_runs, everything_runs). Pure: standard library only.
//
//   TextPlan plan(generation, tokenizer, prompts, options, width, height);  // every prompt checked
//   while (TextRun* run = plan.next()) plan.ran(outputs of running *run);
//   std::vector<PromptResult> results = plan.take_results();
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "pure/generation.h"
#include "sam3/tokenizer.h"
#include "sam3/types.h"

namespace sam3::pure {

// One session run of a plan.
struct TextRun {
  enum class Session { kText, kGeometry, kDecoder };
  // Where an input the plan does not give comes from: an output of the image encoder (the
  // embedding), or an output of this prompt's text encoder run (kept by text_key).
  struct Feed {
    enum class From { kEmbedding, kText };
    From from = From::kEmbedding;
    std::string name;  // the output's name
  };

  Session session = Session::kText;
  std::size_t prompt = 0;             // the prompt it answers, an index into the plan's prompts
  std::vector<Tensor> tensors;        // the inputs the plan gives
  std::map<std::string, Feed> feeds;  // the others: input name -> where its value is
  std::string text_key;               // the text encoder's: its outputs may be kept by this key
  bool wants_outputs = true;          // whether ran() reads the outputs (a text run: only when a geometry run follows)
};

const char* session_name(TextRun::Session session);  // "text", "geometry", "decoder"

class TextPlan {
 public:
  // Checks every prompt (text or boxes, boxes inside the image, the family's box slots) and the
  // options before anything runs: kInvalidArgument saying which value is wrong. With
  // `across_prompts` the family's rule across the prompts applies to the results (an image's
  // prompts answered together); without, each prompt is answered on its own.
  TextPlan(const Generation& generation, const ClipTokenizer& tokenizer, std::vector<Prompt> prompts, const SegmentOptions& options,
           int width, int height, bool across_prompts = true);

  // The run to do next (valid until ran()), or null once every prompt is answered.
  TextRun* next();
  // The outputs of next()'s run (for a text run, possibly kept from an earlier run of the same
  // text_key), viewed for the call only; for a run with wants_outputs false, anything.
  void ran(const TensorViews& outputs);
  // One result per prompt, in the prompts' order, once done(): instances post-processed (and
  // the family's rule applied across them); timings are the executor's to fill.
  std::vector<PromptResult> take_results();

 private:
  enum class Stage { kText, kGeometry, kDecoder, kDone };
  void start(std::size_t prompt);
  void advance();

  const Generation* generation_;  // the caller's, alive as long as the plan
  const ClipTokenizer* tokenizer_;
  std::vector<Prompt> prompts_;
  SegmentOptions options_;
  int width_, height_;
  bool across_prompts_;
  std::size_t current_ = 0;
  Stage stage_ = Stage::kText;
  TextRun run_;           // the run next() gave
  bool pending_ = false;  // whether run_ waits for ran()
  std::vector<Tensor> text_inputs_, box_inputs_, geometry_inputs_, prompt_inputs_;
  std::vector<Tensor> text_outputs_;  // the text encoder's outputs, owned (read by the geometry step)
  std::vector<PromptResult> results_;
};

}  // namespace sam3::pure
