// Label Studio video projects (<Video> + <VideoRectangle>), answered as Label Studio's own SAM2
// video backend (label-studio-ml-backend, examples/segment_anything_2_video) answers them: a box
// drawn on a keyframe comes back as that region's `sequence` through the following frames; and,
// beyond it, the labels (or an annotator's text) as text prompts: every instance its own
// VideoRectangle track. Sequences are Label Studio's: {frame (from 1), x, y, width, height in
// percent, enabled, rotation, time}.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "label_studio_config.h"
#include "sam3/model.h"
#include "sam3/video_tracker.h"

namespace sam3::server::label_studio {

struct VideoLabelConfig {
  std::string video_name;               // the Video tag's name (regions' to_name)
  std::string data_key;                 // the task data key of its video ("$video" -> "video")
  std::string box_name;                 // the VideoRectangle's name (regions' from_name)
  std::string framerate;                // the Video tag's framerate as written ("25.0", "$fps"; empty: Label Studio's 24)
  std::vector<LabelValue> labels;       // the Labels on the video: values and their predicted_values
  std::vector<std::string> text_areas;  // TextArea names on the video (an annotator's prompt)
};

// The video part of a label config: nullopt for an image project (no <VideoRectangle>, and an
// <Image> or no <Video>). Throws ApiError(400) for a video config sam3 cannot answer: one whose
// <VideoRectangle> names no <Video>, or a <Video> without <VideoRectangle> (the message shows it).
std::optional<VideoLabelConfig> parse_video_label_config(const std::string& xml);

// The frame rate Label Studio's editor counts a task's keyframes with: the Video tag's framerate
// (or the task data it names, "$fps"), read as the editor reads it (24 when absent or not a
// number, 1/x below 1).
double label_studio_framerate(const VideoLabelConfig& config, const nlohmann::ordered_json& task_data);

// What to track in one task's video: the boxes of the context's videorectangle regions (each on
// its latest keyframe), or texts with the label each one's instances get.
struct VideoJob {
  struct Boxed {
    nlohmann::ordered_json region;               // the context's region, answered with its sequence extended
    nlohmann::ordered_json keyframes;            // its sequence by frame, one keyframe a frame (the first sent for it)
    std::string where;                           // that keyframe in the request, for messages
    std::int64_t frame = 0;                      // its latest enabled keyframe, from 0
    std::int64_t stop = -1;                      // a disabled keyframe after it (the object left), from 0; -1: none
    double x = 0, y = 0, width = 0, height = 0;  // that keyframe's box, percent
  };
  std::vector<Boxed> boxed;
  std::vector<std::string> texts, text_labels;   // a text and the label of its tracks, in order
  std::int64_t first_frame = 0, last_frame = 0;  // the frames to track, from 0, both included
};

// Reads the interactive context (params.context; null for pre-annotation) into a job. Throws
// ApiError(400, "invalid_context") naming params.context.result[i] for a region without a usable
// sequence, or whose box to track from is rotated. `after` frames are tracked past the latest
// enabled keyframe (pre-annotation: from frame 0), up to a disabled keyframe after it: as Label
// Studio's editor reads a sequence, a disabled keyframe is the object's last frame there.
VideoJob read_video_job(const VideoLabelConfig& config, const nlohmann::ordered_json& context, std::int64_t after);

// Tracks the job through the video file at `path` with the SAM 3.1 model and returns Label
// Studio's result list (videorectangle regions): every boxed region of the context, in its order,
// its keyframes as sent (ordered by frame, one a frame) with the tracked frames between its
// latest enabled keyframe and its stop added, then the texts' tracks. A track's keyframe on the
// last frame it is seen before it leaves is disabled (the editor shows it there, not after).
// Keyframe times are frame / `framerate` (label_studio_framerate), as the editor writes them.
// Throws ApiError(400, "invalid_context") for a keyframe past the video's last frame. `options`
// carry the worker's stop.
nlohmann::ordered_json track_video_task(const std::shared_ptr<const Model>& model, const VideoLabelConfig& config, const VideoJob& job,
                                        const std::string& path, double framerate, VideoTrackerOptions options);

}  // namespace sam3::server::label_studio
