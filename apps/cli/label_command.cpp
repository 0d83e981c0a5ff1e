// sam3 label: auto-label folders into COCO, YOLO-seg, PNG masks and GeoJSON; resumable,
// shardable, tiled for large images. `sam3 label merge` combines shard outputs.
#include <csignal>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli_common.h"
#include "label_map.h"
#include "model_resolver.h"
#include "number_options.h"
#include "progress_bar.h"
#include "sam3/labeler.h"
#include "sam3/log.h"
#include "sam3/prompt_json.h"
#include "sam3/video_sources.h"
#include "track_batch.h"
#include "track_job.h"

namespace sam3::cli {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};

void on_interrupt(int) {
  g_stop = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends at once
  std::signal(SIGTERM, SIG_DFL);
}

struct LabelArgs {
  ModelSelection models;
  std::vector<std::string> inputs;
  std::vector<std::string> prompts;
  std::string box_prompt_file;
  std::string formats = "coco";
  std::string out;
  bool polygons = false, semantic = false;
  double simplify = 1.0;
  std::string shard = "1/1";
  std::string tile = "off";
  int overlap = 0;
  int threads = 0;
  LabelConfig config;
  std::vector<std::string> merge_dirs;
  bool allow_fewer = false;                          // merge: replace a folder covering images the shards do not
  std::string bands, scale, target_crs, raster_out;  // maps
  double gsd = 0;
  bool allow_network = false;
  bool everything = false;
  EverythingOptions everything_options;
  bool video = false;                      // --video: the input is a folder of videos (track_batch.h)
  bool formats_given = false;              // --format on the command line (else each mode's default)
  std::vector<std::string> image_options;  // options for images given on the command line
};

// A folder of videos, as `sam3 track FOLDER` does it (the same job, shards and skipping of
// finished videos), so that a Slurm array of `sam3 label --video --shard K/N` labels many videos.
int run_videos(const LabelArgs& a) {
  // Options that do not go together are usage errors (exit 2), as sam3 track's.
  const auto usage = [](const std::string& message) {
    print_error(message);
    return kUsage;
  };
  if (a.inputs.size() != 1) {
    return usage("--video takes one folder of video files, got " + std::to_string(a.inputs.size()) +
                 " inputs (sam3 track VIDEO for one video)");
  }
  if (!a.box_prompt_file.empty() || a.everything) {
    return usage("--video tracks text prompts (--prompt); objects clicked or boxed on a frame are sam3 track's --point and --box");
  }
  if (!a.image_options.empty()) {
    std::string names;
    for (const auto& o : a.image_options) names += (names.empty() ? "" : ", ") + o;
    return usage(names +
                 ": for images, not videos; the tracker's settings are sam3 track's (sam3 track FOLDER --shard K/N takes them all)");
  }
  if (a.prompts.empty()) return usage("--video needs a text to track: --prompt car");
  std::error_code ec;
  if (!fs::is_directory(a.inputs[0], ec) || list_video_files(a.inputs[0]).empty()) {
    throw Error(ErrorCode::kInvalidArgument, "--video: " + a.inputs[0] +
                                                 " is not a folder holding video files (mp4, mov, mkv, "
                                                 "webm, avi, ...)");
  }
  TrackArgs t;
  t.models = a.models;
  t.video = a.inputs[0];
  t.out = a.out;
  t.prompts = a.prompts;
  t.threads = a.threads;
  t.shard = a.shard;
  if (a.formats_given) t.formats = a.formats;                     // else sam3 track's default, json,davis
  if (const auto usage = track_usage_error(t); !usage.empty()) {  // as sam3 track: exit 2
    print_error(usage);
    return kUsage;
  }
  const auto [k, n] = parse_track_shard(t.shard);
  const auto job = make_track_job(t, &g_stop);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  return track_videos(t.video, t.out, job, k, n);
}

