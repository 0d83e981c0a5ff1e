#include "bind_video_io.h"

#include <memory>

#include "sam3/video_sources.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

struct PySource {
  std::unique_ptr<sam3::FrameSource> source;
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
}
