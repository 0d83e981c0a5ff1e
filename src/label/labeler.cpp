#include "sam3/labeler.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "core/timer.h"
#include "label/output_entries.h"
#include "label/records.h"
#include "label/shard_set.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "sam3/log.h"
#include "sam3/output_folder.h"

namespace sam3 {
namespace {

namespace fs = std::filesystem;

// What the reader thread hands to the labeling loop.
struct Loaded {
  LabelInput input;
  label::SourceIdentity source;
  std::optional<Image> image;
  std::optional<PreparedImage> prepared;  // when the image will not be tiled
  std::optional<Error> error;
};

// Decodes (and resizes) upcoming images on its own thread, at most `depth` ahead.
class Prefetcher {
 public:
  Prefetcher(std::vector<LabelInput> inputs, const Model& model, const LabelConfig& config, size_t depth)
      : inputs_(std::move(inputs)), depth_(depth), thread_([this, &model, &config] { work(model, config); }) {}

  ~Prefetcher() {
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  std::optional<Loaded> next() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return !ready_.empty() || finished_; });
    if (ready_.empty()) return std::nullopt;
    Loaded l = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    return l;
  }

 private:
  void work(const Model& model, const LabelConfig& config) {
    for (const auto& input : inputs_) {
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return ready_.size() < depth_ || cancelled_; });
        if (cancelled_) break;
      }
      Loaded l{input, {}, std::nullopt, std::nullopt, std::nullopt};
      try {
        const auto bytes = read_image_file(input.path, config.load);
        l.source = label::source_identity_of_bytes(input.path, bytes);
        l.image = decode_image(bytes, input.path.string(), config.load);
        if (!label::will_tile(model, l.image->width, l.image->height, config.tiles)) l.prepared = model.prepare(*l.image);
      } catch (const Error& e) {
        l.error = e;
      } catch (const std::bad_alloc&) {  // nothing may escape this thread
        l.error = Error(ErrorCode::kImageTooLarge, input.path.string() + ": not enough memory to decode this image");
      } catch (const std::exception& e) {
        l.error = Error(ErrorCode::kImageCorrupt, input.path.string() + ": cannot be read (" + e.what() + ")");
      }
      std::lock_guard lock(mutex_);
      ready_.push_back(std::move(l));
      cv_.notify_all();
    }
    std::lock_guard lock(mutex_);
    finished_ = true;
    cv_.notify_all();
  }

  std::vector<LabelInput> inputs_;
  size_t depth_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Loaded> ready_;
  bool finished_ = false, cancelled_ = false;
  std::thread thread_;
};

constexpr std::pair<LabelFormat, const char*> kFormatEntries[] = {
    {kFormatCoco, "coco.json"}, {kFormatYolo, "yolo"}, {kFormatMasks, "masks"}, {kFormatGeoJson, "geojson"}};

// Stages the combined outputs of `formats` (which refuses, before any image is labelled, an
// entry that is not sam3's or a folder of sam3's holding a user's file) and retires the other
// outputs of `sam3 label` an earlier run left, to go with the same swap.
void stage_label_outputs(OutputFolderUpdate& update, unsigned formats) {
  std::string refused;  // every entry in the way, named at once
  const auto stage = [&](const char* entry) {
    try {
      update.stage(entry);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kIo) throw;
      refused += (refused.empty() ? "" : "; ") + std::string(e.what());
    }
  };
  stage("failures.json");
  for (const auto& [format, entry] : kFormatEntries) {
    if (formats & format) stage(entry);
  }
  if (!refused.empty()) throw Error(ErrorCode::kIo, refused);
  label::retire_other_label_outputs(update);
  if (formats & kFormatYolo) {  // its images/ is made of links: a file system without them fails now
    const fs::path probe = update.stage("yolo").parent_path() / ".sam3-link-probe";
    std::error_code ec;
    fs::create_symlink("target", probe, ec);
    std::error_code ignored;
    fs::remove(probe, ignored);
    if (ec) {
      throw Error(ErrorCode::kIo, update.root().string() + ": cannot make symbolic links there (" + ec.message() +
                                      "), which YOLO's images/ folder is made of: write the outputs on another file "
                                      "system, or leave out --format yolo");
    }
  }
}