std::vector<LabelCategory> read_box_prompts(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorCode::kInvalidArgument, file + ": cannot open the box-prompt file");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  const auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 file + ": " + why + R"(; expected [{"name": "car", "text": "car", "boxes": [[x0, y0, x1, y1, "pos"|"neg"]]}])");
  };
  if (j.is_discarded()) throw bad("not valid JSON");
  if (!j.is_array()) throw bad("not a JSON list");
  std::vector<LabelCategory> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& c = j[i];
    if (!c.is_object()) throw bad("an entry is not an object");
    LabelCategory cat;
    // Text and boxes through sam3's one prompt codec (its errors name the field: [0].boxes[1][4]).
    nlohmann::json text_and_boxes = c;
    text_and_boxes.erase("name");
    if (text_and_boxes.contains("text") || text_and_boxes.contains("boxes")) {
      try {
        cat.prompt = parse_prompts_json("[" + text_and_boxes.dump() + "]", "")[0].prompt;
      } catch (const Error& e) {
        std::string where = e.what();
        if (where.starts_with("[0]")) where = "[" + std::to_string(i) + "]" + where.substr(3);
        throw bad(where);
      }
    }
    cat.name = c.value("name", cat.prompt.text);
    if (cat.name.empty()) throw bad("an entry has neither name nor text");
    out.push_back(std::move(cat));
  }
  return out;
}

// Terminal: one redrawn line; otherwise a plain line every 10 seconds.
class LabelProgressPrinter {
 public:
  LabelProgressPrinter() : tty_(::isatty(STDERR_FILENO) != 0) {}
  void operator()(const LabelProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    const bool last = p.done + p.skipped >= p.total;
    if (!tty_ && !last && now - last_ < std::chrono::seconds(10)) return;
    if (tty_ && !last && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const int finished = p.done + p.skipped;
    const int remaining = p.total - finished;
    char line[256];
    std::snprintf(line, sizeof line, "%d/%d images%s, %.2f img/s, %s", finished, p.total,
                  p.failed ? (" (" + std::to_string(p.failed) + " failed)").c_str() : "", p.images_per_second,
                  eta_text(remaining, p.done > 0 ? p.images_per_second : 0).c_str());
    if (tty_) {
      const int pct = p.total ? 100 * finished / p.total : 100;
      std::fprintf(stderr, "\r[%-20s] %s  %-30.30s", std::string(static_cast<size_t>(pct / 5), '#').c_str(), line, p.current.c_str());
      if (last) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "sam3 label: %s\n", line);
    }
    std::fflush(stderr);
  }

 private:
  bool tty_;
  std::chrono::steady_clock::time_point last_{};
};

// Rasters to georeferenced vectors (label_map.h): tiles read window by window.
int run_map(const LabelArgs& a) {
  MapLabelJob job;
  job.rasters = map_raster_inputs(a.inputs, a.out);
  job.categories = a.config.categories;
  job.formats = map_formats(a.formats);
  job.out = a.out;
  job.segment = a.config.segment;
  if (a.tile != "off" && a.tile != "auto") job.tile = parse_int(a.tile, "--tile", kMinTile, kMaxMapTile);
  job.overlap = a.overlap;
  job.raster = parse_raster_options(a.bands, a.scale);
  job.raster.gsd_m = a.gsd;
  job.raster.allow_network = a.allow_network;
  int k = 1, n = 1, used = 0;
  if (std::sscanf(a.shard.c_str(), "%d/%d%n", &k, &n, &used) != 2 || used != static_cast<int>(a.shard.size()) || k < 1 || k > n) {
    throw Error(ErrorCode::kInvalidArgument, "--shard must be K/N with 1 <= K <= N, e.g. 3/8, got '" + a.shard + "'");
  }
  job.shard = k - 1;
  job.shards = n;
  job.target_crs = a.target_crs;
  job.raster_out = a.raster_out;
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  return run_map_label(job, a.models, a.threads, &g_stop);
}

