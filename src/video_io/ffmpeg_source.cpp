// Video files decoded with FFmpeg's libraries, one frame at a time, to RGB8 at the displayed size.
extern "C" {
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
}

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "core/codecs.h"
#include "sam3/error.h"
#include "sam3/log.h"
#include "sam3/video_sources.h"
#include "video_io/ffmpeg_util.h"
#include "video_io/frame_numbering.h"
#include "video_io/stride.h"

namespace sam3 {
namespace {

namespace fs = std::filesystem;
using namespace video_io;

// The clockwise turn (0, 90, 180, 270) that displays the stream upright, from its display
// matrix (phone videos), as the ffmpeg program applies it.
int display_rotation(const AVStream* stream) {
  const std::uint8_t* matrix = nullptr;
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 29, 100)
  const AVPacketSideData* sd =
      av_packet_side_data_get(stream->codecpar->coded_side_data, stream->codecpar->nb_coded_side_data, AV_PKT_DATA_DISPLAYMATRIX);
  if (sd != nullptr && sd->size >= 9 * 4) matrix = sd->data;
#else
  size_t size = 0;
  matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
  if (size < 9 * 4) matrix = nullptr;
#endif
  if (matrix == nullptr) return 0;
  const double angle = -av_display_rotation_get(reinterpret_cast<const std::int32_t*>(matrix));
  if (std::isnan(angle)) return 0;
  int turn = static_cast<int>(std::lround(angle / 90.0)) * 90 % 360;
  return turn < 0 ? turn + 360 : turn;
}

// EXIF orientation that turns an image clockwise by `degrees` (core/codecs.h applies it).
int exif_for_turn(int degrees) { return degrees == 90 ? 6 : degrees == 180 ? 3 : degrees == 270 ? 8 : 1; }

class FfmpegSource final : public FrameSource {
 public:
  FfmpegSource(const fs::path& path, const FrameSourceOptions& options) : path_(path), options_(options) {
    check_stride(options_);
    route_ffmpeg_log();
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (!fs::exists(status)) throw Error(ErrorCode::kImageUnreadable, path.string() + ": no such file");
    if (!fs::is_regular_file(status)) {
      throw Error(ErrorCode::kImageUnreadable, path.string() + ": not a regular file; give a video file or a folder of images");
    }
    // FFmpeg would say "moov atom not found" (an MP4) or "invalid data": the plain cause first.
    if (fs::file_size(path, ec) == 0 && !ec) {
      throw Error(ErrorCode::kImageUnsupported, path.string() + ": the file is empty (0 bytes); give a video file");
    }
    AVFormatContext* raw = nullptr;
    take_ffmpeg_error();
    take_ffmpeg_cut_short();
    int rc = open_local_input(&raw, path.string());
    if (rc < 0) {
      if (rc == AVERROR(EACCES) || rc == AVERROR(ENOENT) || rc == AVERROR(EIO)) {
        throw Error(ErrorCode::kImageUnreadable, path.string() + ": cannot open (" + av_error_text(rc) + ")");
      }
      // FFmpeg's own words say more than its code (a header declaring 99999x99999 came as EBUSY).
      const std::string said = take_ffmpeg_error();
      int w = 0, h = 0;
      if (std::sscanf(said.c_str(), "Picture size %dx%d is invalid", &w, &h) == 2) check_pixels(w, h, true);
      throw Error(ErrorCode::kImageUnsupported,
                  path.string() + ": not a video FFmpeg can read (" + (said.empty() ? av_error_text(rc) : "FFmpeg: " + said) + ")");
    }
    input_.reset(raw);
    rc = avformat_find_stream_info(input_.get(), nullptr);
    if (rc < 0) throw Error(ErrorCode::kImageCorrupt, path.string() + ": cannot read its streams (" + av_error_text(rc) + ")");
    open_decoder();
    numbering_.emplace(constant_frame_ticks());
    // The size the stream declares is checked before a frame is decoded: a tiny file may
    // declare a frame of gigabytes (the decoder would allocate it, or fail with an unrelated error).
    check_pixels(stream_->codecpar->width, stream_->codecpar->height, true);
    // The first frame is decoded now: a file with nothing decodable fails here, and the size
    // is the decoded one (some containers do not state it).
    pending_ = decode_next();
    if (!pending_)
      throw Error(ErrorCode::kImageCorrupt,
                  path.string() + ": no frame could be decoded; check that it plays (ffmpeg -i FILE -f null -) or re-encode it");
    first_width_ = pending_->width;
    first_height_ = pending_->height;
    check_pixels(first_width_, first_height_);
    rotation_ = display_rotation(stream_);
    info_.name = path.filename().string();
    info_.width = rotation_ % 180 == 0 ? first_width_ : first_height_;
    info_.height = rotation_ % 180 == 0 ? first_height_ : first_width_;
    const AVRational rate = stream_->avg_frame_rate.num > 0 ? stream_->avg_frame_rate : stream_->r_frame_rate;
    info_.fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
    std::int64_t total = stream_->nb_frames;
    info_.frame_count_exact = total > 0;
    if (total <= 0 && info_.fps > 0 && input_->duration > 0) {  // no count in the container: an estimate
      total = std::llround(static_cast<double>(input_->duration) / AV_TIME_BASE * info_.fps);
    }
    info_.frame_count = total > 0 ? kept_count(options_, total) : 0;
    declared_frames_ = info_.frame_count_exact ? total : 0;
  }

