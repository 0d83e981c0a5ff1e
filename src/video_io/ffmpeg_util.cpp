#include "video_io/ffmpeg_util.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>

#include "sam3/log.h"

namespace sam3::video_io {
namespace {

void forward_log(void* avcl, int level, const char* fmt, va_list args) {
  if (level > AV_LOG_WARNING) return;  // FFmpeg's info and debug chatter
  char line[1024];
  int prefix = 1;
  av_log_format_line2(avcl, level, fmt, args, line, sizeof line, &prefix);
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (!text.empty()) log(LogLevel::kDebug, "ffmpeg: " + text);
}

}  // namespace

void OutputCloser::operator()(AVFormatContext* c) const {
  if (c == nullptr) return;
  if (c->pb != nullptr && !(c->oformat->flags & AVFMT_NOFILE)) avio_closep(&c->pb);
  avformat_free_context(c);
}

std::string av_error_text(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

void route_ffmpeg_log() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(forward_log); });
}

}  // namespace sam3::video_io