// A georeferenced raster's GeoJSON is the map path's (through GDAL, in its CRS), whatever the
// formats say: the image path would write pixel coordinates with no CRS. The rasters when every
// input is one and GeoJSON is the only format; refused, naming one, when they come with plain
// images or image formats; nullopt when there is none.
std::optional<std::vector<std::string>> georeferenced_inputs(const std::vector<LabelInput>& all, unsigned formats) {
  std::vector<std::string> rasters;
  std::string plain;
  for (const auto& in : all) {
    if (is_georeferenced(in.path))
      rasters.push_back(in.path.string());
    else if (plain.empty())
      plain = in.path.string();
  }
  if (rasters.empty()) return std::nullopt;
  if (formats != kFormatGeoJson) {
    throw Error(ErrorCode::kInvalidArgument, rasters.front() +
                                                 " is a georeferenced raster: its GeoJSON is written through GDAL in its CRS, with the "
                                                 "map outputs (gpkg, fgb, shp, geojson), while coco, yolo and masks are image outputs in "
                                                 "pixels: run --format geojson and the image formats apart");
  }
  if (!plain.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                rasters.front() + " is a georeferenced raster (GeoJSON in its CRS, through GDAL) and " + plain +
                    " a plain image (GeoJSON in pixel or world-file coordinates): label them in separate runs");
  }
  return rasters;
}

int run_label(LabelArgs& a) {
  if (a.inputs.empty()) throw Error(ErrorCode::kInvalidArgument, "no input: give image files, folders or list files");
  if (a.out.empty()) throw Error(ErrorCode::kInvalidArgument, "give --out DIR for the labels");
  if (a.video) return run_videos(a);
  for (const auto& p : a.prompts) {
    if (p.find_first_not_of(" \t") == std::string::npos) throw Error(ErrorCode::kInvalidArgument, "--prompt is empty");
    a.config.categories.push_back({p, {p, {}}, std::nullopt});
  }
  if (!a.box_prompt_file.empty()) {
    for (auto& c : read_box_prompts(a.box_prompt_file)) a.config.categories.push_back(std::move(c));
  }
  if (a.everything) {
    if (!a.config.categories.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--everything runs on SAM3's interactive model, which takes no --prompt or "
                  "--box-prompt: label the prompts with a text model in a run of their own");
    }
    a.config.categories.push_back({"object", {}, a.everything_options});
  }
  if (a.config.categories.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "no category: give --prompt TEXT, --box-prompt FILE or --everything");
  }
  if (asks_for_maps(a.formats)) return run_map(a);
  a.config.formats = parse_label_formats(a.formats);
  const auto all = collect_label_inputs(a.inputs, a.out, /*allow_none=*/true);
  if (all.empty()) {
    for (const auto& input : a.inputs) {  // a folder of videos given as images: say what would label it
      std::error_code ec;
      if (!fs::is_directory(input, ec)) continue;
      if (const auto videos = list_video_files(input); !videos.empty()) {
        throw Error(ErrorCode::kInvalidArgument, input + " holds no image but " + std::to_string(videos.size()) + " video file" +
                                                     (videos.size() == 1 ? "" : "s") +
                                                     ": add --video to track them (sam3 track's outputs, a folder each)");
      }
    }
    collect_label_inputs(a.inputs, a.out);  // throws the library's "no images" naming the inputs
  }
  if (a.config.formats & kFormatGeoJson) {
    if (auto rasters = georeferenced_inputs(all, a.config.formats)) {
      a.inputs = std::move(*rasters);
      return run_map(a);
    }
    if (sam3::log_level() < LogLevel::kError) {
      std::fprintf(stderr,
                   "sam3 label: note: geojson/ will be in pixel coordinates (x right, y down), or in the map "
                   "coordinates of an image's world file (.pgw, .jgw, .wld, ...), with no CRS in either case%s\n",
                   maps_built() ? "" : "; this sam3 was built without maps (GDAL), so a GeoTIFF's own georeferencing is not read");
    }
  }
  a.config.coco_polygons = a.polygons;
  a.config.semantic = a.semantic;
  a.config.simplify = a.simplify;
  if (a.tile == "auto") {
    a.config.tiles.mode = TileOptions::Mode::kAuto;
  } else if (a.tile != "off") {
    a.config.tiles.mode = TileOptions::Mode::kFixed;
    a.config.tiles.tile = parse_int(a.tile, "--tile (auto, off or a size in pixels)", kMinTile);
  }
  a.config.tiles.overlap = a.overlap;
  int k = 1, n = 1, used = 0;
  if (std::sscanf(a.shard.c_str(), "%d/%d%n", &k, &n, &used) != 2 || used != static_cast<int>(a.shard.size())) {
    throw Error(ErrorCode::kInvalidArgument, "--shard must be K/N, e.g. 3/8, got '" + a.shard + "'");
  }
  a.config.shard = label_shard(all, k, n);  // recorded, so that a merge takes every shard of this run
  const auto inputs = shard_label_inputs(all, k, n);

  ModelOptions mo;
  mo.providers = execution_providers(a.models);
  mo.intra_op_threads = a.threads;
  mo.precision = precision_of(a.models.precision);
  auto model = Model::load(resolve_model_dir(a.models), mo);
  // Taken before the Labeler claims the folder (its lock, config.json): a Ctrl-C from then on
  // stops between images and releases the lock, never kills the run with the lock held.
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  Labeler labeler(model, a.config, a.out);
  LabelProgressPrinter printer;
  const bool quiet = sam3::log_level() >= LogLevel::kError;  // -q: only errors on stderr
  const auto s = labeler.run(inputs, quiet ? std::function<void(const LabelProgress&)>() : std::ref(printer), &g_stop);
  std::printf("%d image%s: %d labeled, %d already done, %d failed%s -> %s\n", s.total, s.total == 1 ? "" : "s", s.processed, s.skipped,
              s.failed, s.interrupted ? ", interrupted" : "", a.out.c_str());
  if (s.failed) std::printf("failures are listed in %s\n", (fs::path(a.out) / "failures.json").c_str());
  if (s.interrupted) return 130;
  return s.failed ? kFailure : kOk;
}

}  // namespace

