// sam3 segment: every instance of each prompt in each image, as JSON, PNG masks and overlays.
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cli_common.h"
#include "model_resolver.h"
#include "number_options.h"
#include "sam3/answer_json.h"
#include "sam3/export.h"
#include "sam3/log.h"
#include "sam3/image_segmenter.h"
#include "sam3/interactive_segmenter.h"
#include "sam3/model.h"
#include "sam3/output_folder.h"
#include "sam3/prompt_json.h"

namespace sam3::cli {
namespace {

namespace fs = std::filesystem;

struct SegmentArgs {
  ModelSelection models;
  std::vector<std::string> images;
  std::vector<std::string> prompts;
  std::vector<std::string> boxes;
  std::vector<std::string> points;  // interactive model: clicks on one object
  bool multimask = false;
  bool everything = false;
  EverythingOptions everything_options;
  SegmentOptions options;
  std::int64_t max_pixels = ImageLoadOptions{}.max_pixels;
  int threads = 0;
  std::string out;
  bool json = false;
  std::string mask_format = "rle";
  MaskJsonOptions masks;
};

BoxPrompt parse_box(const std::string& spec) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string p; std::getline(ss, p, ',');) parts.push_back(p);
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, "--box '" + spec + "': " + why +
                                                  "; expected x0,y0,x1,y1 in pixels, "
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
    const auto polarity = parse_polarity(parts[4]);
    if (!polarity) throw bad("the fifth field must be pos or neg");
    box.positive = *polarity;
  }
  return box;
}

PointPrompt parse_point(const std::string& spec) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string p; std::getline(ss, p, ',');) parts.push_back(p);
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, "--point '" + spec + "': " + why +
                                                  "; expected X,Y in pixels, "
                                                  "optionally followed by ,neg for a negative click (\"not this\")");
  };
  if (parts.size() != 2 && parts.size() != 3) throw bad("needs 2 numbers");
  float v[2];
  for (int i = 0; i < 2; ++i) {
    try {
      size_t used = 0;
      v[i] = std::stof(parts[static_cast<size_t>(i)], &used);
      if (used != parts[static_cast<size_t>(i)].size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw bad("'" + parts[static_cast<size_t>(i)] + "' is not a number");
    }
  }
  PointPrompt point{v[0], v[1], true};
  if (parts.size() == 3) {
    const auto polarity = parse_polarity(parts[2]);
    if (!polarity) throw bad("the third field must be pos or neg");
    point.positive = *polarity;
  }
  return point;
}

// The objects the command line describes for the interactive model: the points (and at most
// one box) are one object; boxes without points are one object each.
std::vector<InteractivePrompt> interactive_prompts(const SegmentArgs& args) {
  if (!args.prompts.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "this is SAM3's interactive (tracker) model: it takes --point and --box, not --prompt text; use a "
                "text-prompted SAM3 model for words");
  }
  std::vector<InteractivePrompt> objects;
  if (args.everything) return objects;
  InteractivePrompt object;
  for (const auto& spec : args.points) object.points.push_back(parse_point(spec));
  std::vector<Box> boxes;
  for (const auto& spec : args.boxes) {
    const BoxPrompt b = parse_box(spec);
    if (!b.positive)
      throw Error(ErrorCode::kInvalidArgument, "--box '" + spec + "': the interactive model takes no negative boxes; use --point X,Y,neg");
    boxes.push_back(b.box);
  }
  if (!object.points.empty()) {
    if (boxes.size() > 1) {
      throw Error(ErrorCode::kInvalidArgument, "with --point, give at most one --box: the box of the clicked object");
    }
    if (!boxes.empty()) object.box = boxes[0];
    objects.push_back(std::move(object));
  } else {
    for (const auto& b : boxes) objects.push_back({{}, b});
  }
  if (objects.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "no prompt: give --point X,Y (repeatable, ,neg for a negative click), "
                "--box x0,y0,x1,y1, or --everything");
  }
  return objects;
}

