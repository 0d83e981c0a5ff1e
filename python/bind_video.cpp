#include "bind_video.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "sam3/error.h"
#include "sam3/video_tracker.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

[[noreturn]] void invalid(const std::string& message) { throw sam3::Error(sam3::ErrorCode::kInvalidArgument, message); }

sam3::Image (*g_image_of)(const py::object&) = nullptr;

// One frame's objects as numpy arrays: ids, prompts, scores (N), boxes (N x 4), masks (N x H x W).
using FrameOut = VideoFrameOut;

float number(const py::handle& v, const std::string& what) {
  if (!py::isinstance<py::int_>(v) && !py::isinstance<py::float_>(v) && !py::isinstance(v, py::module_::import("numpy").attr("number"))) {
    invalid(what + " must be a number, got " + std::string(py::repr(v)));
  }
  return v.cast<float>();
}

// A Python int as a frame index, refused by name when it is no int or does not fit 64 bits
// (pybind's own cast error names neither the argument nor the value).
std::int64_t frame_index(const py::handle& v, const std::string& what) {
  if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
    invalid(what + " must be a frame index (an int), got " + std::string(py::repr(v)));
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0 || n < 0) invalid(what + " must be a frame index from 0 to 2**63 - 1, got " + std::string(py::repr(v)));
  return n;
}

// An int option within the bounds sam3 track's option has (docs/video.md).
int bounded(const py::handle& v, const char* name, long long low, long long high) {
  if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v)) {
    invalid(std::string(name) + " must be an int, got " + std::string(py::repr(v)));
  }
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0 || n < low || n > high) {
    invalid(std::string(name) + " must be from " + std::to_string(low) + " to " + std::to_string(high) + ", got " +
            std::string(py::repr(v)));
  }
  return static_cast<int>(n);
}

// A float option within sam3 track's bounds (NaN is refused: it passes every comparison).
float bounded(const py::handle& v, const char* name, double low, double high) {
  const float f = number(v, name);
  if (!(f >= low && f <= high))
    invalid(std::string(name) + " must be from " + std::to_string(low) + " to " + std::to_string(high) + ", got " +
            std::string(py::repr(v)));
  return f;
}

// A list or tuple-like of items (a numpy array too), never a string or a lone number: `what` and the
// shape it must have are said otherwise (a flat "points": [160, 80] raised pybind's TypeError).
py::sequence sequence_of(const py::handle& v, const std::string& what, const char* shape) {
  if (!py::isinstance<py::sequence>(v) || py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v))
    invalid(what + " must be " + shape + ", got " + std::string(py::repr(v)));
  return py::reinterpret_borrow<py::sequence>(v);
}

// The keys a tracked object takes. Any other is refused naming it and these, as the server's JSON
// prompts refuse theirs (pure/prompt_json.cpp; that codec cannot read these dicts: a frame key,
// and a point's sign a bool, not "pos"/"neg"): SAM2's "labels" beside "points" was dropped, and
// its negative clicks taken as positive.
constexpr const char* kObjectKeys[] = {"frame", "points", "box"};

void refuse_unknown_keys(const py::dict& d, const std::string& where) {
  for (const auto& item : d) {
    const std::string key = py::isinstance<py::str>(item.first) ? item.first.cast<std::string>() : std::string(py::repr(item.first));
    if (py::isinstance<py::str>(item.first) && std::find(std::begin(kObjectKeys), std::end(kObjectKeys), key) != std::end(kObjectKeys))
      continue;
    std::string message = where + " has an unknown key " + std::string(py::repr(item.first)) +
                          "; the keys of a tracked object are \"frame\", \"points\", \"box\"";
    if (key == "labels" || key == "point_labels")
      message += " (a point's sign is its third item: (x, y, False) is a negative click)";
    else if (key == "label")
      message += " (the outputs label tracked objects object1, object2, ...; a text to track is track(frames, \"car\"))";
    else if (key == "point" || key == "boxes")
      message += " (\"points\": [(x, y), ...], \"box\": (x0, y0, x1, y1))";
    invalid(message);
  }
}

