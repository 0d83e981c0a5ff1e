// tracks.json: the video's info, model and settings, and per frame its objects with COCO RLE
// masks. Frames are kept as JSON lines (frames.jsonl, also the record a resumed run reads
// back) and joined into one document at the end, streaming: memory stays one frame's.
#include <cmath>
#include <fstream>
#include <unistd.h>

#include "sam3/error.h"
#include "sam3/mask_encodings.h"
#include "video_io/append_file.h"
#include "video_io/partial_sink.h"
#include "video_io/record.h"

namespace sam3::video_io {
namespace {

namespace fs = std::filesystem;

double round_to(double v, double scale) { return std::round(v * scale) / scale; }

class JsonSink final : public PartialSink {
 public:
  JsonSink(const SinkContext& context, bool final_file) : context_(context), final_file_(final_file) {}

  std::vector<std::string> entries() const override {
    return final_file_ ? std::vector<std::string>{kTracksFile} : std::vector<std::string>{};
  }

  void open(const fs::path& work, const nlohmann::json* saved, std::int64_t) override {
    fs::create_directories(work);
    lines_.open(work / kRecordFile, saved ? saved->value("bytes", std::int64_t{0}) : 0);
  }

  void write(const FrameOutput& out) override {
    nlohmann::json objects = nlohmann::json::array();
    for (const auto& o : out.result.objects) {
      objects.push_back({{"id", o.id},
                         {"prompt", o.prompt},
                         {"score", round_to(o.score, 1e4)},
                         {"box", {round_to(o.box.x0, 100), round_to(o.box.y0, 100), round_to(o.box.x1, 100), round_to(o.box.y1, 100)}},
                         {"area", o.mask.area()},
                         {"mask", {{"size", {o.mask.height(), o.mask.width()}}, {"counts", rle_encode(o.mask)}}}});
    }
    // Microseconds: 9 / 30 s reads 0.3, not 0.30000000000000004.
    nlohmann::json line = {{"index", out.result.index}, {"time_s", round_to(out.result.time_s, 1e6)}, {"objects", std::move(objects)}};
    lines_.append(line.dump() + "\n");
  }

  nlohmann::json checkpoint() override { return {{"bytes", lines_.sync()}}; }

  void finish(OutputFolderUpdate& update) override {
    lines_.sync();
    lines_.close();
    if (!final_file_) return;
    const fs::path target = update.stage(kTracksFile);
    {
      // frame_count: the frames read, as "frames" lists them. The source's count before reading
      // may have been an estimate (Matroska's duration times its rate: 358 for 30 frames of a
      // variable rate) or counted frames that could not be decoded.
      std::int64_t frames = 0;
      {
        std::ifstream count(lines_.path(), std::ios::binary);
        std::string line;
        while (std::getline(count, line)) frames += !line.empty();
      }
      std::ofstream out(target, std::ios::binary | std::ios::trunc);
      nlohmann::json video = {{"name", context_.info.name},
                              {"width", context_.info.width},
                              {"height", context_.info.height},
                              {"fps", context_.info.fps},
                              {"frame_count", frames}};
      out << "{\n\"format\": \"sam3-video-tracks\",\n\"version\": 1,\n\"video\": " << video.dump()
          << ",\n\"labels\": " << nlohmann::json(context_.labels).dump() << ",\n\"model\": " << context_.model.dump()
          << ",\n\"settings\": " << context_.settings.dump() << ",\n\"frames\": [";
      std::ifstream in(lines_.path(), std::ios::binary);
      std::string line;
      bool first = true;
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        out << (first ? "\n" : ",\n") << line;
        first = false;
      }
      out << "\n]\n}\n";
      out.flush();
      if (!out) throw Error(ErrorCode::kIo, target.string() + ": cannot write (disk full?)");
    }
    sync_file(target);
  }

 private:
  SinkContext context_;
  bool final_file_;
  AppendFile lines_;
};

}  // namespace

std::unique_ptr<PartialSink> make_json_sink(const SinkContext& context, bool final_file) {
  return std::make_unique<JsonSink>(context, final_file);
}

}  // namespace sam3::video_io