void add_label_command(CLI::App& app, Runner& run) {
  auto args = std::make_shared<LabelArgs>();
  auto* cmd = app.add_subcommand("label", "Auto-label images into COCO, YOLO-seg, PNG masks and GeoJSON (resumable)");
  cmd->footer(
      "Rerunning the same command skips finished images. Shards: run --shard K/N for K = 1..N (a Slurm array\n"
      "or Kubernetes Indexed Job), then 'sam3 label merge SHARD_DIR... --out DIR'.");
  add_model_options(*cmd, args->models);
  auto& c = args->config;
  cmd->add_option("inputs", args->inputs, "Image files, folders (recursive) or list files (.txt, one path per line)");
  cmd->add_option("-p,--prompt", args->prompts, "A category to find, e.g. car; repeatable");
  cmd->add_option("--box-prompt", args->box_prompt_file, "JSON list of categories with exemplar boxes")->check(CLI::ExistingFile);
  auto* everything = cmd->add_flag("--everything", args->everything,
                                   "Interactive model: every object, category \"object\" (SAM's automatic mask generator)");
  auto& e = args->everything_options;
  cmd->add_option("--points-per-side", e.points_per_side, "--everything: grid points per side")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--pred-iou", e.pred_iou_threshold, "--everything: keep predicted IoU above this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--stability", e.stability_threshold, "--everything: keep stability scores from this")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--box-nms", e.box_nms_threshold, "--everything: box NMS IoU threshold")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--crop-layers", e.crop_layers, "--everything: SAM's crop layers for small objects (layer i encodes 2^i x 2^i crops)")
      ->check(CLI::Range(0, sam3::kMaxCropLayers))
      ->capture_default_str();
  for (const char* name : {"--points-per-side", "--pred-iou", "--stability", "--box-nms", "--crop-layers"})
    cmd->get_option(name)->needs(everything);
  auto* formats = cmd->add_option("--format", args->formats,
                                  "Outputs: coco,yolo,masks,geojson for images; gpkg,fgb,shp[,geojson] for georeferenced rasters (maps); "
                                  "json,davis,mots,overlay for --video (default json,davis)")
                      ->capture_default_str();
  cmd->add_flag("--video", args->video,
                "The input is a folder of video files: each is tracked as sam3 track does (SAM 3.1's bundle) into "
                "OUT/<video name>/; --shard splits the videos");
  cmd->add_option("--bands", args->bands, "Maps: raster bands as red,green,blue (or one band), e.g. 4,3,2");
  cmd->add_option("--scale", args->scale, "Maps: band values to 8 bits: auto, minmax, percentile:2,98 or MIN,MAX");
  cmd->add_option("--gsd", args->gsd, "Maps: resample to this ground sample distance in metres first (e.g. 0.3)")->check(number_above(0));
  cmd->add_flag("--allow-network-rasters", args->allow_network,
                "Maps: let GDAL read /vsicurl/, /vsis3/, http(s):// ... rasters (and VRT sources); local only by default");
  cmd->add_option("--raster-out", args->raster_out, "Maps: also a class raster aligned with the input, e.g. classes.tif");
  cmd->add_option("--t-srs", args->target_crs, "Maps: write the vectors in this CRS (e.g. EPSG:4326); default the raster's");
  cmd->add_option("-o,--out", args->out, "Output folder");
  cmd->add_flag("--polygons", args->polygons, "COCO segmentation as polygons instead of RLE");
  cmd->add_option("--simplify", args->simplify, "Polygon simplification tolerance in pixels")
      ->capture_default_str()
      ->check(number_in(0, 100));
  cmd->add_flag("--semantic", args->semantic, "Also write one union mask per category (masks format)");
  cmd->add_option("-t,--threshold", c.segment.score_threshold, "Keep instances scoring above this")
      ->capture_default_str()
      ->check(number_in(0, 1));
  cmd->add_option("--mask-threshold", c.segment.mask_threshold, "Mask probability cut")->check(number_in(0, 1));
  cmd->add_option("--min-area", c.segment.min_area, "Drop instances with fewer mask pixels")
      ->check(number_in(0, static_cast<double>(kMaxMinArea)));
  cmd->add_option("--max-instances", c.segment.max_instances, "Keep at most N per category and tile (0 = all)")
      ->check(number_in(0, kMaxMaxInstances));
  cmd->add_option("--nms", c.segment.nms_iou, "Mask-IoU NMS threshold (0 = off)")->check(number_in(0, 1));
  cmd->add_option("--shard", args->shard, "Take share K of N of the inputs (deterministic), e.g. 2/8")->capture_default_str();
  cmd->add_option("--tile", args->tile, "off, auto (only images over twice the model input) or a tile size in pixels")
      ->capture_default_str();
  cmd->add_option("--overlap", args->overlap, "Pixels shared by neighbouring tiles (auto: tile/8)")->check(number_in(0));
  cmd->add_option("--max-pixels", c.load.max_pixels, "Refuse larger images")->capture_default_str()->check(number_above(0));
  cmd->add_option("--threads", args->threads, "ONNX Runtime intra-op threads")->check(number_in(0));
  cmd->callback([args, &run, cmd, formats] {
    args->formats_given = formats->count() > 0;
    for (const char* name :
         {"--threshold", "--mask-threshold", "--min-area", "--max-instances", "--nms", "--polygons", "--simplify", "--semantic", "--tile",
          "--overlap", "--max-pixels", "--bands", "--scale", "--gsd", "--raster-out", "--t-srs", "--allow-network-rasters"}) {
      if (const auto* o = cmd->get_option_no_throw(name); o && o->count() > 0) args->image_options.push_back(name);
    }
    if (!run) run = [args] { return run_label(*args); };
  });

  auto* merge = cmd->add_subcommand("merge", "Combine shard output folders into one (same categories)");
  merge->add_option("SHARD_DIR", args->merge_dirs, "Shard output folders")->required()->check(CLI::ExistingDirectory);
  merge->add_option("-o,--out", args->out, "Merged output folder")->required();
  merge->add_flag("--allow-fewer", args->allow_fewer,
                  "Replace an output folder whose labels cover images these shards do not (they drop out of its "
                  "outputs); refused otherwise");
  merge->callback([args, &run] {
    run = [args] {
      if (is_map_shard_dir(args->merge_dirs.front())) return run_map_merge(args->merge_dirs, args->out);
      std::vector<fs::path> dirs(args->merge_dirs.begin(), args->merge_dirs.end());
      const auto failed = merge_label_dirs(dirs, args->out, {args->allow_fewer});
      std::printf("merged %zu folder%s -> %s\n", dirs.size(), dirs.size() == 1 ? "" : "s", args->out.c_str());
      if (failed > 0) {  // as a single run ends: images that failed in a shard fail the merge too
        std::printf("%zu image%s failed in the shards: listed in %s\n", failed, failed == 1 ? "" : "s",
                    (fs::path(args->out) / "failures.json").c_str());
        return static_cast<int>(kFailure);
      }
      return static_cast<int>(kOk);
    };
  });
}

}  // namespace sam3::cli
