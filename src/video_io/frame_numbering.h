// The source index of each frame a video file's decoder gives, when damaged packets made it drop
// some: the frames after a gap keep their index in the file (DAVIS' 00123.png, MOTS'
// frame_000123.png and CVAT's import match on it), rather than the count of frames decoded.
//
// A frame's index is the previous one's plus one, plus the frames lost between them:
//  - the packets the demuxer read (damaged ones included: MP4's index and Matroska's blocks list
//    every frame) whose presentation time lies before the frame's and that gave no frame: exact
//    at any frame rate, constant or variable;
//  - when no packet read accounts for the gap and the stream has had a constant rate so far,
//    the gap in time over the frame duration (a demuxer that dropped the damaged packets, as
//    MPEG-TS may). Packets come first: a variable-rate stream can look constant on its first
//    frames (its declared rate is guessed from them) and then pause.
// Frames are counted as lost only near damage FFmpeg reported (kDamageReach frames: a packet
// the decoder refused, a frame it concealed, a packet MPEG-TS marks corrupt): packets that give no frame by design (a hidden reference
// frame) never shift an index, and an intact file is numbered 0, 1, 2, ... whatever its times. No FFmpeg here: times are the stream's
// ticks.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace sam3::video_io {

class FrameNumbering {
 public:
  // `frame_ticks`: a frame's duration in the stream's ticks when it declares a constant rate,
  // 0 when not (variable, or unknown).
  explicit FrameNumbering(double frame_ticks) : frame_ticks_(frame_ticks) {}

  // A packet of the video stream was read (decodable or not); nullopt: it has no time.
  void packet(std::optional<std::int64_t> pts);
  // FFmpeg reported damage: a packet the decoder refused (its frame will not come), a frame it
  // concealed, a packet the demuxer marked corrupt.
  void damaged() { since_damage_ = 0; }
  // The next decoded frame (presentation order; nullopt: no time): its source index.
  std::int64_t frame(std::optional<std::int64_t> pts);
  // At the end of the stream: frames read but never decoded after the last one are lost too.
  // Returns how many frames the stream held (the last index + 1, lost ones at the end included).
  std::int64_t finish();

  // The runs of indices that were lost, as [first, last], in order.
  const std::vector<std::pair<std::int64_t, std::int64_t>>& lost() const { return lost_; }
  std::int64_t lost_frames() const;
  std::int64_t next_index() const { return next_; }

  static constexpr int kDamageReach = 16;  // frames after a reported error that may still be short of a lost one

 private:
  void lose(std::int64_t from, std::int64_t count);

  double frame_ticks_;
  std::multiset<std::int64_t> pending_;  // times of packets read whose frame has not come
  std::vector<std::pair<std::int64_t, std::int64_t>> lost_;
  std::optional<std::int64_t> last_pts_;
  std::int64_t next_ = 0;
  int since_damage_ = kDamageReach + 1;  // frames given since the last reported error
  bool regular_ = true;                  // every step so far was one frame duration
};

}  // namespace sam3::video_io
