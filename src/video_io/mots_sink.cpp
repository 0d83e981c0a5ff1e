// MOTS, both ways it is written (https://www.vision.rwth-aachen.de/page/mots):
//   mots.txt  one line per object and frame: "time_frame id class_id img_height img_width rle",
//             id = class_id * 1000 + object id, rle = COCO's compressed RLE string;
//   mots/     MOTS PNG as Datumaro's mots_png format and CVAT's "MOTS PNG 1.0" read it:
//             instances/frame_000000.png (16-bit grey, pixel = 1000 * (1 + label) + object id,
//             0 the background) and instances/labels.txt (one label per line).
// The label is the object's prompt (class_id = 1 + prompt); object ids must stay below 1000
// and labels at most 64 (16-bit pixels), the format's limits.
#include <string>

#include "core/codecs.h"
#include "sam3/error.h"
#include "sam3/files.h"
#include "sam3/mask_encodings.h"
#include "video_io/append_file.h"
#include "video_io/partial_sink.h"

namespace sam3::video_io {
namespace {

namespace fs = std::filesystem;
constexpr const char* kTextEntry = "mots.txt";
constexpr const char* kPngEntry = "mots";
constexpr int kMaxInstances = 1000;
constexpr int kMaxLabels = 64;  // 1000 * 65 + 999 > 65535

// An object's pixels left on top in the frame's label map (within its own mask's bounds).
Mask visible(const FrameOutput& out, const TrackedObject& object) {
  const TileRect b = object.mask.bounds();
  const size_t ww = static_cast<size_t>(b.x1 - b.x0), w = static_cast<size_t>(object.mask.width());
  std::vector<std::uint8_t> bytes(ww * static_cast<size_t>(b.y1 - b.y0), 0);
  for (int y = b.y0; y < b.y1; ++y) {
    const std::uint16_t* line = &out.labels[static_cast<size_t>(y) * w + static_cast<size_t>(b.x0)];
    for (size_t x = 0; x < ww; ++x) bytes[static_cast<size_t>(y - b.y0) * ww + x] = line[x] == object.id ? 1 : 0;
  }
  return Mask::from_window(object.mask.width(), object.mask.height(), b, bytes);
}

class MotsSink final : public PartialSink {
 public:
  explicit MotsSink(const SinkContext& context) : context_(context) {
    if (context.labels.size() > static_cast<size_t>(kMaxLabels)) {
      throw Error(ErrorCode::kInvalidArgument, "MOTS holds up to 64 labels (a PNG pixel is 1000 * class + object, in 16 bits); " +
                                                   std::to_string(context.labels.size()) +
                                                   " prompts were given: split them over runs, or leave mots out");
    }
  }
  std::vector<std::string> entries() const override { return {kTextEntry, kPngEntry}; }

  void open(const fs::path& work, const nlohmann::json* saved, std::int64_t last_committed_index) override {
    work_ = work;
    instances_ = work / kPngEntry / "instances";
    fs::create_directories(instances_);
    remove_frame_files_after(instances_, "frame_", ".png", last_committed_index);
    remove_stale_temporaries(instances_);
    text_.open(work / kTextEntry, saved ? saved->value("bytes", std::int64_t{0}) : 0);
  }

  void check(const FrameOutput& out) const override {
    for (const auto& object : out.result.objects) {
      if (object.id >= kMaxInstances) {
        throw Error(ErrorCode::kInvalidArgument,
                    "MOTS holds object ids up to 999 (id = class * 1000 + object); object " + std::to_string(object.id) +
                        " appeared in frame " + std::to_string(out.result.index) + ". The frames before it are kept: run " +
                        "again without mots in the formats (tracks.json holds ids up to 65535) and the run resumes there");
      }
      if (object.prompt >= kMaxLabels) {  // VideoOutputs refuses more labels before the first frame
        throw Error(ErrorCode::kInvalidArgument,
                    "MOTS PNGs hold up to 64 labels; object " + std::to_string(object.id) + " has prompt " + std::to_string(object.prompt));
      }
    }
  }

  void write(const FrameOutput& out) override {
    const int w = context_.info.width, h = context_.info.height;
    // One pass over the label map: each object's mask as painted, and the PNG's values.
    std::vector<int> slot(static_cast<size_t>(kMaxInstances), -1);
    std::vector<int> shown;                          // per object: its pixels on top in the label map
    for (const auto& object : out.result.objects) {  // by id, as painted; check() saw the ids and prompts
      slot[static_cast<size_t>(object.id)] = static_cast<int>(shown.size());
      shown.push_back(0);
    }
    std::vector<std::uint16_t> png(out.labels.size(), 0);
    for (size_t i = 0; i < out.labels.size(); ++i) {
      const int id = out.labels[i];
      if (id == 0) continue;
      const int k = slot[static_cast<size_t>(id)];
      ++shown[static_cast<size_t>(k)];
      png[i] = static_cast<std::uint16_t>(kMaxInstances * (1 + out.result.objects[static_cast<size_t>(k)].prompt) + id);
    }
    std::string lines;
    for (size_t k = 0; k < shown.size(); ++k) {
      if (!shown[k]) continue;  // hidden under other objects: MOTS has no empty masks
      const int id = out.result.objects[k].id, class_id = 1 + out.result.objects[k].prompt;
      lines += std::to_string(out.result.index) + " " + std::to_string(class_id * kMaxInstances + id) + " " + std::to_string(class_id) +
               " " + std::to_string(h) + " " + std::to_string(w) + " " + rle_encode(visible(out, out.result.objects[k])) + "\n";
    }
    write_file_atomic(instances_ / frame_file_name("frame_", out.result.index, 6, ".png"), core::encode_png(png.data(), w, h, 1, 16));
    text_.append(lines);
  }

  nlohmann::json checkpoint() override { return {{"bytes", text_.sync()}}; }

  void finish(OutputFolderUpdate& update) override {
    text_.sync();
    text_.close();
    std::string labels;
    for (const auto& label : context_.labels) labels += label + "\n";
    write_file_atomic(instances_ / "labels.txt", labels);
    link_into_stage(work_ / kTextEntry, update, kTextEntry);
    link_into_stage(work_ / kPngEntry, update, kPngEntry);
  }

 private:
  SinkContext context_;
  fs::path work_, instances_;
  AppendFile text_;
};

}  // namespace

std::unique_ptr<PartialSink> make_mots_sink(const SinkContext& context) { return std::make_unique<MotsSink>(context); }

}  // namespace sam3::video_io
