#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

namespace sam3::cli {
namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

std::string human_bytes(std::int64_t bytes) {
  char buf[32];
  if (bytes >= 1'000'000'000)
    std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  else if (bytes >= 1'000'000)
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  return buf;
}

std::string eta_text(double remaining, double per_second) {
  if (!(per_second > 0) || !(remaining >= 0)) return "ETA --";
  const double seconds = std::min(remaining / per_second, 99.0 * 3600);  // a rate of a few items a day shows 5940:00
  const int eta = static_cast<int>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "ETA %d:%02d", eta / 60, eta % 60);
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
    line = "  " + p.file + " [" + std::string(filled, '#') + std::string(20 - filled, '.') + "] " + std::to_string(pct) + "%  " +
           human_bytes(p.done) + " / " + human_bytes(p.total);
  }
  if (p.bytes_per_second > 0) {
    line += "  " + human_bytes(static_cast<std::int64_t>(p.bytes_per_second)) + "/s";
    if (p.total > p.done) line += "  " + eta_text(static_cast<double>(p.total - p.done), p.bytes_per_second);
  }
  std::fprintf(stderr, "\r%-100s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

FrameProgress::FrameProgress(std::string label) : label_(std::move(label)), tty_(::isatty(STDERR_FILENO) != 0), start_(now_s()) {}

void FrameProgress::update(std::int64_t done, std::int64_t total) {
  if (!tty_) return;
  const double t = now_s();
  if (t - last_draw_ < 0.2 && done != total) return;
  last_draw_ = t;
  const double fps = t > start_ ? done / (t - start_) : 0;
  char buf[160];
  if (total > 0) {
    const int filled = static_cast<int>(20 * std::min<std::int64_t>(done, total) / total);
    std::snprintf(buf, sizeof buf, "  %s [%s%s] %lld/%lld frames  %.2f fps  %s", label_.c_str(), std::string(filled, '#').c_str(),
                  std::string(20 - filled, '.').c_str(), static_cast<long long>(done), static_cast<long long>(total), fps,
                  eta_text(static_cast<double>(total - done), done > 0 ? fps : 0).c_str());
  } else {
    std::snprintf(buf, sizeof buf, "  %s %lld frames  %.2f fps", label_.c_str(), static_cast<long long>(done), fps);
  }
  std::fprintf(stderr, "\r%-100s", buf);
  std::fflush(stderr);
  drawn_ = true;
}

void FrameProgress::finish() {
  if (drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

void ProgressBar::finish() {
  if (drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace sam3::cli
