// A download/verify progress line on a terminal (stderr), silent when stderr is not a TTY.
#pragma once

#include <cstdint>
#include <string>

#include "sam3/hub.h"

namespace sam3::cli {

class ProgressBar {
 public:
  ProgressBar();
  void update(const DownloadProgress& p);
  void finish();  // ends the line if one was drawn
  ProgressCallback callback() {
    return [this](const DownloadProgress& p) { update(p); };
  }

 private:
  bool tty_;
  bool drawn_ = false;
  double last_draw_ = 0;
};

// Frames done of a video (total 0: unknown), with the rate and the time left, on a terminal.
class FrameProgress {
 public:
  explicit FrameProgress(std::string label);
  void update(std::int64_t done, std::int64_t total);
  void finish();

 private:
  std::string label_;
  bool tty_;
  bool drawn_ = false;
  double start_ = 0, last_draw_ = 0;
};

std::string human_bytes(std::int64_t bytes);
// "ETA m:ss" for `remaining` items at `per_second`; "ETA --" while there is no rate yet (nothing
// finished): an ETA of 0:00 before the first item read as "almost done".
std::string eta_text(double remaining, double per_second);

}  // namespace sam3::cli
