#include "video_io/video_encoder.h"

extern "C" {
#include <libavutil/display.h>
#include <libavutil/opt.h>
}

#include <algorithm>
#include <cmath>
#include <cstring>

#include "sam3/error.h"

namespace sam3::video_io {
namespace {

constexpr AVRational kMilliseconds{1, 1000};

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int rc = 0) {
  throw Error(ErrorCode::kIo, path.string() + ": " + what + (rc < 0 ? " (" + av_error_text(rc) + ")" : std::string()));
}

}  // namespace

std::string find_video_encoder(const std::string& preference) {
  std::vector<std::string> names;
  if (preference == "h264" || preference == "auto") names = {"libx264", "libopenh264"};
  if (preference == "mpeg4" || preference == "auto") names.push_back("mpeg4");
  for (const auto& n : names) {
    if (avcodec_find_encoder_by_name(n.c_str()) != nullptr) return n;
  }
  return "";
}

VideoEncoder::VideoEncoder(const std::filesystem::path& path, int width, int height, double fps, const std::string& encoder, int rotation)
    : path_(path), width_(width), height_(height) {
  route_ffmpeg_log();
  const AVCodec* codec = avcodec_find_encoder_by_name(encoder.c_str());
  if (codec == nullptr) fail(path, "this FFmpeg has no " + encoder + " encoder");
  AVFormatContext* raw = nullptr;
  int rc = avformat_alloc_output_context2(&raw, nullptr, nullptr, path.c_str());
  if (rc < 0 || raw == nullptr) fail(path, "no container for this file name", rc);
  output_.reset(raw);
  codec_.reset(avcodec_alloc_context3(codec));
  codec_->width = (width + 1) / 2 * 2;
  codec_->height = (height + 1) / 2 * 2;
  codec_->pix_fmt = AV_PIX_FMT_YUV420P;
  codec_->time_base = kMilliseconds;
  if (fps > 0) codec_->framerate = av_d2q(fps, 100000);
  frame_ms_ = std::max<std::int64_t>(1, std::llround(1000.0 / (fps > 0 ? fps : 25.0)));  // the last frame's duration
  codec_->gop_size = 12;
  codec_->max_b_frames = 0;  // pts == dts: segments join by copying packets
  codec_->color_range = AVCOL_RANGE_MPEG;
  codec_->colorspace = AVCOL_SPC_BT470BG;  // what swscale's default matrix writes
  if (output_->oformat->flags & AVFMT_GLOBALHEADER) codec_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if (encoder == "libx264") {
    av_opt_set(codec_->priv_data, "preset", "veryfast", 0);
    av_opt_set(codec_->priv_data, "crf", "18", 0);
  } else if (encoder == "mpeg4") {
    codec_->flags |= AV_CODEC_FLAG_QSCALE;
    codec_->global_quality = FF_QP2LAMBDA * 2;
  } else {
    codec_->bit_rate = static_cast<std::int64_t>(codec_->width) * codec_->height * (fps > 0 ? fps : 25) / 8;
  }
  codec_->thread_count = 0;
  rc = avcodec_open2(codec_.get(), codec, nullptr);
  if (rc < 0) fail(path, "cannot open the " + encoder + " encoder", rc);
  stream_ = avformat_new_stream(output_.get(), nullptr);
  if (stream_ == nullptr) fail(path, "cannot add a video stream");
  stream_->time_base = kMilliseconds;
  avcodec_parameters_from_context(stream_->codecpar, codec_.get());
  if (rotation != 0) {
    auto* matrix = reinterpret_cast<std::int32_t*>(av_stream_new_side_data(stream_, AV_PKT_DATA_DISPLAYMATRIX, 9 * 4));
    if (matrix != nullptr) av_display_rotation_set(matrix, rotation);  // "a pure clockwise rotation" (FFmpeg)
  }
  if (!(output_->oformat->flags & AVFMT_NOFILE)) {
    rc = open_local_output(&output_->pb, path.string());
    if (rc < 0) fail(path, "cannot create the file", rc);
  }
  rc = avformat_write_header(output_.get(), nullptr);
  if (rc < 0) fail(path, "cannot write the container header", rc);
  yuv_.reset(av_frame_alloc());
  yuv_->format = codec_->pix_fmt;
  yuv_->width = codec_->width;
  yuv_->height = codec_->height;
  if (av_frame_get_buffer(yuv_.get(), 0) < 0) fail(path, "out of memory");
  packet_.reset(av_packet_alloc());
}

