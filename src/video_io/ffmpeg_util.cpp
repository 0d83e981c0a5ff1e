#include "video_io/ffmpeg_util.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

#include "sam3/log.h"

namespace sam3::video_io {
namespace {

thread_local std::string t_last_error;  // FFmpeg's last error line on this thread (its calls log where they run)
thread_local bool t_cut_short = false;  // a demuxer met the file's end inside its data on this thread

void forward_log(void* avcl, int level, const char* fmt, va_list args) {
  if (level > AV_LOG_WARNING) return;  // FFmpeg's info and debug chatter
  char line[1024];
  int prefix = 0;  // without "[y4m @ 0x...]": the words only
  av_log_format_line2(avcl, level, fmt, args, line, sizeof line, &prefix);
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) return;
  if (level <= AV_LOG_ERROR) t_last_error = text;
  // Matroska's "File ended prematurely", MP4's "... partial file": the demuxers' words for a cut.
  if (text.find("ended prematurely") != std::string::npos || text.find("partial file") != std::string::npos) t_cut_short = true;
  log(LogLevel::kDebug, "ffmpeg: " + text);
}

}  // namespace

void OutputCloser::operator()(AVFormatContext* c) const {
  if (c == nullptr) return;
  if (c->pb != nullptr && !(c->oformat->flags & AVFMT_NOFILE)) avio_closep(&c->pb);
  avformat_free_context(c);
}

int open_local_input(AVFormatContext** context, const std::string& path) {
  AVDictionary* options = nullptr;
  av_dict_set(&options, "protocol_whitelist", "file", 0);
  const int rc = avformat_open_input(context, ("file:" + path).c_str(), nullptr, &options);
  av_dict_free(&options);
  return rc;
}

int open_local_output(AVIOContext** io, const std::string& path) {
  AVDictionary* options = nullptr;
  av_dict_set(&options, "protocol_whitelist", "file", 0);
  const int rc = avio_open2(io, ("file:" + path).c_str(), AVIO_FLAG_WRITE, nullptr, &options);
  av_dict_free(&options);
  return rc;
}

std::string av_error_text(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

std::string take_ffmpeg_error() {
  std::string text;
  text.swap(t_last_error);
  return text;
}

bool take_ffmpeg_cut_short() { return std::exchange(t_cut_short, false); }

void route_ffmpeg_log() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(forward_log); });
}

}  // namespace sam3::video_io