// Rebuilds coco.json, failures.json and the per-format folders from the records of the
// folder's inputs, all swapped in together (never a mix of two runs, no stale files). Returns
// how many images failures.json lists.
std::size_t write_label_outputs(OutputFolderUpdate& update) {
  const fs::path& out = update.root();
  const auto config = label::read_config(out);
  const auto names = label::read_input_names(out);
  label::OutputContext ctx;
  for (const auto& c : config["categories"]) ctx.category_names.push_back(c["name"]);
  const auto& outputs = config["outputs"];
  ctx.formats = outputs.value("formats", 1u);
  ctx.coco_polygons = outputs.value("coco_polygons", false);
  ctx.simplify = outputs.value("simplify", 1.0);
  ctx.semantic = outputs.value("semantic", false);
  auto items = label::read_items(out, config["hash"], names, ctx.category_names.size());
  label::assign_output_stems(items);
  stage_label_outputs(update, ctx.formats);
  ctx.out = update.stage("failures.json").parent_path();
  ctx.root = out;
  if (ctx.formats & kFormatCoco) label::write_coco(ctx, items);
  if (ctx.formats & kFormatYolo) label::write_yolo(ctx, items);
  if (ctx.formats & kFormatMasks) label::write_masks(ctx, items);
  if (ctx.formats & kFormatGeoJson) label::write_geojson(ctx, items);
  nlohmann::ordered_json failures = nlohmann::ordered_json::array();
  for (const auto& f : label::read_failures(out, names)) {
    failures.push_back({{"name", f.name}, {"path", f.path.string()}, {"code", f.code}, {"message", f.message}});
  }
  write_file_atomic(ctx.out / "failures.json", failures.dump(2) + "\n");
  update.commit();
  return failures.size();
}

// Locks the folder and claims the record folders (refusing a folder that is not sam3's).
std::unique_ptr<OutputFolderUpdate> open_label_folder(const fs::path& out) {
  auto update = std::make_unique<OutputFolderUpdate>(out);
  for (const char* entry : {"config.json", "inputs.json", "shard.json"}) update->claim(entry);
  for (const char* entry : {"items", "failed"}) remove_stale_temporaries(update->claim(entry));
  return update;
}

// Names of `names` for a message: the first few, then how many more.
std::string some_names(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 3) list += " and " + std::to_string(names.size() - 3) + " more";
  return list;
}

// The shards given to a merge: one configuration (checked by the caller), one input list, and
// every K of one N once.
void check_label_shards(const std::vector<fs::path>& shard_dirs) {
  std::vector<label::ShardNumber> numbers;
  std::optional<LabelShard> first;
  for (const auto& dir : shard_dirs) {
    const auto shard = label::read_shard(dir);
    if (!shard) {
      throw Error(ErrorCode::kInvalidArgument, dir.string() +
                                                   ": no shard record (shard.json), so it cannot be told which "
                                                   "share of which inputs it holds (a sam3 before 'label merge' "
                                                   "checked shards wrote it); run its 'sam3 label ... --shard "
                                                   "K/N --out " +
                                                   dir.string() +
                                                   "' again (finished images "
                                                   "are skipped), then merge");
    }
    if (first && shard->inputs_id != first->inputs_id) {
      throw Error(ErrorCode::kInvalidArgument,
                  dir.string() + " was cut from another list of inputs (" + std::to_string(shard->inputs) + " images) than " +
                      shard_dirs.front().string() + " (" + std::to_string(first->inputs) +
                      "): images were added, removed or renamed between the shards' runs; run every shard on the same inputs");
    }
    if (!first) first = shard;
    numbers.push_back({shard->k, shard->n, dir.string()});
  }
  label::check_shard_set(numbers);
}

}  // namespace

Labeler::Labeler(std::shared_ptr<const Model> model, LabelConfig config, fs::path out_dir)
    : model_(std::move(model)), config_(std::move(config)), out_(std::move(out_dir)) {
  if (config_.categories.empty()) throw Error(ErrorCode::kInvalidArgument, "no categories: give at least one prompt");
  const auto& tiles = config_.tiles;
  if (tiles.mode == TileOptions::Mode::kFixed && tiles.tile < kMinTile) {
    throw Error(ErrorCode::kInvalidArgument,
                "--tile " + std::to_string(tiles.tile) + ": a tile is at least " + std::to_string(kMinTile) + " pixels a side");
  }
  if (tiles.overlap < 0) throw Error(ErrorCode::kInvalidArgument, "--overlap " + std::to_string(tiles.overlap) + ": must be positive");
  label::check_categories_fit(*model_, config_.categories);
  label::check_categories_distinct(config_.categories);
  const auto json = label::config_json(config_, *model_);
  config_hash_ = json["hash"];
  folder_ = open_label_folder(out_);
  stage_label_outputs(*folder_, config_.formats);  // a user's file in the way is refused now, not after the work
  label::write_config(out_, json);
}

Labeler::~Labeler() = default;