VideoEncoder::~VideoEncoder() = default;

void VideoEncoder::add(const Image& rgb, double time_s) {
  if (rgb.width != width_ || rgb.height != height_) fail(path_, "a frame of another size than the video's");
  std::int64_t pts = std::llround(time_s * 1000.0);
  if (pts <= last_pts_) pts = last_pts_ + 1;        // frames closer than 1 ms keep their order
  if (last_pts_ >= 0) frame_ms_ = pts - last_pts_;  // the spacing so far: a stride's, a variable rate's
  last_pts_ = pts;
  if (av_frame_make_writable(yuv_.get()) < 0) fail(path_, "out of memory");
  // Padding to even sizes: the source rows and columns, then the last of each repeated.
  std::vector<std::uint8_t> padded;
  const std::uint8_t* pixels = rgb.rgb.data();
  const int w = codec_->width, h = codec_->height;
  if (w != width_ || h != height_) {
    padded.resize(static_cast<size_t>(w) * h * 3);
    for (int y = 0; y < h; ++y) {
      const std::uint8_t* src = pixels + static_cast<size_t>(std::min(y, height_ - 1)) * width_ * 3;
      std::uint8_t* dst = padded.data() + static_cast<size_t>(y) * w * 3;
      std::memcpy(dst, src, static_cast<size_t>(width_) * 3);
      if (w > width_) std::memcpy(dst + width_ * 3, src + (width_ - 1) * 3, 3);
    }
    pixels = padded.data();
  }
  scale_.reset(sws_getCachedContext(scale_.release(), w, h, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_YUV420P, SWS_BICUBIC | SWS_ACCURATE_RND,
                                    nullptr, nullptr, nullptr));
  if (!scale_) fail(path_, "cannot convert RGB frames for the encoder");
  const std::uint8_t* in[4] = {pixels, nullptr, nullptr, nullptr};
  const int in_strides[4] = {w * 3, 0, 0, 0};
  sws_scale(scale_.get(), in, in_strides, 0, h, yuv_->data, yuv_->linesize);
  yuv_->pts = pts;
  send(yuv_.get());
}

void VideoEncoder::send(AVFrame* frame) {
  int rc = avcodec_send_frame(codec_.get(), frame);
  if (rc < 0) fail(path_, "encoding failed", rc);
  for (;;) {
    rc = avcodec_receive_packet(codec_.get(), packet_.get());
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
    if (rc < 0) fail(path_, "encoding failed", rc);
    // The nominal frame duration: containers take the last frame's from it (mp4 would drop
    // a last frame without one, and the average rate would be off).
    if (packet_->duration <= 0 && frame_ms_ > 0) packet_->duration = frame_ms_;
    av_packet_rescale_ts(packet_.get(), codec_->time_base, stream_->time_base);
    packet_->stream_index = stream_->index;
    rc = av_interleaved_write_frame(output_.get(), packet_.get());
    if (rc < 0) fail(path_, "cannot write (disk full?)", rc);
  }
}

void VideoEncoder::finish() {
  if (finished_) return;
  finished_ = true;
  send(nullptr);
  const int rc = av_write_trailer(output_.get());
  if (rc < 0) fail(path_, "cannot finish the file", rc);
  if (output_->pb != nullptr) {
    avio_flush(output_->pb);
    if (output_->pb->error < 0) fail(path_, "cannot write (disk full?)", output_->pb->error);
  }
  output_.reset();  // closes the file
}

