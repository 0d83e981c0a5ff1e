// davis/: one indexed PNG per frame, named by the frame's index (00000.png), pixel = object id
// (0 the background), with DAVIS's palette, as DAVIS 2017's annotations and the tools that
// read them (davis2017-evaluation, VOS trainers) expect.
#include "sam3/error.h"
#include "sam3/files.h"
#include "video_io/palette_png.h"
#include "video_io/partial_sink.h"

namespace sam3::video_io {
namespace {

namespace fs = std::filesystem;
constexpr const char* kEntry = "davis";

class DavisSink final : public PartialSink {
 public:
  explicit DavisSink(const SinkContext& context) : context_(context) {}
  std::vector<std::string> entries() const override { return {kEntry}; }

  void open(const fs::path& work, const nlohmann::json*, std::int64_t last_committed_index) override {
    folder_ = work;
    fs::create_directories(folder_);
    remove_frame_files_after(folder_, "", ".png", last_committed_index);
    remove_stale_temporaries(folder_);
  }

  void check(const FrameOutput& out) const override {
    for (const auto& o : out.result.objects) {
      if (o.id <= 255) continue;
      for (auto id : out.labels) {  // an object hidden under others is not in the PNG
        if (id != o.id) continue;
        throw Error(ErrorCode::kInvalidArgument,
                    "DAVIS PNGs hold object ids up to 255; object " + std::to_string(o.id) + " appeared in frame " +
                        std::to_string(out.result.index) + ". The frames before it are kept: run again without davis " +
                        "in the formats (tracks.json holds ids up to 65535, MOTS up to 999) and the run resumes there");
      }
    }
  }

  void write(const FrameOutput& out) override {
    std::vector<std::uint8_t> indices(out.labels.size());
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<std::uint8_t>(out.labels[i]);  // check(): up to 255
    write_file_atomic(folder_ / frame_file_name("", out.result.index, 5, ".png"),
                      encode_palette_png(indices, context_.info.width, context_.info.height, davis_palette()));
  }

  nlohmann::json checkpoint() override { return nlohmann::json::object(); }  // each file is already on disk

  void finish(OutputFolderUpdate& update) override { link_into_stage(folder_, update, kEntry); }

 private:
  SinkContext context_;
  fs::path folder_;
};

}  // namespace

std::unique_ptr<PartialSink> make_davis_sink(const SinkContext& context) { return std::make_unique<DavisSink>(context); }

}  // namespace sam3::video_io
