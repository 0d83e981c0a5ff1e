#include "pure/text_plan.h"

#include <cstring>
#include <utility>

#include "predictor/postprocess.h"
#include "pure/prompt_rules.h"
#include "sam3/error.h"

namespace sam3::pure {
namespace {

TensorViews views_of(const std::vector<Tensor>& tensors) {
  TensorViews out;
  for (const auto& t : tensors) out[t.name] = {t.type, t.shape, t.bytes.data(), t.bytes.size() / element_size(t.type)};
  return out;
}

std::vector<Tensor> owned(const TensorViews& views) {
  std::vector<Tensor> out;
  for (const auto& [name, v] : views) {
    Tensor t{name, v.type, v.shape, std::vector<std::uint8_t>(v.count * element_size(v.type))};
    if (!t.bytes.empty()) std::memcpy(t.bytes.data(), v.data, t.bytes.size());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

const char* session_name(TextRun::Session session) {
  switch (session) {
    case TextRun::Session::kText:
      return "text";
    case TextRun::Session::kGeometry:
      return "geometry";
    case TextRun::Session::kDecoder:
      return "decoder";
  }
  return "?";
}

TextPlan::TextPlan(const Generation& generation, const ClipTokenizer& tokenizer, std::vector<Prompt> prompts, const SegmentOptions& options,
                   int width, int height, bool across_prompts)
    : generation_(&generation),
      tokenizer_(&tokenizer),
      prompts_(std::move(prompts)),
      options_(options),
      width_(width),
      height_(height),
      across_prompts_(across_prompts) {
  if (prompts_.empty()) throw Error(ErrorCode::kInvalidArgument, "no prompt given: give a text or exemplar boxes");
  for (const auto& prompt : prompts_) {  // every prompt checked before the first runs
    checked_prompt_text(prompt, options_, width_, height_);
    generation_->decoder_inputs(prompt.boxes, width_, height_);  // refuses more boxes than the family's slots
  }
  start(0);
}

void TextPlan::start(std::size_t prompt) {
  current_ = prompt;
  stage_ = Stage::kText;
  const Prompt& p = prompts_[prompt];
  const std::string text = checked_prompt_text(p, options_, width_, height_);
  box_inputs_ = generation_->decoder_inputs(p.boxes, width_, height_);
  geometry_inputs_ = generation_->geometry_inputs(p.boxes, width_, height_);
  text_inputs_ = generation_->text_inputs(tokenizer_->encode(text));
  text_outputs_.clear();
  prompt_inputs_.clear();
  run_ = {};
  run_.text_key = "text:" + text;
}

// Moves to the next stage that has a run, computing what needs no session on the way.
void TextPlan::advance() {
  const std::size_t prompt = current_;
  while (!pending_) {
    switch (stage_) {
      case Stage::kText:
        stage_ = Stage::kGeometry;
        if (generation_->has_text_encoder()) {
          run_ = {TextRun::Session::kText, prompt, text_inputs_, {}, run_.text_key, generation_->has_geometry()};
          pending_ = true;
        }
        break;
      case Stage::kGeometry:
        stage_ = Stage::kDecoder;
        if (!generation_->has_geometry()) break;
        if (!generation_->has_text_encoder()) text_outputs_ = text_inputs_;  // the ids are the text's features
        if (!geometry_inputs_.empty()) {
          std::string key = run_.text_key;
          run_ = {TextRun::Session::kGeometry, prompt, std::move(geometry_inputs_), {}, std::move(key), true};
          for (const auto& [input, output] : generation_->geometry_image_feeds()) {
            run_.feeds[input] = {TextRun::Feed::From::kEmbedding, output};
          }
          pending_ = true;
        } else {
          prompt_inputs_ = generation_->prompt_inputs(views_of(text_outputs_), nullptr);
        }
        break;
      case Stage::kDecoder: {
        stage_ = Stage::kDone;
        std::string key = run_.text_key;
        run_ = {TextRun::Session::kDecoder, prompt, std::move(box_inputs_), {}, std::move(key), true};
        for (auto& t : prompt_inputs_) run_.tensors.push_back(std::move(t));
        for (const auto& name : generation_->image_feeds()) run_.feeds[name] = {TextRun::Feed::From::kEmbedding, name};
        for (const auto& [input, output] : generation_->text_feeds()) {
          if (generation_->has_text_encoder()) {
            run_.feeds[input] = {TextRun::Feed::From::kText, output};
            continue;
          }
          // Without a text encoder the decoder encodes the text: the ids are its inputs.
          for (const auto& t : text_inputs_) {
            if (t.name != output) continue;
            run_.tensors.push_back(t);
            run_.tensors.back().name = input;
          }
        }
        pending_ = true;
        break;
      }
      case Stage::kDone:
        if (current_ + 1 >= prompts_.size()) return;
        start(current_ + 1);
        return advance();
    }
  }
}

TextRun* TextPlan::next() {
  if (!pending_) advance();
  return pending_ ? &run_ : nullptr;
}

void TextPlan::ran(const TensorViews& outputs) {
  if (!pending_) throw Error(ErrorCode::kInvalidArgument, "the plan has no run under way: call next() first");
  pending_ = false;
  switch (run_.session) {
    case TextRun::Session::kText:
      if (run_.wants_outputs) text_outputs_ = owned(outputs);
      break;
    case TextRun::Session::kGeometry:
      prompt_inputs_ = generation_->prompt_inputs(views_of(text_outputs_), &outputs);
      break;
    case TextRun::Session::kDecoder: {
      PromptResult result;
      result.prompt = prompts_[current_];
      result.instances = generation_->instances(outputs, width_, height_, options_);
      predictor::finalize_instances(result.instances, options_);
      results_.push_back(std::move(result));
      break;
    }
  }
  run_.tensors.clear();
}

std::vector<PromptResult> TextPlan::take_results() {
  if (next()) throw Error(ErrorCode::kInvalidArgument, "the plan is not done: every run must be run first");
  if (across_prompts_) {
    std::vector<std::vector<Instance>*> lists;
    for (auto& r : results_) lists.push_back(&r.instances);
    generation_->suppress_across_prompts(lists);  // the family's rule over the image's prompts
  }
  return std::move(results_);
}

}  // namespace sam3::pure
