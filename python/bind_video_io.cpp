#include "bind_video_io.h"

#include <pybind11/stl.h>

#include <memory>

#include "bind_video.h"
#include "sam3/error.h"
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
      .def_property_readonly("info", [](const PySource& s) {
        const auto& i = s.source->info();
        return py::dict("name"_a = i.name, "width"_a = i.width, "height"_a = i.height, "fps"_a = i.fps,
                        "frame_count"_a = i.frame_count);
      }, "name, width, height, fps (0: unknown), frame_count (after the stride; 0: unknown)")
      .def("__iter__", [](PySource& s) -> PySource& { return s; }, py::return_value_policy::reference_internal)
      .def("__next__", [](PySource& s) {
        std::optional<sam3::VideoFrame> frame;
        {
          py::gil_scoped_release release;  // decoding
          frame = s.source->next();
        }
        if (!frame) throw py::stop_iteration();
        return std::move(*frame);
      });
  m.def("open_frame_source", [](const std::string& path, int every, double fps, std::int64_t start) {
          sam3::FrameSourceOptions options;
          options.every = every;
          options.fps = fps;
          options.start_index = start;
          py::gil_scoped_release release;
          return PySource{sam3::open_frame_source(path, options)};
        },
        "path"_a, py::kw_only(), "every"_a = 1, "fps"_a = 0.0, "start"_a = 0);

  // sam3/video_outputs.h: what `sam3 track` writes (tracks.json, DAVIS, MOTS, overlay),
  // atomically and resumably; sam3cpp.Model.track(out=...) drives it.
  py::class_<PyOutputs>(m, "VideoOutputs", "One video's results written as sam3 track writes them (docs/video.md, Outputs).")
      .def(py::init([](const std::string& folder, const std::string& name, int width, int height, double fps,
                       std::int64_t frame_count, const std::vector<std::string>& formats, const std::vector<std::string>& labels,
                       const std::string& model_json, const std::string& settings_json, int checkpoint_every, bool resume,
                       const std::string& overlay_encoder) {
             sam3::VideoInfo info{name, width, height, fps, frame_count};
             sam3::VideoOutputOptions o;
             o.formats.clear();
             for (const auto& f : formats) o.formats.push_back(sam3::parse_video_output_format(f));
             if (o.formats.empty()) throw sam3::Error(sam3::ErrorCode::kInvalidArgument, "formats: give at least one of json, davis, mots, overlay");
             o.labels = labels;
             o.model_json = model_json;
             o.settings_json = settings_json;
             o.checkpoint_every = checkpoint_every;
             o.resume = resume;
             o.overlay_encoder = overlay_encoder;
             py::gil_scoped_release release;
             return PyOutputs{std::make_unique<sam3::VideoOutputs>(folder, info, std::move(o))};
           }),
           "folder"_a, py::kw_only(), "name"_a, "width"_a, "height"_a, "fps"_a, "frame_count"_a, "formats"_a, "labels"_a,
           "model_json"_a, "settings_json"_a, "checkpoint_every"_a = 25, "resume"_a = true, "overlay_encoder"_a = "auto")
      .def("resume_point", [](const PyOutputs& o) {
        const auto& r = o.outputs->resume_point();
        return py::dict("committed_frames"_a = r.committed_frames, "last_committed_index"_a = r.last_committed_index,
                        "restart_index"_a = r.restart_index);
      }, "committed_frames (0: a fresh start), last_committed_index, restart_index (feed frames from it on)")
      .def("write", [](PyOutputs& o, const sam3::VideoFrame& frame, const VideoFrameOut& result) {
             py::gil_scoped_release release;
             o.outputs->write(frame, result.result);
           },
           "frame"_a, "result"_a)
      .def("finish", [](PyOutputs& o) {
        py::gil_scoped_release release;
        o.outputs->finish();
      });
}
