#include "bind_video_io.h"

#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "bind_video.h"
#include "sam3/error.h"
#include "sam3/video_memory.h"
#include "sam3/video_outputs.h"
#include "sam3/video_sources.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

struct PySource {
  std::unique_ptr<sam3::FrameSource> source;
};

struct PyOutputs {
  std::unique_ptr<sam3::VideoOutputs> outputs;
};

}  // namespace

void bind_video_io(py::module_& m) {
  py::class_<PySource>(m, "FrameSource", "Frames of a video file or a folder of images, decoded one at a time.")
      .def_property_readonly(
          "info",
          [](const PySource& s) {
            const auto& i = s.source->info();
            return py::dict("name"_a = i.name, "width"_a = i.width, "height"_a = i.height, "fps"_a = i.fps, "frame_count"_a = i.frame_count,
                            "frame_count_exact"_a = i.frame_count_exact);
          },
          "name, width, height, fps (0: unknown), frame_count (after the stride; 0: unknown), frame_count_exact (False: an estimate)")
      .def(
          "__iter__", [](PySource& s) -> PySource& { return s; }, py::return_value_policy::reference_internal)
      .def("__next__", [](PySource& s) {
        std::optional<sam3::VideoFrame> frame;
        {
          py::gil_scoped_release release;  // decoding
          frame = s.source->next();
        }
        if (!frame) throw py::stop_iteration();
        return std::move(*frame);
      });
  m.def(
      "open_frame_source",
      [](const std::string& path, int every, double fps, std::int64_t start) {
        sam3::FrameSourceOptions options;
        options.every = every;
        options.fps = fps;
        options.start_index = start;
        py::gil_scoped_release release;
        return PySource{sam3::open_frame_source(path, options)};
      },
      "path"_a, py::kw_only(), "every"_a = 1, "fps"_a = 0.0, "start"_a = 0);

  m.def(
      "video_source_identity",
      [](const std::string& path) {
        py::gil_scoped_release release;
        return sam3::video_source_identity(path);
      },
      "path"_a, "What the frames of a video file or folder come from (JSON), for VideoOutputs(source_json=...)");
  m.def(
      "check_prompt_frames",
      [](const std::string& path, const std::string& name, std::int64_t frame_count, bool frame_count_exact, int every,
         const std::vector<std::int64_t>& frames) {
        sam3::VideoInfo info;
        info.name = name;
        info.frame_count = frame_count;
        info.frame_count_exact = frame_count_exact;
        sam3::check_prompt_frames(path, info, every, frames);
      },
      "path"_a, "name"_a, "frame_count"_a, "frame_count_exact"_a, "every"_a, "frames"_a);
  m.def(
      "check_video_tracking_memory",
      [](const std::string& name, int width, int height, int hotstart_delay, bool hold_frames) {
        sam3::VideoInfo info;
        info.name = name;
        info.width = width;
        info.height = height;
        sam3::check_video_tracking_memory(info, hotstart_delay, hold_frames);
      },
      "name"_a, "width"_a, "height"_a, "hotstart_delay"_a, "hold_frames"_a);

  // sam3/video_outputs.h: what `sam3 track` writes (tracks.json, DAVIS, MOTS, overlay),
  // atomically and resumably; sam3cpp.Model.track(out=...) drives it.
  py::class_<PyOutputs>(m, "VideoOutputs", "One video's results written as sam3 track writes them (docs/video.md, Outputs).")
      .def(py::init([](const std::string& folder, const std::string& name, int width, int height, double fps, std::int64_t frame_count,
                       bool frame_count_exact, const std::vector<std::string>& formats, const std::vector<std::string>& labels,
                       const std::string& model_json, const std::string& settings_json, int checkpoint_every, bool resume,
                       const std::string& overlay_encoder, const std::string& source_json) {
             sam3::VideoInfo info{name, width, height, fps, frame_count};
             info.frame_count_exact = frame_count_exact;
             sam3::VideoOutputOptions o;
             o.formats.clear();
             for (const auto& f : formats) o.formats.push_back(sam3::parse_video_output_format(f));
             if (o.formats.empty())
               throw sam3::Error(sam3::ErrorCode::kInvalidArgument, "formats: give at least one of json, davis, mots, overlay");
             o.labels = labels;
             o.model_json = model_json;
             o.settings_json = settings_json;
             o.checkpoint_every = checkpoint_every;
             o.resume = resume;
             o.overlay_encoder = overlay_encoder;
             o.source_json = source_json;
             py::gil_scoped_release release;
             return PyOutputs{std::make_unique<sam3::VideoOutputs>(folder, info, std::move(o))};
           }),
           "folder"_a, py::kw_only(), "name"_a, "width"_a, "height"_a, "fps"_a, "frame_count"_a, "frame_count_exact"_a, "formats"_a,
           "labels"_a, "model_json"_a, "settings_json"_a, "checkpoint_every"_a = 25, "resume"_a = true, "overlay_encoder"_a = "auto",
           "source_json"_a = "null")
      .def(
          "resume_point",
          [](const PyOutputs& o) {
            const auto& r = o.outputs->resume_point();
            return py::dict("committed_frames"_a = r.committed_frames, "last_committed_index"_a = r.last_committed_index,
                            "restart_index"_a = r.restart_index, "complete"_a = r.complete);
          },
          "committed_frames (0: a fresh start), last_committed_index, restart_index (feed frames from it on), complete "
          "(every frame written: only finish() is left)")
      .def_property_readonly(
          "needs_pixels", [](const PyOutputs& o) { return o.outputs->needs_pixels(); },
          "whether write() needs each frame's pixels (the overlay); else frame may be None")
      .def(
          "write",
          [](PyOutputs& o, const py::object& frame, const VideoFrameOut& result) -> py::object {
            // No frame: its index and time without pixels (outputs that need none).
            const sam3::VideoFrame pixelless{{}, result.result.index, result.result.time_s};
            const sam3::VideoFrame& given = frame.is_none() ? pixelless : frame.cast<const sam3::VideoFrame&>();
            std::optional<sam3::VideoFrameResult> written;
            {
              py::gil_scoped_release release;
              written = o.outputs->write_frame(given, result.result);
            }
            if (!written) return py::none();
            return py::cast(VideoFrameOut{std::move(*written), result.width, result.height});
          },
          "frame"_a, "result"_a,
          "The result as written (ids carried over from an interrupted run), or None for a frame that run had written")
      .def("finish", [](PyOutputs& o) {
        py::gil_scoped_release release;
        o.outputs->finish();
      });
}
