// Owning handles for FFmpeg's objects, its error text, and its log routed to sam3::log.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/frame.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <string>

namespace sam3::video_io {

struct InputCloser {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct OutputCloser {  // an output context whose file, if open, is closed too
  void operator()(AVFormatContext* c) const;
};
struct CodecCloser {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameCloser {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketCloser {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct ScaleCloser {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};

using InputPtr = std::unique_ptr<AVFormatContext, InputCloser>;
using OutputPtr = std::unique_ptr<AVFormatContext, OutputCloser>;
using CodecPtr = std::unique_ptr<AVCodecContext, CodecCloser>;
using FramePtr = std::unique_ptr<AVFrame, FrameCloser>;
using PacketPtr = std::unique_ptr<AVPacket, PacketCloser>;
using ScalePtr = std::unique_ptr<SwsContext, ScaleCloser>;

// Opens a local file for reading with the file protocol only: a path is never taken for a URL
// or a protocol ("concat:", "http:"), and a playlist inside (HLS, a concat script) cannot make
// FFmpeg fetch anything else. Returns FFmpeg's code.
int open_local_input(AVFormatContext** context, const std::string& path);
// The same for writing a file (avio_open).
int open_local_output(AVIOContext** io, const std::string& path);

// FFmpeg's text for an AVERROR code.
std::string av_error_text(int code);

// FFmpeg prints to stderr by default; sam3 routes its messages to sam3::log (debug level:
// a damaged stream reports every concealed block). Idempotent.
void route_ffmpeg_log();
// The last error FFmpeg logged on this thread since the last call ("" if none): its own words
// for a failure whose code says little ("Picture size 99999x99999 is invalid" came as EBUSY).
std::string take_ffmpeg_error();
// Whether a demuxer said, on this thread since the last call, that the file ends inside its data
// (a file cut short), which a container without a frame count tells no other way.
bool take_ffmpeg_cut_short();

}  // namespace sam3::video_io
