// The results of video tracking written as files a labeler imports, atomically and resumably
// (sam3/video.h's VideoSink). One VideoOutputs writes one video's results into one folder:
//
//   tracks.json   the whole video: info, model, settings, per frame the objects (id, score,
//                 box, COCO RLE mask)                                          (kJson)
//   davis/        DAVIS-style indexed PNG per frame: pixel = object id         (kDavis)
//   mots.txt      MOTS text lines "frame id class height width rle"            (kMots)
//   mots/         MOTS PNG (instances/*.png + labels.txt), what CVAT and Datumaro import (kMots)
//   overlay.mp4   the frames with each object tinted and its id drawn (overlay/ PNGs when
//                 FFmpeg has no H.264 or MPEG-4 encoder)                       (kOverlay)
//   sam3-video.json  what the run was made from (source, formats, settings): a batch skips
//                 a video only when they match (VideoOutputs::finished)        (always)
//
// Nothing appears under these names before finish(); they then replace a previous run's
// together (OutputFolderUpdate: only what sam3 wrote is ever replaced). Until then the frames
// live in `sam3-video.partial/` beside them, made durable every `checkpoint_every` frames, so
// that a run that is interrupted (killed, power cut) resumes: resume_point() says where.
//
//   sam3::VideoOutputs out(folder, source->info(), options);
//   auto from = out.resume_point();  // feed frames from from.restart_index on
//   ... out.write(frame, result) for each result ...
//   out.finish();
//
// Resuming re-runs a window: the caller feeds the tracker again from restart_index, a few
// frames before the last one written; results of frames already written are not written
// again but matched (mask IoU) to the written ones, so that the objects keep their ids.
// Every format reads the same label map: the objects of a frame painted in id order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sam3/video.h"

namespace sam3 {

enum class VideoOutputFormat { kJson, kDavis, kMots, kOverlay };

// "json", "davis", "mots", "overlay" and back; parse throws kInvalidArgument for other words.
const char* video_output_format_name(VideoOutputFormat format);
VideoOutputFormat parse_video_output_format(const std::string& name);

struct VideoOutputOptions {
  std::vector<VideoOutputFormat> formats = {VideoOutputFormat::kJson};
  // The name of each prompt (TrackedObject::prompt indexes it): the texts, then a name for
  // each clicked object. tracks.json lists them; MOTS's classes are 1 + the prompt index (MOTS
  // holds 64 labels at most: more are refused before the first frame).
  std::vector<std::string> labels = {"object"};
  std::string model_json = "{}";     // recorded in tracks.json as "model" (a JSON value)
  std::string settings_json = "{}";  // recorded as "settings"; a resumed run must pass the same
  // What the frames come from (video_source_identity(path); "null" for frames without a file:
  // then only the name and size are compared). A partial run or a finished folder whose source
  // differs is not resumed, never spliced.
  std::string source_json = "null";
  int checkpoint_every = 25;             // frames between checkpoints (what an interruption can lose)
  int resume_window = 16;                // frames re-run before the last written one on resume
  bool resume = true;                    // false: a partial run left in the folder is discarded
  std::string overlay_encoder = "auto";  // "auto" (H.264, else MPEG-4), "h264", "mpeg4", "png"
};

// Where an interrupted run continues.
struct ResumePoint {
  std::int64_t committed_frames = 0;       // results already written (0: a fresh start)
  std::int64_t last_committed_index = -1;  // source index of the last written result
  std::int64_t restart_index = 0;          // feed frames from this source index on (start_index)
  // Every result was written and finish() was cut short (a full disk, a kill): call finish()
  // again; no frame needs tracking.
  bool complete = false;
  // The last written result (masks decoded; none on a fresh start): a tracker can seed its
  // objects from it (click tracking) instead of finding them again.
  std::optional<VideoFrameResult> last_result;
};

class VideoOutputs final : public VideoSink {
 public:
  // Locks `folder` (kIo if another process, or another VideoOutputs of this one, writes there)
  // and checks that no final name is taken by a file sam3 did not write (kIo). Resumes a partial
  // run made with the same video (name, size and options.source_json), labels, settings_json and
  // overlay encoder, in the same formats or more (a format dropped is dropped from the partial
  // run); starts over otherwise, logging a warning that says which differs.
  // Throws kInvalidArgument for bad options (model_json or settings_json not JSON, more labels
  // than MOTS holds, ...) before anything in `folder` is touched.
  VideoOutputs(const std::filesystem::path& folder, const VideoInfo& info, VideoOutputOptions options);
  ~VideoOutputs() override;  // without finish(): the partial run stays, to be resumed
  VideoOutputs(const VideoOutputs&) = delete;
  VideoOutputs& operator=(const VideoOutputs&) = delete;

  const ResumePoint& resume_point() const;
  // Whether write() needs the frames' pixels (the overlay). When not, a frame may come without
  // its image (width and height 0): callers need not hold frames while their results wait.
  bool needs_pixels() const;
  // Results in increasing index order; results of frames already written are matched, not
  // written. Throws kInvalidArgument for a result that does not fit the video (a mask of
  // another size, an index out of order, a prompt without a label) or a format's limits
  // (DAVIS: ids up to 255; MOTS: ids up to 999), checked before any format writes the frame
  // (a run stopped there resumes, with fewer formats too), kIo when writing fails.
  void write(const VideoFrame& frame, const VideoFrameResult& result) override;
  // write(), returning the result as the files have it (ids carried over from an interrupted
  // run), or nullopt for a frame the interrupted run had already written (not written again).
  std::optional<VideoFrameResult> write_frame(const VideoFrame& frame, const VideoFrameResult& result);
  // Writes the final files, swaps them in and removes the partial run. A finish that fails
  // (kIo: a full disk) leaves the partial run whole: the next run finishes it (ResumePoint::complete).
  void finish() override;

  // `folder` holds a finished run (sam3-video.json, no partial run) of the same source, labels,
  // settings and overlay encoder, in at least options.formats, each still there: a batch of
  // videos skips it. An unreadable record is not finished.
  static bool finished(const std::filesystem::path& folder, const VideoOutputOptions& options);
  // What finishing a run with `options` in `folder` would replace of a finished run there that
  // is not this one (another video or the same one changed since, other labels, other settings:
  // results that cannot be had back but by tracking again), as a sentence naming that video and
  // what differs; "" when nothing would be lost (no finished run, or one of the same video,
  // labels and settings, in whatever formats). `sam3 track` refuses such a folder unless told.
  // `video_name`: the name the video's source gives (VideoInfo::name).
  static std::string replaced_results(const std::filesystem::path& folder, const std::string& video_name,
                                      const VideoOutputOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sam3
