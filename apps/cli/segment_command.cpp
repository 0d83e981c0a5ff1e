// sam3 segment: every instance of each prompt in each image, as JSON, PNG masks and overlays.
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cli_common.h"
#include "model_resolver.h"
#include "number_options.h"
#include "sam3/export.h"
#include "sam3/log.h"
#include "sam3/model.h"
#include "sam3/output_folder.h"
#include "sam3/result_json.h"

namespace sam3::cli {
namespace {

namespace fs = std::filesystem;

struct SegmentArgs {
  ModelSelection models;
  std::vector<std::string> images;
  std::vector<std::string> prompts;
  std::vector<std::string> boxes;
  SegmentOptions options;
  std::int64_t max_pixels = ImageLoadOptions{}.max_pixels;
  int threads = 0;
  std::string out;
  bool json = false;
};

BoxPrompt parse_box(const std::string& spec) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string p; std::getline(ss, p, ',');) parts.push_back(p);
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, "--box '" + spec + "': " + why + "; expected x0,y0,x1,y1 in pixels, "
                                              "optionally followed by ,neg for a negative exemplar");
  };
  if (parts.size() != 4 && parts.size() != 5) throw bad("needs 4 numbers");
  BoxPrompt box;
  float v[4];
  for (int i = 0; i < 4; ++i) {
    try {  // pixels: finite, and in float's range
      v[i] = static_cast<float>(parse_number(parts[static_cast<size_t>(i)], "--box", -1e9, 1e9));
    } catch (const Error&) {
      throw bad("'" + parts[static_cast<size_t>(i)] + "' is not a finite number of pixels");
    }
  }
  box.box = {v[0], v[1], v[2], v[3]};
  if (parts.size() == 5) {
    if (parts[4] == "neg" || parts[4] == "negative") box.positive = false;
    else if (parts[4] != "pos" && parts[4] != "positive") throw bad("the fifth field must be pos or neg");
  }
  return box;
}

// File-system-safe name for a prompt's output folder.
std::string slug(const std::string& text) {
  std::string s;
  for (unsigned char c : text) {
    if (std::isalnum(c)) s.push_back(static_cast<char>(std::tolower(c)));
    else if (!s.empty() && s.back() != '-') s.push_back('-');
    if (s.size() >= 48) break;
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "prompt" : s;
}

struct ImageRun {
  std::string path;
  Image image;
  std::vector<PromptResult> results;
};

struct Totals {
  double preprocess = 0, encode_image = 0, encode_text = 0, decode = 0, postprocess = 0;
};

// Writes one image's folder (one subfolder per prompt) at `dir`, the staged place of the update.
void write_image_outputs(const fs::path& dir, const ImageRun& run, const nlohmann::ordered_json& image_doc) {
  std::set<std::string> used;
  for (size_t p = 0; p < run.results.size(); ++p) {
    const auto& result = run.results[p];
    const std::string label = result.prompt.text.empty() ? "boxes" : result.prompt.text;
    const fs::path prompt_dir = dir / unique_file_name(slug(label), used);
    for (size_t i = 0; i < result.instances.size(); ++i) {
      char name[48];
      std::snprintf(name, sizeof name, "instance_%03zu.png", i);
      write_file_atomic(prompt_dir / name, encode_mask_png(result.instances[i].mask));
    }
    write_file_atomic(prompt_dir / "overlay.jpg", encode_rgb_jpeg(render_overlay(run.image, result.instances, label)));
    nlohmann::ordered_json one = image_doc;  // the same schema, narrowed to this prompt
    one["images"][0]["prompts"] = nlohmann::ordered_json::array({image_doc["images"][0]["prompts"][p]});
    write_file_atomic(prompt_dir / "result.json", one.dump(2) + "\n");
  }
}

int run_segment(const SegmentArgs& args) {
  if (args.prompts.empty() && args.boxes.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "no prompt: give --prompt TEXT (repeatable) and/or --box x0,y0,x1,y1");
  }
  for (const auto& p : args.prompts) {
    if (p.find_first_not_of(" \t\r\n") == std::string::npos) {
      throw Error(ErrorCode::kInvalidArgument, "--prompt is empty; give a noun phrase such as --prompt \"red car\"");
    }
  }
  std::vector<BoxPrompt> boxes;
  for (const auto& spec : args.boxes) boxes.push_back(parse_box(spec));
  std::vector<Prompt> prompts;
  for (const auto& text : args.prompts) prompts.push_back({text, boxes});
  if (prompts.empty()) prompts.push_back({"", boxes});  // box-only prompt

  // The output folder is claimed first: a folder that is not sam3's fails before any work.
  std::unique_ptr<OutputFolderUpdate> update;
  std::vector<fs::path> image_dirs;
  if (!args.out.empty()) {
    update = std::make_unique<OutputFolderUpdate>(args.out);
    std::set<std::string> used = {"result.json"};
    for (const auto& path : args.images) {
      image_dirs.push_back(update->stage(unique_file_name(safe_file_name(fs::path(path).stem().string(), "image"), used)));
    }
  }

  const ImageLoadOptions load_options{args.max_pixels};
  const fs::path model_dir = resolve_model_dir(args.models);
  ModelOptions model_options;
  model_options.providers = execution_providers(args.models);
  model_options.intra_op_threads = args.threads;
  model_options.fallback_vocabulary = data_dir() / "clip" / "bpe_simple_vocab_16e6.txt.gz";
  const auto model = Model::load(model_dir, model_options);

  // Everything is computed before anything is written: a bad image leaves no partial output.
  std::vector<ImageRun> runs;
  Totals totals;
  for (const auto& path : args.images) {
    ImageRun run{path, load_image(path, load_options), {}};
    const auto embedding = model->encode(run.image);
    totals.preprocess += embedding.preprocess_ms();
    totals.encode_image += embedding.encode_ms();
    for (const auto& prompt : prompts) {
      auto result = model->segment(embedding, prompt, args.options);
      totals.encode_text += result.timings.encode_text_ms;
      totals.decode += result.timings.decode_ms;
      totals.postprocess += result.timings.postprocess_ms;
      run.results.push_back(std::move(result));
    }
    runs.push_back(std::move(run));
  }

  nlohmann::ordered_json doc;
  doc["model"] = {{"layout", layout_name(model->layout())}, {"dir", model_dir.string()}};
  doc["images"] = nlohmann::ordered_json::array();
  for (const auto& run : runs) {
    nlohmann::ordered_json image = {{"path", run.path}, {"width", run.image.width}, {"height", run.image.height},
                            {"prompts", nlohmann::ordered_json::array()}};
    for (const auto& r : run.results) image["prompts"].push_back(prompt_result_json(r));
    doc["images"].push_back(std::move(image));
  }
  doc["timings_ms"] = {{"load", model->load_ms()},         {"preprocess", totals.preprocess},
                       {"encode_image", totals.encode_image}, {"encode_text", totals.encode_text},
                       {"decode", totals.decode},           {"postprocess", totals.postprocess}};

  if (update) {
    for (size_t i = 0; i < runs.size(); ++i) {
      nlohmann::ordered_json image_doc = doc;
      image_doc["images"] = nlohmann::ordered_json::array({doc["images"][i]});
      write_image_outputs(image_dirs[i], runs[i], image_doc);
    }
    write_file_atomic(update->stage("result.json"), doc.dump(2) + "\n");
    update->commit();
  }
  if (args.json) {
    std::cout << doc.dump() << std::endl;
    return kOk;
  }
  for (const auto& run : runs) {
    for (const auto& r : run.results) {
      std::printf("%s  %-24s %zu instance%s", run.path.c_str(),
                  ("\"" + (r.prompt.text.empty() ? std::string("boxes") : r.prompt.text) + "\"").c_str(),
                  r.instances.size(), r.instances.size() == 1 ? "" : "s");
      for (size_t i = 0; i < r.instances.size() && i < 8; ++i) std::printf("%s%.2f", i ? " " : "  scores ", r.instances[i].score);
      std::printf("\n");
    }
  }
  if (!args.out.empty()) std::printf("wrote %s\n", (fs::path(args.out) / "result.json").c_str());
  return kOk;
}

}  // namespace