// File-system-safe name for a prompt's output folder.
std::string slug(const std::string& text) {
  std::string s;
  for (unsigned char c : text) {
    if (std::isalnum(c))
      s.push_back(static_cast<char>(std::tolower(c)));
    else if (!s.empty() && s.back() != '-')
      s.push_back('-');
    if (s.size() >= 48) break;
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "prompt" : s;
}

struct ImageRun {
  std::string path;
  Image image;
  std::vector<PromptResult> results;
  std::vector<std::string> entries;  // the answer's JSON entry of each result
};

struct Totals {
  double preprocess = 0, encode_image = 0, encode_text = 0, decode = 0, postprocess = 0;
};

// Writes one image's folder (one subfolder per prompt) at `dir`, the staged place of the update;
// each prompt's result.json is the answer narrowed to that image and prompt.
void write_image_outputs(const fs::path& dir, const ImageRun& run, const Answer& image_answer) {
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
    const AnswerImage& image = image_answer.images.front();
    const Answer one{image_answer.model,
                     image_answer.interactive_model,
                     {{image.path, image.image_id, image.width, image.height, {image.prompts[p]}}},
                     image_answer.timings_ms};
    write_file_atomic(prompt_dir / "result.json", answer_json(one) + "\n");
  }
}

int run_segment(const SegmentArgs& args) {
  if (args.prompts.empty() && args.boxes.empty() && args.points.empty() && !args.everything) {
    throw Error(ErrorCode::kInvalidArgument,
                "no prompt: give --prompt TEXT (repeatable) and/or --box x0,y0,x1,y1 "
                "(--point X,Y or --everything with the interactive model)");
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
  if (prompts.empty()) prompts.push_back({"", boxes});     // box-only prompt
  for (const auto& spec : args.points) parse_point(spec);  // a typo fails before the model loads

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
  model_options.precision = precision_of(args.models.precision);
  const std::shared_ptr<const Model> model = Model::load(model_dir, model_options);
  std::vector<InteractivePrompt> objects;
  std::optional<ImageSegmenter> text;  // the facade of the model's kind
  std::optional<InteractiveSegmenter> clicks;
  if (model->kind() == ModelKind::kInteractive) {
    objects = interactive_prompts(args);
    clicks.emplace(model);
  } else if (!args.points.empty() || args.everything || args.multimask) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(args.everything  ? "--everything"
                            : args.multimask ? "--multimask"
                                             : "--point") +
                    " needs SAM3's interactive model (onnx-community/sam3-tracker-ONNX: vision_encoder.onnx and "
                    "prompt_encoder_mask_decoder.onnx); " +
                    model_dir.string() + " holds a text-prompted " + layout_name(model->layout()) + " model");
  } else {
    text.emplace(model);
  }

  // Everything is computed before anything is written: a bad image leaves no partial output.
  std::vector<ImageRun> runs;
  Totals totals;
  for (const auto& path : args.images) {
    ImageRun run{path, load_image(path, load_options), {}, {}};
    const auto embedding = model->encode(run.image);
    totals.preprocess += embedding.preprocess_ms();
    totals.encode_image += embedding.encode_ms();
    if (text) {
      run.results = text->segment_all(embedding, prompts, args.options);  // with the family's rule across them
      for (const auto& result : run.results) {
        totals.encode_text += result.timings.encode_text_ms;
        totals.decode += result.timings.decode_ms;
        totals.postprocess += result.timings.postprocess_ms;
        run.entries.push_back(prompt_result_json(result, args.masks));
      }
    } else if (args.everything) {
      EverythingOptions everything = args.everything_options;
      everything.min_area = args.options.min_area;
      auto result = clicks->segment_everything(run.image, embedding, everything);
      result.prompt.text = "everything";
      totals.decode += result.timings.decode_ms;
      totals.postprocess += result.timings.postprocess_ms;
      run.entries.push_back(everything_result_json(result.instances, args.masks));
      run.results.push_back(std::move(result));
    } else {
      const auto objects_out = clicks->segment_objects(embedding, objects, {args.multimask, {}});
      totals.decode += objects_out.front().timings.decode_ms;
      totals.postprocess += objects_out.front().timings.postprocess_ms;
      for (size_t k = 0; k < objects_out.size(); ++k) {
        run.entries.push_back(object_result_json(objects_out[k], args.masks));
        PromptResult as_files;  // the same folders as text prompts: masks and an overlay per object
        as_files.prompt.text = "object " + std::to_string(k + 1);
        as_files.instances = objects_out[k].masks;
        run.results.push_back(std::move(as_files));
      }
    }
    runs.push_back(std::move(run));
  }

  Answer answer;
  answer.model = answer_model(*model);
  for (auto& run : runs) answer.images.push_back({run.path, "", run.image.width, run.image.height, std::move(run.entries)});
  answer.timings_ms = {
      model->load_ms(), totals.preprocess, totals.encode_image, totals.encode_text, totals.decode, totals.postprocess, false};

  if (update) {
    for (size_t i = 0; i < runs.size(); ++i) {
      const Answer image_answer{answer.model, answer.interactive_model, {answer.images[i]}, answer.timings_ms};  // narrowed
      write_image_outputs(image_dirs[i], runs[i], image_answer);
    }
    write_file_atomic(update->stage("result.json"), answer_json(answer) + "\n");
    update->retire_unstaged();  // an earlier run's other images: the folder is this run's answer
    update->commit();
  }
  if (args.json) {
    std::cout << answer_json(answer) << std::endl;
    return kOk;
  }
  for (const auto& run : runs) {
    for (const auto& r : run.results) {
      std::printf("%s  %-24s %zu instance%s", run.path.c_str(),
                  ("\"" + (r.prompt.text.empty() ? std::string("boxes") : r.prompt.text) + "\"").c_str(), r.instances.size(),
                  r.instances.size() == 1 ? "" : "s");
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
  cmd->add_option("--box", args->boxes,
                  "Exemplar box x0,y0,x1,y1[,neg] in pixels; repeatable; applies to every prompt "
                  "(interactive model: the object's box; boxes alone are one object each)");
  auto* point = cmd->add_option("--point", args->points, "Interactive model: a click X,Y[,neg] on the object; repeatable (one object)");
  auto* multimask = cmd->add_flag("--multimask", args->multimask, "Interactive model: all three candidate masks, best first");
  auto* everything = cmd->add_flag("--everything", args->everything, "Interactive model: every object (SAM's automatic mask generator)");
  // --everything prompts the whole image: a click, box or text beside it would be dropped unsaid.
  everything->excludes(point)->excludes(multimask)->excludes("--box")->excludes("--prompt");
  cmd->add_option("--points-per-side", args->everything_options.points_per_side, "--everything: grid points per side")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--pred-iou", args->everything_options.pred_iou_threshold, "--everything: keep predicted IoU above this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--stability", args->everything_options.stability_threshold, "--everything: keep stability scores from this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--box-nms", args->everything_options.box_nms_threshold, "--everything: box NMS IoU threshold")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--crop-layers", args->everything_options.crop_layers,
                  "--everything: SAM's crop layers for small objects (layer i encodes 2^i x 2^i crops)")
      ->check(CLI::Range(0, sam3::kMaxCropLayers))
      ->capture_default_str();
  for (const char* name : {"--points-per-side", "--pred-iou", "--stability", "--box-nms", "--crop-layers"})
    cmd->get_option(name)->needs(everything);
  cmd->add_option("-t,--threshold", args->options.score_threshold, "Keep instances scoring above this")
      ->check(number_in(0, 1))
      ->capture_default_str();
  cmd->add_option("--mask-threshold", args->options.mask_threshold, "Mask probability cut")->check(number_in(0, 1))->capture_default_str();
  cmd->add_option("--min-area", args->options.min_area, "Drop instances with fewer mask pixels")
      ->check(number_in(0, static_cast<double>(kMaxMinArea)));
  cmd->add_option("--max-instances", args->options.max_instances, "Keep at most N per prompt (0 = all)")
      ->check(number_in(0, kMaxMaxInstances));
  cmd->add_option("--nms", args->options.nms_iou, "Mask-IoU NMS threshold (0 = off, as the official processor)")->check(number_in(0, 1));
  cmd->add_option("--max-pixels", args->max_pixels, "Refuse images with more pixels")->capture_default_str()->check(number_above(0));
  cmd->add_option("--threads", args->threads, "ONNX Runtime intra-op threads (0 = one per core)")->check(number_in(0));
  cmd->add_option("-o,--out", args->out, "Write masks, overlays and result.json under DIR");
  cmd->add_flag("--json", args->json, "Print the result JSON on stdout (and nothing else)");
  cmd->add_option("--mask-format", args->mask_format, "Masks in the result JSON: rle (COCO), png (base64) or polygon")
      ->check(CLI::IsMember({"rle", "png", "polygon"}))
      ->capture_default_str();
  cmd->add_option("--polygon-tolerance", args->masks.polygon_tolerance,
                  "--mask-format polygon: simplification in pixels (0 keeps every boundary pixel)")
      ->check(number_in(0, kMaxPolygonTolerance))
      ->capture_default_str();
  cmd->callback([args, &run] {
    args->masks.format = *mask_format_named(args->mask_format);  // one of the names checked above
    run = [args] { return run_segment(*args); };
  });
}

}  // namespace sam3::cli
