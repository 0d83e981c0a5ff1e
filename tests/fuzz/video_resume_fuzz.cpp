// libFuzzer target: the files `sam3 track` reads back to resume a killed run. A real partial run
// (three frames of a 24x16 video with two objects, JSON, DAVIS and MOTS) is made once; each input
// then changes one of its files before the run is resumed, one more frame written and finished:
// first byte 0, the checkpoint `progress.json` patched with the input as a JSON merge patch (so
// the fuzzer reaches past the identity check), 1 the checkpoint replaced by the raw bytes, 2 the
// record's last line (`frames.jsonl`, tracks.json's source) replaced by the input. A damaged file
// must be a sam3::Error or a fresh start, never another exception, a crash, hang or sanitizer
// report.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_files.h"
#include "sam3/error.h"
#include "sam3/video_outputs.h"

namespace {

namespace fs = std::filesystem;
using sam3::fuzz::read;
using sam3::fuzz::write;

const fs::path& work_dir() { return sam3::fuzz::work_dir("sam3_video_resume_fuzz_"); }

constexpr int kWidth = 24, kHeight = 16;

sam3::VideoInfo info() { return {"clip.mp4", kWidth, kHeight, 25.0, 4}; }

sam3::VideoOutputOptions options() {
  sam3::VideoOutputOptions o;
  o.formats = {sam3::VideoOutputFormat::kJson, sam3::VideoOutputFormat::kDavis, sam3::VideoOutputFormat::kMots};
  o.labels = {"car", "tree"};
  o.checkpoint_every = 1;
  o.resume_window = 2;
  return o;
}

std::pair<sam3::VideoFrame, sam3::VideoFrameResult> frame(std::int64_t index) {
  sam3::VideoFrame f{{kWidth, kHeight, std::vector<std::uint8_t>(kWidth * kHeight * 3, 90)}, index, index / 25.0};
  sam3::VideoFrameResult r{index, f.time_s, {}};
  for (int id = 1; id <= 2; ++id) {
    sam3::TrackedObject o;
    o.id = id;
    o.score = 0.9f;
    o.prompt = id - 1;
    const int x0 = (id - 1) * 12 + static_cast<int>(index);
    o.mask = sam3::Mask::from_window(kWidth, kHeight, {x0, 2, x0 + 4, 8}, std::vector<std::uint8_t>(4 * 6, 1));
    o.box = {float(x0), 2, float(x0 + 4), 8};
    r.objects.push_back(std::move(o));
  }
  return {std::move(f), std::move(r)};
}

const fs::path& template_run() {
  static const fs::path dir = [] {
    const fs::path d = work_dir() / "template";
    sam3::VideoOutputs out(d, info(), options());
    for (int i = 0; i < 3; ++i) {
      const auto [f, r] = frame(i);
      out.write(f, r);
    }
    return d;  // destroyed unfinished: the partial run stays, as after a kill
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const fs::path out = work_dir() / "out";
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::copy(template_run(), out, fs::copy_options::recursive);
  const fs::path partial = out / "sam3-video.partial", progress = partial / "progress.json", record = partial / "json" / "frames.jsonl";
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: {
      const auto patch = nlohmann::json::parse(bytes, nullptr, false);
      if (patch.is_discarded()) return 0;
      auto saved = nlohmann::json::parse(read(progress));
      saved.merge_patch(patch);
      write(progress, saved.dump());
      break;
    }
    case 1:
      write(progress, bytes);
      break;
    default: {
      std::string lines = read(record);
      const size_t last = lines.rfind('\n', lines.size() - 2);
      lines = lines.substr(0, last == std::string::npos ? 0 : last + 1) + bytes + "\n";
      write(record, lines);
      auto saved = nlohmann::json::parse(read(progress));
      saved["sinks"]["json"]["bytes"] = lines.size();
      write(progress, saved.dump());
    }
  }
  try {
    sam3::VideoOutputs resumed(out, info(), options());
    const auto [f, r] = frame(3);
    resumed.write(f, r);
    resumed.finish();
  } catch (const sam3::Error&) {
  }
  return 0;
}