void add_segment_command(CLI::App& app, Runner& run) {
  auto args = std::make_shared<SegmentArgs>();
  auto* cmd = app.add_subcommand("segment", "Segment every instance of text (and/or box) prompts in images");
  add_model_options(*cmd, args->models);
  cmd->add_option("-i,--image", args->images, "Image file (JPEG, PNG, WebP, BMP, TIFF); repeatable")->required();
  cmd->add_option("-p,--prompt", args->prompts, "Text prompt, e.g. \"yellow school bus\"; repeatable");
  cmd->add_option("--box", args->boxes, "Exemplar box x0,y0,x1,y1[,neg] in pixels; repeatable; applies to every prompt");
  cmd->add_option("-t,--threshold", args->options.score_threshold, "Keep instances scoring above this")
      ->check(number_in(0, 1))->capture_default_str();
  cmd->add_option("--mask-threshold", args->options.mask_threshold, "Mask probability cut")
      ->check(number_in(0, 1))->capture_default_str();
  cmd->add_option("--min-area", args->options.min_area, "Drop instances with fewer mask pixels")->check(number_in(0));
  cmd->add_option("--max-instances", args->options.max_instances, "Keep at most N per prompt (0 = all)")->check(number_in(0));
  cmd->add_option("--nms", args->options.nms_iou, "Mask-IoU NMS threshold (0 = off, as the official processor)")
      ->check(number_in(0, 1));
  cmd->add_option("--max-pixels", args->max_pixels, "Refuse images with more pixels")->capture_default_str()->check(number_above(0));
  cmd->add_option("--threads", args->threads, "ONNX Runtime intra-op threads (0 = one per core)")->check(number_in(0));
  cmd->add_option("-o,--out", args->out, "Write masks, overlays and result.json under DIR");
  cmd->add_flag("--json", args->json, "Print the result JSON on stdout (and nothing else)");
  cmd->callback([args, &run] { run = [args] { return run_segment(*args); }; });
}

}  // namespace sam3::cli
