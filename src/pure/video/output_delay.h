// The hot-start output delay and what is shown per frame (official SAM 3.1:
// sam3_multiplex_tracking.py propagate_in_video and _postprocess_output): frames are held
// `hotstart_delay` frames; when one leaves, objects removed by hot-start by then (on any
// frame), suppressed on that frame, or not confirmed `confirmation_detections - 1` frames
// later are hidden; masks are upsampled to the frame (bilinear, > 0), emptied ones dropped,
// and made non-overlapping: a pixel claimed by several objects goes to the highest tracker
// score (ties: the lower id). As in SAM 3.1, a frame whose confirmation frame is not processed
// yet when it leaves (a delay shorter than the lookahead) hides nothing as unconfirmed, and
// with no delay nothing is hidden as removed or unconfirmed. No ONNX Runtime here.
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <vector>

#include "sam3/video.h"

namespace sam3::pure::video {

struct PendingObject {
  int id = 0;
  int prompt = 0;
  float score = 0;          // the output score (first detection's, or the clicked object's)
  float tracker_score = 0;  // this frame's: sigmoid of the tracker's object logit (new objects: detection score)
  int mask_h = 0, mask_w = 0;
  std::vector<float> logits;  // low-resolution mask logits
};

struct PendingFrame {
  std::int64_t index = 0;
  double time_s = 0;
  std::vector<PendingObject> objects;
  std::set<int> suppressed;   // hidden on this frame
  std::set<int> unconfirmed;  // not confirmed after this frame was processed
};

class OutputDelay {
 public:
  OutputDelay(int hotstart_delay, int confirmation_detections, int width, int height)
      : delay_(hotstart_delay), lookahead_(confirmation_detections > 0 ? confirmation_detections - 1 : 0), width_(width), height_(height) {}

  // Adds a processed frame and the objects removed on it; returns the frames that are final.
  std::vector<VideoFrameResult> push(PendingFrame frame, const std::set<int>& removed_now);
  std::vector<VideoFrameResult> flush();  // every frame still held (the video ended)
  size_t held() const { return frames_.size(); }

 private:
  VideoFrameResult emit(bool video_ended);

  int delay_, lookahead_, width_, height_;
  std::deque<PendingFrame> frames_;
  std::set<int> removed_;  // by hot-start, on any frame so far
};

// Masks at the frame's size from low-res logits; objects of one frame made non-overlapping by
// tracker score; empty ones dropped; boxes from the final masks. Exposed for the tests.
std::vector<TrackedObject> render_objects(const std::vector<const PendingObject*>& shown, int width, int height);

}  // namespace sam3::pure::video