LabelSummary Labeler::run(const std::vector<LabelInput>& inputs, const std::function<void(const LabelProgress&)>& progress,
                          const std::atomic<bool>* stop) {
  LabelSummary summary;
  summary.total = static_cast<int>(inputs.size());
  std::vector<std::string> names;
  for (const auto& in : inputs) names.push_back(in.name);
  label::write_input_names(out_, names);
  LabelShard shard = config_.shard;
  if (shard.inputs_id.empty() && shard.n == 1) shard = {1, 1, label::input_list_id(names), static_cast<std::int64_t>(names.size())};
  label::write_shard(out_, shard);
  std::vector<LabelInput> todo;
  for (const auto& in : inputs) {
    if (label::has_item(out_, in, config_hash_))
      ++summary.skipped;
    else
      todo.push_back(in);
  }
  LabelProgress p{summary.total, 0, summary.skipped, 0, 0, ""};
  if (progress) progress(p);
  const auto t0 = core::Clock::now();
  SegmentOptions segment = config_.segment;
  if (stop) segment.stop = StopToken::following(stop);  // also inside an image's encode and decodes
  {
    Prefetcher prefetch(todo, *model_, config_, 2);
    while (auto loaded = prefetch.next()) {
      if (stop && stop->load()) {
        summary.interrupted = true;
        break;
      }
      const auto& in = loaded->input;
      p.current = in.name;
      const auto record_failure = [&](const Error& e) {
        // One bad image never stops the batch; it is recorded and retried on the next run.
        if (e.code() == ErrorCode::kIo || e.code() == ErrorCode::kRuntime) log(LogLevel::kWarning, in.name + ": " + e.what());
        label::write_failure(out_, {in.name, in.path, error_code_name(e.code()), e.what()});
        ++summary.failed;
        ++p.failed;
      };
      try {
        if (loaded->error) throw *loaded->error;
        label::ItemRecord item{in.name, in.path, loaded->image->width, loaded->image->height, {}, loaded->source, {}};
        item.instances = label::label_image(model_, *loaded->image, config_.categories, segment, config_.tiles, nullptr,
                                            loaded->prepared ? &*loaded->prepared : nullptr);
        label::write_item(out_, item, config_hash_);
        label::remove_failure(out_, in.name);
        ++summary.processed;
      } catch (const Error& e) {
        if (e.code() == ErrorCode::kIo) throw;    // the output folder is unwritable: stop, records so far are kept
        if (e.code() == ErrorCode::kCancelled) {  // stopped mid-image: no record, the next run redoes it
          summary.interrupted = true;
          break;
        }
        record_failure(e);
      } catch (const std::bad_alloc&) {
        record_failure(Error(ErrorCode::kImageTooLarge, in.name + ": not enough memory to label this image"));
      } catch (const std::exception& e) {
        record_failure(Error(ErrorCode::kRuntime, in.name + ": " + e.what()));
      }
      ++p.done;
      const double s = core::ms_since(t0) / 1000.0;
      p.images_per_second = s > 0 ? p.done / s : 0;
      if (progress) progress(p);
    }
  }
  write_label_outputs(*folder_);
  return summary;
}

std::size_t merge_label_dirs(const std::vector<fs::path>& shard_dirs, const fs::path& out_dir, const LabelMergeOptions& options) {
  if (shard_dirs.empty()) throw Error(ErrorCode::kInvalidArgument, "give the shard folders to merge");
  const auto first = label::read_config(shard_dirs.front());
  std::vector<std::string> names;
  for (const auto& dir : shard_dirs) {
    const auto c = label::read_config(dir);
    if (c["hash"] != first["hash"]) {
      throw Error(ErrorCode::kInvalidArgument, dir.string() + ": made with other categories, settings or model than " +
                                                   shard_dirs.front().string() + "; shards must share one configuration");
    }
    for (auto& n : label::read_input_names(dir)) names.push_back(std::move(n));
  }
  check_label_shards(shard_dirs);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  auto folder = open_label_folder(out_dir);
  std::error_code ec;
  if (fs::exists(out_dir / "inputs.json", ec)) {  // an earlier run or merge: its images must not silently drop out
    std::vector<std::string> lost;
    for (const auto& n : label::read_input_names(out_dir)) {
      if (!std::binary_search(names.begin(), names.end(), n)) lost.push_back(n);
    }
    if (!lost.empty() && !options.allow_fewer) {
      throw Error(ErrorCode::kInvalidArgument,
                  out_dir.string() + " holds the labels of " + std::to_string(lost.size()) + " image" + (lost.size() == 1 ? "" : "s") +
                      " these shards do not have (" + some_names(lost) +
                      "); merging would drop them from its outputs: merge into a new folder, or give --allow-fewer to "
                      "replace it");
    }
  }
  stage_label_outputs(*folder, first.contains("outputs") ? first["outputs"].value("formats", 1u) : 1u);
  label::write_config(out_dir, first);
  std::set<std::string> labeled;  // a record beats a failure of the same image from another shard
  for (const auto& dir : shard_dirs) {
    if (fs::equivalent(dir, out_dir, ec)) continue;
    const auto shard_names = label::read_input_names(dir);
    for (const auto& item : label::read_items(dir, first["hash"], shard_names, first["categories"].size())) {
      label::write_item(out_dir, item, first["hash"]);
      label::remove_failure(out_dir, item.name);
      labeled.insert(item.name);
    }
    for (const auto& f : label::read_failures(dir, shard_names)) {
      if (!labeled.contains(f.name)) label::write_failure(out_dir, f);
    }
  }
  label::write_input_names(out_dir, names);
  const auto shard = label::read_shard(shard_dirs.front());  // checked above: every share of one input list
  label::write_shard(out_dir, {1, 1, shard->inputs_id, shard->inputs});
  return write_label_outputs(*folder);
}

}  // namespace sam3