// objects=[{"frame": 0, "points": [(x, y) or (x, y, positive)], "box": (x0, y0, x1, y1)}]
std::vector<sam3::VideoObjectPrompt> objects_from(const py::list& objects) {
  std::vector<sam3::VideoObjectPrompt> out;
  for (const auto& item : objects) {
    const std::string where = "objects[" + std::to_string(out.size()) + "]";
    if (!py::isinstance<py::dict>(item)) invalid(where + " must be a dict with frame and points and/or box");
    const auto d = py::reinterpret_borrow<py::dict>(item);
    refuse_unknown_keys(d, where);
    sam3::VideoObjectPrompt o;
    if (!d.contains("frame")) invalid(where + ": \"frame\" must be a frame index");
    o.frame = frame_index(d["frame"], where + "'s \"frame\"");
    if (d.contains("points")) {
      const char* shape = "a list of points (x, y) or (x, y, positive), e.g. [(160, 80)]";
      const auto points = sequence_of(d["points"], where + "'s \"points\"", shape);
      for (size_t k = 0; k < points.size(); ++k) {
        const std::string at = where + "'s point " + std::to_string(k);
        const auto seq = sequence_of(points[k], at, "(x, y) or (x, y, positive): \"points\" is a list of them, e.g. [(160, 80)]");
        if (seq.size() != 2 && seq.size() != 3)
          invalid(at + " must be (x, y) or (x, y, positive), got " + std::string(py::repr(points[k])));
        sam3::PointPrompt pt{number(seq[0], at + "'s x"), number(seq[1], at + "'s y"), true};
        if (seq.size() == 3) {
          if (!py::isinstance<py::bool_>(seq[2]))
            invalid(at + "'s third item (positive) must be True or False, got " + std::string(py::repr(seq[2])));
          pt.positive = seq[2].cast<bool>();
        }
        o.points.push_back(pt);
      }
    }
    if (d.contains("box") && !d["box"].is_none()) {
      const auto seq = sequence_of(d["box"], where + "'s \"box\"", "(x0, y0, x1, y1)");
      if (seq.size() != 4) invalid(where + "'s \"box\" must be (x0, y0, x1, y1), got " + std::string(py::repr(d["box"])));
      o.box = sam3::Box{number(seq[0], where + "'s x0"), number(seq[1], where + "'s y0"), number(seq[2], where + "'s x1"),
                        number(seq[3], where + "'s y1")};
    }
    out.push_back(std::move(o));
  }
  return out;
}

// The tracker and the video's size (for the masks' arrays of the frames finish() returns).
struct PyTracker {
  std::unique_ptr<sam3::VideoTracker> tracker;
  int width = 0, height = 0;
};

std::vector<FrameOut> wrap(std::vector<sam3::VideoFrameResult> results, int width, int height) {
  std::vector<FrameOut> out;
  for (auto& r : results) out.push_back({std::move(r), width, height});
  return out;
}

// One frame into the tracker (without the GIL), the frames that became final out.
std::vector<FrameOut> push_into(PyTracker& t, const sam3::VideoFrame& frame) {
  std::vector<sam3::VideoFrameResult> results;
  {
    py::gil_scoped_release release;
    results = t.tracker->push(frame);
  }
  t.width = frame.image.width;
  t.height = frame.image.height;
  return wrap(std::move(results), t.width, t.height);
}

}  // namespace

