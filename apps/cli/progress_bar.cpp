#include "progress_bar.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace sam3::cli {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string human_bytes(std::int64_t bytes) {
  char buf[32];
  if (bytes >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  else if (bytes >= 1'000'000) std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  return buf;
}

ProgressBar::ProgressBar() : tty_(::isatty(STDERR_FILENO) != 0) {}

void ProgressBar::update(const DownloadProgress& p) {
  if (!tty_) return;
  const double t = now_s();
  const bool done = p.total > 0 && p.done >= p.total;
  if (t - last_draw_ < 0.2 && !done) return;
  last_draw_ = t;
  std::string line = "  " + p.file + "  " + human_bytes(p.done);
  if (p.total > 0) {
    const int pct = static_cast<int>(100.0 * p.done / p.total);
    const int filled = pct / 5;
    line = "  " + p.file + " [" + std::string(filled, '#') + std::string(20 - filled, '.') + "] " + std::to_string(pct) +
           "%  " + human_bytes(p.done) + " / " + human_bytes(p.total);
  }
  if (p.bytes_per_second > 0) {
    line += "  " + human_bytes(static_cast<std::int64_t>(p.bytes_per_second)) + "/s";
    if (p.total > p.done) {
      const int eta = static_cast<int>((p.total - p.done) / p.bytes_per_second);
      char buf[32];
      std::snprintf(buf, sizeof buf, "  ETA %d:%02d", eta / 60, eta % 60);
      line += buf;
    }
  }
  std::fprintf(stderr, "\r%-100s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace sam3::cli