  const VideoInfo& info() const override { return info_; }

  std::optional<VideoFrame> next() override {
    for (;;) {
      FramePtr frame = pending_ ? std::move(pending_) : decode_next();
      if (!frame) return std::nullopt;
      const std::int64_t index = numbering_->frame(timestamp(frame->best_effort_timestamp));
      last_index_ = index;
      if (!keeps(options_, index)) continue;
      VideoFrame out;
      out.index = index;
      out.time_s = presentation_time(*frame, index);
      out.image = to_rgb(*frame);
      if (rotation_ != 0) out.image = core::apply_orientation(std::move(out.image), exif_for_turn(rotation_));
      return out;
    }
  }

 private:
  void open_decoder() {
    const AVCodec* codec = nullptr;
    const int found = av_find_best_stream(input_.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (found == AVERROR_STREAM_NOT_FOUND || (found >= 0 && (input_->streams[found]->disposition & AV_DISPOSITION_ATTACHED_PIC))) {
      throw Error(ErrorCode::kImageUnsupported, path_.string() + ": has no video stream (a sound or subtitle file?); give a video file");
    }
    if (found < 0 || codec == nullptr) {
      const auto* params = found >= 0 ? input_->streams[found]->codecpar : nullptr;
      throw Error(ErrorCode::kImageUnsupported,
                  path_.string() + ": this FFmpeg has no decoder for its video" +
                      (params ? std::string(" (") + avcodec_get_name(params->codec_id) + ")" : std::string()));
    }
    stream_ = input_->streams[found];
    decoder_.reset(avcodec_alloc_context3(codec));
    if (!decoder_ || avcodec_parameters_to_context(decoder_.get(), stream_->codecpar) < 0) {
      throw Error(ErrorCode::kImageCorrupt, path_.string() + ": cannot set up the decoder");
    }
    decoder_->pkt_timebase = stream_->time_base;
    decoder_->thread_count = 0;  // FFmpeg picks
    const int rc = avcodec_open2(decoder_.get(), codec, nullptr);
    if (rc < 0) {
      throw Error(ErrorCode::kImageUnsupported,
                  path_.string() + ": cannot open its " + codec->name + " decoder (" + av_error_text(rc) + ")");
    }
    packet_.reset(av_packet_alloc());
  }

  // `declared`: the container's or codec's header (0 when it does not say) rather than a decoded frame.
  void check_pixels(int w, int h, bool declared = false) const {
    if (declared && (w <= 0 || h <= 0)) return;
    if (w <= 0 || h <= 0) throw Error(ErrorCode::kImageCorrupt, path_.string() + ": frames without a size");
    if (static_cast<std::int64_t>(w) * h > options_.max_pixels) {
      throw Error(ErrorCode::kImageTooLarge, path_.string() + ": its frames are " + (declared ? "declared as " : "") + std::to_string(w) +
                                                 "x" + std::to_string(h) + " = " + std::to_string(static_cast<std::int64_t>(w) * h) +
                                                 " pixels, over the limit of " + std::to_string(options_.max_pixels) +
                                                 "; scale the video down first (ffmpeg -i IN -vf scale=1920:-2 OUT.mp4)");
    }
  }

  // The next decoded frame in presentation order, or null at the end. A damaged packet is
  // skipped, as the ffmpeg program does, whether the decoder says so when it is sent or, as
  // frame-threaded decoders do (H.264 cut short), when its frame is received; it is counted and
  // reported once at the end. A decoder that only fails is given up after kMaxFailuresInARow.
  FramePtr decode_next() {
    FramePtr frame(av_frame_alloc());
    for (;;) {
      const int got = avcodec_receive_frame(decoder_.get(), frame.get());
      if (got == 0) {
        failures_in_a_row_ = 0;
        // A frame the decoder concealed (a reference lost with damaged packets): damage is near.
        if ((frame->flags & AV_FRAME_FLAG_CORRUPT) || frame->decode_error_flags != 0) numbering_->damaged();
        return frame;
      }
      if (got == AVERROR_EOF) {
        report_end();
        return nullptr;
      }
      if (got != AVERROR(EAGAIN)) {
        if (++failures_in_a_row_ > kMaxFailuresInARow) {
          throw Error(ErrorCode::kImageCorrupt, path_.string() + ": decoding failed (" + av_error_text(got) + ") " +
                                                    std::to_string(kMaxFailuresInARow) + " times in a row after frame " +
                                                    std::to_string(last_index_) + "; re-encode it (ffmpeg -i IN -c:v libx264 OUT.mp4)");
        }
        ++damaged_packets_;
        numbering_->damaged();
        continue;
      }
      if (flushing_) return nullptr;
      const int read = av_read_frame(input_.get(), packet_.get());
      if (read < 0) {  // end of file (or a read error): drain what the decoder holds
        cut_short_ = take_ffmpeg_cut_short();
        if (read != AVERROR_EOF) log(LogLevel::kWarning, path_.string() + ": reading stopped (" + av_error_text(read) + ")");
        flushing_ = true;
        avcodec_send_packet(decoder_.get(), nullptr);
        continue;
      }
      if (packet_->stream_index == stream_->index) {
        if (!(packet_->flags & AV_PKT_FLAG_DISCARD)) {  // an edit list's leading frames are decoded, never shown
          numbering_->packet(timestamp(packet_->pts != AV_NOPTS_VALUE ? packet_->pts : packet_->dts));
        }
        // MPEG-TS marks a packet whose data has gaps (its continuity counter jumped): packets, and
        // the frames in them, may be gone without any decoding error.
        if (packet_->flags & AV_PKT_FLAG_CORRUPT) numbering_->damaged();
        const int sent = avcodec_send_packet(decoder_.get(), packet_.get());
        if (sent == AVERROR_INVALIDDATA) {
          ++damaged_packets_;
          numbering_->damaged();
        } else if (sent < 0 && sent != AVERROR(EAGAIN)) {
          av_packet_unref(packet_.get());
          throw Error(ErrorCode::kImageCorrupt, path_.string() + ": decoding failed (" + av_error_text(sent) + ")");
        }
      }
      av_packet_unref(packet_.get());
    }
  }

  // At the end: the frames that could not be decoded (their indices are absent; the others keep
  // theirs), and a video that ended before the frames its container declares (a file cut short:
  // the frames it has were given). An estimated count (Matroska's duration times its rate) says
  // nothing about the end.
  void report_end() {
    if (ended_) return;
    ended_ = true;
    const std::int64_t held = numbering_->finish();
    const std::int64_t lost = numbering_->lost_frames();
    if (lost > 0) {
      std::string runs;
      const auto& ranges = numbering_->lost();
      for (size_t i = 0; i < ranges.size() && i < 5; ++i) {
        const auto [first, last] = ranges[i];
        if (i > 0) runs += ", ";
        runs += std::to_string(first);
        if (last > first) runs += "-" + std::to_string(last);
      }
      if (ranges.size() > 5) runs += ", ...";
      log(LogLevel::kWarning, path_.string() + ": " + frames_text(lost) + " could not be decoded (damaged); frame" +
                                  (lost > 1 ? "s " : " ") + runs + (lost > 1 ? " are" : " is") +
                                  " absent from the results, and the other frames keep their indices");
    } else if (damaged_packets_ > 0) {
      log(LogLevel::kWarning, path_.string() + ": " + std::to_string(damaged_packets_) + " damaged packet" +
                                  (damaged_packets_ > 1 ? "s" : "") + " skipped while decoding");
    }
    if (declared_frames_ > held) {
      log(LogLevel::kWarning, path_.string() + ": the video ended after " + std::to_string(held) + " of the " +
                                  std::to_string(declared_frames_) + " frames its container declares (a file cut short?)");
    } else if (cut_short_) {  // no count to compare (Matroska): the demuxer met the file's end inside its data
      log(LogLevel::kWarning, path_.string() + ": the file ends in the middle of its data (a file cut short?); the " + frames_text(held) +
                                  " before the cut were given");
    }
  }

  static std::string frames_text(std::int64_t n) { return std::to_string(n) + (n == 1 ? " frame" : " frames"); }

  // A timestamp of the stream, or nullopt when it has none.
  static std::optional<std::int64_t> timestamp(std::int64_t ts) { return ts == AV_NOPTS_VALUE ? std::nullopt : std::optional(ts); }

  // A frame's duration in the stream's ticks when it declares a constant rate (its base rate and
  // its average agree), else 0: FrameNumbering then counts lost frames by packets only.
  double constant_frame_ticks() const {
    const AVRational base = stream_->r_frame_rate, average = stream_->avg_frame_rate, tick = stream_->time_base;
    if (base.num <= 0 || base.den <= 0 || average.num <= 0 || average.den <= 0 || tick.num <= 0 || tick.den <= 0) return 0;
    if (std::abs(av_q2d(base) / av_q2d(average) - 1) > 0.001) return 0;
    return 1.0 / (av_q2d(base) * av_q2d(tick));
  }

  // Seconds from the stream's start; frames without a timestamp get index / fps.
  double presentation_time(const AVFrame& frame, std::int64_t index) {
    const std::int64_t ts = frame.best_effort_timestamp;
    if (ts == AV_NOPTS_VALUE) return info_.fps > 0 ? static_cast<double>(index) / info_.fps : 0.0;
    const std::int64_t start = stream_->start_time != AV_NOPTS_VALUE ? stream_->start_time : 0;
    return static_cast<double>(ts - start) * av_q2d(stream_->time_base);
  }

  // RGB8 at the first frame's size (a stream that changes size mid-way is scaled back to it,
  // as the ffmpeg program does), with the frame's colour matrix and range.
  Image to_rgb(const AVFrame& frame) {
    scale_.reset(sws_getCachedContext(scale_.release(), frame.width, frame.height, static_cast<AVPixelFormat>(frame.format), first_width_,
                                      first_height_, AV_PIX_FMT_RGB24, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nullptr,
                                      nullptr, nullptr));
    if (!scale_) throw Error(ErrorCode::kImageCorrupt, path_.string() + ": cannot convert its pixel format to RGB");
    const int matrix = frame.colorspace == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT : static_cast<int>(frame.colorspace);
    const int full_range = frame.color_range == AVCOL_RANGE_JPEG ? 1 : 0;
    const std::array<int, 5> colours = {frame.width, frame.height, frame.format, matrix, full_range};
    if (colours != colours_) {  // a new converter, or new colours: its tables are rebuilt
      set_colours(matrix, full_range);
      colours_ = colours;
    }
    Image image;
    image.width = first_width_;
    image.height = first_height_;
    image.rgb.resize(static_cast<size_t>(image.width) * image.height * 3);
    std::uint8_t* planes[4] = {image.rgb.data(), nullptr, nullptr, nullptr};
    int strides[4] = {image.width * 3, 0, 0, 0};
    sws_scale(scale_.get(), frame.data, frame.linesize, 0, frame.height, planes, strides);
    return image;
  }

  // The frame's colour matrix and range into the converter (only when they change: it rebuilds
  // its tables).
  void set_colours(int matrix, int full_range) {
    int* in_table = nullptr;
    int* out_table = nullptr;
    int in_range = 0, out_range = 0, brightness = 0, contrast = 0, saturation = 0;
    if (sws_getColorspaceDetails(scale_.get(), &in_table, &in_range, &out_table, &out_range, &brightness, &contrast, &saturation) >= 0) {
      sws_setColorspaceDetails(scale_.get(), sws_getCoefficients(matrix), full_range, out_table, 1, brightness, contrast, saturation);
    }
  }

  fs::path path_;
  FrameSourceOptions options_;
  VideoInfo info_;
  InputPtr input_;
  AVStream* stream_ = nullptr;
  CodecPtr decoder_;
  PacketPtr packet_;
  ScalePtr scale_;
  FramePtr pending_;
  std::optional<FrameNumbering> numbering_;
  std::int64_t last_index_ = -1;  // the source index of the last frame decoded
  static constexpr int kMaxFailuresInARow = 64;
  std::int64_t declared_frames_ = 0;  // the container's own count before stride (0: unknown or estimated)
  int first_width_ = 0, first_height_ = 0, rotation_ = 0, damaged_packets_ = 0, failures_in_a_row_ = 0;
  bool flushing_ = false, ended_ = false, cut_short_ = false;
  std::array<int, 5> colours_ = {-1, -1, -1, -1, -1};  // size, format, matrix, range set_colours saw
};

}  // namespace

std::unique_ptr<FrameSource> open_video_file(const fs::path& path, const FrameSourceOptions& options) {
  return std::make_unique<FfmpegSource>(path, options);
}

}  // namespace sam3