void bind_video(py::module_& m, sam3::Image (*image_of)(const py::object&)) {
  g_image_of = image_of;
  py::class_<FrameOut>(m, "VideoFrameResult", "One frame's tracked objects (ids that stay through the video).")
      .def_property_readonly("index", [](const FrameOut& f) { return f.result.index; })
      .def_property_readonly("time", [](const FrameOut& f) { return f.result.time_s; })
      .def_property_readonly("ids",
                             [](const FrameOut& f) {
                               py::array_t<std::int32_t> a(static_cast<py::ssize_t>(f.result.objects.size()));
                               for (size_t i = 0; i < f.result.objects.size(); ++i) a.mutable_data()[i] = f.result.objects[i].id;
                               return a;
                             })
      .def_property_readonly("prompts",
                             [](const FrameOut& f) {
                               py::array_t<std::int32_t> a(static_cast<py::ssize_t>(f.result.objects.size()));
                               for (size_t i = 0; i < f.result.objects.size(); ++i) a.mutable_data()[i] = f.result.objects[i].prompt;
                               return a;
                             })
      .def_property_readonly("scores",
                             [](const FrameOut& f) {
                               py::array_t<float> a(static_cast<py::ssize_t>(f.result.objects.size()));
                               for (size_t i = 0; i < f.result.objects.size(); ++i) a.mutable_data()[i] = f.result.objects[i].score;
                               return a;
                             })
      .def_property_readonly(
          "boxes",
          [](const FrameOut& f) {
            py::array_t<float> a({static_cast<py::ssize_t>(f.result.objects.size()), py::ssize_t{4}});
            for (size_t i = 0; i < f.result.objects.size(); ++i) {
              const auto& b = f.result.objects[i].box;
              const float v[4] = {b.x0, b.y0, b.x1, b.y1};
              std::memcpy(a.mutable_data() + i * 4, v, sizeof v);
            }
            return a;
          },
          "float32 N x 4: x0, y0, x1, y1 in pixels")
      .def_property_readonly(
          "masks",
          [](const FrameOut& f) {
            py::array_t<bool> a(
                {static_cast<py::ssize_t>(f.result.objects.size()), static_cast<py::ssize_t>(f.height), static_cast<py::ssize_t>(f.width)});
            const size_t plane = static_cast<size_t>(f.width) * f.height;
            auto* bytes = reinterpret_cast<std::uint8_t*>(a.mutable_data());
            std::memset(bytes, 0, plane * f.result.objects.size());
            for (size_t i = 0; i < f.result.objects.size(); ++i) f.result.objects[i].mask.paint({bytes + i * plane, plane}, 1);
            return a;
          },
          "bool N x H x W, never overlapping");

  m.def(
      "make_frame",
      [](const py::object& image, const py::object& index, double time) {
        return sam3::VideoFrame{g_image_of(image), frame_index(index, "index"), time};
      },
      "image"_a, "index"_a, "time"_a, "A frame from an image (numpy, path, PIL), to push and to write with its result");
  py::class_<sam3::VideoFrame>(m, "VideoFrame", "A decoded frame (sam3cpp.read_video): its index in the source, time, pixels.")
      .def_readonly("index", &sam3::VideoFrame::index)
      .def_readonly("time", &sam3::VideoFrame::time_s)
      .def_property_readonly(
          "image",
          [](const sam3::VideoFrame& f) {
            py::array_t<std::uint8_t> a(
                {static_cast<py::ssize_t>(f.image.height), static_cast<py::ssize_t>(f.image.width), py::ssize_t{3}});
            std::memcpy(a.mutable_data(), f.image.rgb.data(), f.image.rgb.size());
            return a;
          },
          "uint8 H x W x 3, RGB");

  py::class_<PyTracker>(m, "VideoTracker", "SAM 3.1's video tracker: push frames, get final frames back.")
      .def(py::init([](std::shared_ptr<sam3::Model> model, std::vector<std::string> texts, const py::list& objects,
                       const py::object& detection_threshold, const py::object& new_object_threshold, const py::object& hotstart_delay,
                       const py::object& hotstart_unmatched, const py::object& hotstart_duplicate,
                       const py::object& confirmation_detections, const py::object& boundary_margin, const py::object& max_objects,
                       const py::object& recondition_every, const py::object& fill_hole_area, const py::object& pack_new_objects) {
             // The bounds of sam3 track's options: hotstart_delay frames are held (with their
             // masks) until final, so an unbounded delay grows memory with the video.
             sam3::VideoTrackerOptions o;
             o.detection_threshold = bounded(detection_threshold, "detection_threshold", 0.0, 1.0);
             o.new_object_threshold = bounded(new_object_threshold, "new_object_threshold", 0.0, 1.0);
             o.hotstart_delay = bounded(hotstart_delay, "hotstart_delay", 0LL, 1000LL);
             o.hotstart_unmatched = bounded(hotstart_unmatched, "hotstart_unmatched", 0LL, 1000LL);
             o.hotstart_duplicate = bounded(hotstart_duplicate, "hotstart_duplicate", 0LL, 1000LL);
             o.confirmation_detections = bounded(confirmation_detections, "confirmation_detections", 0LL, 1000LL);
             o.boundary_margin = bounded(boundary_margin, "boundary_margin", 0.0, 0.49);
             o.max_objects = bounded(max_objects, "max_objects", 0LL, 100000LL);
             o.recondition_every = bounded(recondition_every, "recondition_every", 0LL, 1000000LL);
             o.fill_hole_area = bounded(fill_hole_area, "fill_hole_area", 0LL, 1000000LL);
             if (!py::isinstance<py::bool_>(pack_new_objects))
               invalid("pack_new_objects must be True or False, got " + std::string(py::repr(pack_new_objects)));
             o.pack_new_objects = pack_new_objects.cast<bool>();
             sam3::VideoPrompts prompts{std::move(texts), objects_from(objects)};
             py::gil_scoped_release release;
             return std::make_unique<PyTracker>(PyTracker{std::make_unique<sam3::VideoTracker>(std::move(model), std::move(prompts), o)});
           }),
           "model"_a, "texts"_a, "objects"_a, py::kw_only(), "detection_threshold"_a = 0.4f, "new_object_threshold"_a = 0.65f,
           "hotstart_delay"_a = 15, "hotstart_unmatched"_a = 8, "hotstart_duplicate"_a = 8, "confirmation_detections"_a = 3,
           "boundary_margin"_a = 0.025f, "max_objects"_a = 0, "recondition_every"_a = 16, "fill_hole_area"_a = 0,
           "pack_new_objects"_a = true)
      .def(
          "push",
          [](PyTracker& t, const py::object& image, const py::object& index, double time) {
            return push_into(t, sam3::VideoFrame{g_image_of(image), frame_index(index, "index"), time});
          },
          "frame"_a, "index"_a, "time"_a)
      .def(
          "push_frame", [](PyTracker& t, const sam3::VideoFrame& frame) { return push_into(t, frame); }, "frame"_a,
          "A frame from a source (sam3cpp.read_video), tracked without a copy through numpy")
      .def(
          "check_prompt_places", [](const PyTracker& t, int width, int height) { t.tracker->check_prompt_places(width, height); },
          "width"_a, "height"_a, "Refuses a point or box outside frames of this size, before anything is written")
      .def("finish", [](PyTracker& t) {
        std::vector<sam3::VideoFrameResult> results;
        {
          py::gil_scoped_release release;
          results = t.tracker->finish();
        }
        return wrap(std::move(results), t.width, t.height);
      });
}
