// Ids across a resumed run: the re-run tracker numbers its objects afresh; its results on the
// frames already written are matched (mask IoU) to the written ones to carry their ids on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <map>
#include <vector>

#include "sam3/video.h"

namespace sam3::video_io {

class ResumeIds {
 public:
  // `recent`: the record's lines of the re-run window (record.h); `max_id`: the largest id
  // written. Each line is parsed when its frame is re-run, so masks are held one frame at a time.
  ResumeIds(std::vector<std::string> recent, std::filesystem::path record, int max_id);

  // A re-run result of a frame already written: its objects vote for the written objects
  // they overlap most (IoU >= 0.5).
  void observe(const VideoFrameResult& rerun);
  // The id a new result's object gets: its match if it had one; a fresh id (above every id
  // written) if it is new; unchanged when no written frame was re-run (the caller kept ids).
  int map(int rerun_id);

 private:
  void decide();

  std::map<std::int64_t, std::string> recent_;  // index -> record line
  std::filesystem::path record_;
  int max_id_;
  bool observed_ = false, decided_ = false;
  std::map<std::pair<int, int>, int> votes_;  // (re-run id, written id) -> frames agreeing
  std::map<int, int> map_;
};

// Intersection over union of two masks of one size (0 when both are empty).
double mask_iou(const Mask& a, const Mask& b);

}  // namespace sam3::video_io