void concatenate_videos(const std::vector<std::filesystem::path>& parts, const std::filesystem::path& out) {
  if (parts.empty()) fail(out, "no video parts to join");
  route_ffmpeg_log();
  AVFormatContext* raw = nullptr;
  int rc = avformat_alloc_output_context2(&raw, nullptr, nullptr, out.c_str());
  if (rc < 0 || raw == nullptr) fail(out, "no container for this file name", rc);
  OutputPtr output(raw);
  AVStream* stream = nullptr;
  std::vector<std::uint8_t> extradata;
  PacketPtr packet(av_packet_alloc());
  std::int64_t last_dts = AV_NOPTS_VALUE, spacing = 0;
  for (const auto& part : parts) {
    AVFormatContext* in_raw = nullptr;
    rc = open_local_input(&in_raw, part.string());
    if (rc < 0) fail(part, "cannot read a video part", rc);
    InputPtr input(in_raw);
    if (avformat_find_stream_info(input.get(), nullptr) < 0 || input->nb_streams != 1) fail(part, "not a video part");
    const AVStream* in_stream = input->streams[0];
    const auto* par = in_stream->codecpar;
    const std::vector<std::uint8_t> part_extradata(par->extradata, par->extradata + par->extradata_size);
    if (stream == nullptr) {
      stream = avformat_new_stream(output.get(), nullptr);
      if (stream == nullptr || avcodec_parameters_copy(stream->codecpar, par) < 0) fail(out, "cannot add a video stream");
      stream->codecpar->codec_tag = 0;  // the output container picks its own tag
      stream->time_base = kMilliseconds;
      extradata = part_extradata;
      if (!(output->oformat->flags & AVFMT_NOFILE)) {
        rc = open_local_output(&output->pb, out.string());
        if (rc < 0) fail(out, "cannot create the file", rc);
      }
      rc = avformat_write_header(output.get(), nullptr);
      if (rc < 0) fail(out, "cannot write the container header", rc);
    } else if (par->codec_id != stream->codecpar->codec_id || par->width != stream->codecpar->width ||
               par->height != stream->codecpar->height || part_extradata != extradata) {
      fail(part, "was encoded differently from the first part; the parts cannot be joined");
    }
    const AVRational rate = in_stream->avg_frame_rate.num > 0 ? in_stream->avg_frame_rate : in_stream->r_frame_rate;
    while ((rc = av_read_frame(input.get(), packet.get())) >= 0) {
      av_packet_rescale_ts(packet.get(), in_stream->time_base, stream->time_base);
      if (last_dts != AV_NOPTS_VALUE && packet->dts != AV_NOPTS_VALUE && packet->dts > last_dts) spacing = packet->dts - last_dts;
      // Matroska may not store a block's duration; mp4 would drop a last frame without one. The
      // spacing of the frames so far, else the part's rate: a part of one frame (the last of an
      // interrupted run) has no rate of its own (FFmpeg guesses 1000/s: a last frame of 1 ms).
      if (packet->duration <= 0) {
        if (spacing > 0) {
          packet->duration = spacing;
        } else if (rate.num > 0) {
          packet->duration = av_rescale_q(1, av_inv_q(rate), stream->time_base);
        }
      }
      if (last_dts != AV_NOPTS_VALUE && packet->dts != AV_NOPTS_VALUE && packet->dts <= last_dts) {
        packet->dts = last_dts + 1;  // a rounding tie at a join
        if (packet->pts != AV_NOPTS_VALUE && packet->pts < packet->dts) packet->pts = packet->dts;
      }
      if (packet->dts != AV_NOPTS_VALUE) last_dts = packet->dts;
      packet->stream_index = stream->index;
      packet->pos = -1;
      rc = av_interleaved_write_frame(output.get(), packet.get());
      if (rc < 0) fail(out, "cannot write (disk full?)", rc);
    }
    if (rc != AVERROR_EOF) fail(part, "cannot read a video part to its end", rc);
  }
  rc = av_write_trailer(output.get());
  if (rc < 0) fail(out, "cannot finish the file", rc);
  if (output->pb != nullptr) {
    avio_flush(output->pb);
    if (output->pb->error < 0) fail(out, "cannot write (disk full?)", output->pb->error);
  }
}

}  // namespace sam3::video_io
