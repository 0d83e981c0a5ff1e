// sam3cpp._native: the sam3cpp library for Python (pybind11), numpy arrays in and out.
// The Python package (sam3cpp/__init__.py) re-exports it; see sam3cpp/__init__.pyi.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <future>
#include <map>
#include <optional>

#include "bind_label_map.h"
#include "bind_video.h"
#include "bind_video_io.h"
#include "sam3/answer_json.h"
#include "sam3/error.h"
#include "sam3/export.h"
#include "sam3/hub.h"
#include "sam3/image.h"
#include "sam3/image_segmenter.h"
#include "sam3/interactive_segmenter.h"
#include "sam3/labeler.h"
#include "sam3/model.h"
#include "sam3/tokenizer.h"
#include "sam3/version.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

using BoolArray = py::array_t<bool, py::array::c_style>;

[[noreturn]] void invalid(const std::string& message) { throw sam3::Error(sam3::ErrorCode::kInvalidArgument, message); }

// Python's one Model class serves both kinds of model (docs/python.md); each call runs on the
// C++ facade of the model's kind, and a call the model's kind does not take is an
// InvalidArgumentError naming what it takes.
sam3::ImageSegmenter text_facade(const std::shared_ptr<sam3::Model>& model) {
  if (model->kind() != sam3::ModelKind::kText) {
    invalid(
        "this is SAM3's interactive (tracker) model: it takes points and boxes, not text prompts; give "
        "points=[(x, y)] or box=(x0, y0, x1, y1), or load a text-prompted SAM3 model for words and exemplar boxes");
  }
  return sam3::ImageSegmenter(model);
}

sam3::InteractiveSegmenter click_facade(const std::shared_ptr<sam3::Model>& model) {
  if (model->kind() != sam3::ModelKind::kInteractive) {
    invalid(
        "this SAM3 model takes text and exemplar boxes, not clicks: points, box and segment_everything need "
        "SAM3's interactive model (onnx-community/sam3-tracker-ONNX: vision_encoder.onnx and "
        "prompt_encoder_mask_decoder.onnx)");
  }
  return sam3::InteractiveSegmenter(model);
}

// A value of the caller's as a C++ one, or sam3's error naming it (never pybind's bare cast
// error): `what` says which value ("point 1's x") and what it should be.
template <typename T>
T value_of(const py::handle& v, const std::string& what, const char* should_be) {
  try {
    return v.cast<T>();
  } catch (const py::cast_error&) {
    invalid(what + " must be " + should_be + ", got " + std::string(py::repr(v)));
  }
}
float number_of(const py::handle& v, const std::string& what) { return value_of<float>(v, what, "a number (pixels)"); }
std::string text_of(const py::handle& v, const std::string& what) {
  if (!py::isinstance<py::str>(v)) invalid(what + " must be a string, got " + std::string(py::repr(v)));
  return v.cast<std::string>();
}
// True/False or "pos"/"neg".
bool polarity_of(const py::handle& v, const std::string& what) {
  if (py::isinstance<py::str>(v)) {
    const auto polarity = sam3::parse_polarity(v.cast<std::string>());
    if (!polarity) invalid(what + " is True/False or \"pos\"/\"neg\", got " + std::string(py::repr(v)));
    return *polarity;
  }
  // Only bools (Python's or numpy's): pybind would take any object with a truth value (7, [0]).
  if (!py::isinstance<py::bool_>(v) && !py::isinstance(v, py::module_::import("numpy").attr("bool_"))) {
    invalid(what + " is True/False or \"pos\"/\"neg\", got " + std::string(py::repr(v)));
  }
  return v.cast<bool>();
}

// Refuses a width x height of over max_pixels before anything is allocated or copied for it.
void check_pixels(std::int64_t width, std::int64_t height, std::int64_t max_pixels, const char* what) {
  if (width > 0 && height > 0 && (width > max_pixels / height || width > INT32_MAX || height > INT32_MAX)) {
    throw sam3::Error(sam3::ErrorCode::kImageTooLarge, std::string(what) + " is " + std::to_string(width) + "x" + std::to_string(height) +
                                                           ", over the limit of " + std::to_string(max_pixels) + " pixels (max_pixels)");
  }
}

// HxW, HxWx3 or HxWx4 uint8 (RGB[A]) -> sam3::Image, judged by its shape first and read through
// its strides: a view (broadcast, transposed, sliced) is never copied whole.
sam3::Image image_from_array(const py::array& a, std::int64_t max_pixels) {
  if (a.dtype().kind() != 'u' || a.itemsize() != 1) {
    invalid("the image array must be uint8 (got dtype " + std::string(py::str(a.dtype())) + ")");
  }
  const int channels = a.ndim() == 2 ? 1 : a.ndim() == 3 && a.shape(2) <= 4 ? static_cast<int>(a.shape(2)) : 0;
  if (channels != 1 && channels != 3 && channels != 4) invalid("the image array must be HxW, HxWx3 (RGB) or HxWx4 (RGBA)");
  if (a.shape(0) <= 0 || a.shape(1) <= 0) invalid("the image array is empty");
  check_pixels(a.shape(1), a.shape(0), max_pixels, "the image");
  sam3::Image image;
  image.height = static_cast<int>(a.shape(0));
  image.width = static_cast<int>(a.shape(1));
  image.rgb.resize(static_cast<size_t>(image.width) * image.height * 3);
  const auto* base = static_cast<const std::uint8_t*>(a.data());
  const py::ssize_t sy = a.strides(0), sx = a.strides(1), sc = channels == 1 ? 0 : a.strides(2);
  std::uint8_t* out = image.rgb.data();
  for (py::ssize_t y = 0; y < a.shape(0); ++y) {
    for (py::ssize_t x = 0; x < a.shape(1); ++x, out += 3) {
      const std::uint8_t* px = base + y * sy + x * sx;
      for (int c = 0; c < 3; ++c) out[c] = px[c * sc];
    }
  }
  return image;
}

// Runs call(token) on a helper thread while the interpreter's thread, taking the GIL only to
// ask, checks for signals every 50 ms: Ctrl-C stops the run inside ONNX Runtime (the token)
// and its KeyboardInterrupt is raised here, instead of after the whole encode. Called and
// returning with the GIL held.
template <typename F>
auto interruptible(F&& call) {
  const sam3::StopSource stop;
  auto running = std::async(std::launch::async, [&call, token = stop.token()] { return call(token); });
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    while (running.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {  // a Python signal handler raised (KeyboardInterrupt)
        interrupted = true;
        stop.request_stop();
        break;
      }
    }
    if (interrupted) running.wait();  // ends within about a network node
  }
  if (interrupted) {
    try {
      running.get();
    } catch (const sam3::Error&) {  // kCancelled, as asked
    }
    throw py::error_already_set();
  }
  return running.get();
}

// A path (str or os.PathLike), a numpy array or a PIL image.
sam3::Image image_from_object(const py::object& obj, std::int64_t max_pixels) {
  if (py::isinstance<py::str>(obj) || py::hasattr(obj, "__fspath__")) {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(obj));
    sam3::ImageLoadOptions options;
    options.max_pixels = max_pixels;
    py::gil_scoped_release release;
    return sam3::load_image(path, options);
  }
  if (py::isinstance<py::array>(obj)) return image_from_array(obj.cast<py::array>(), max_pixels);
  if (py::hasattr(obj, "convert") && py::hasattr(obj, "size")) {  // PIL.Image: its size is known before converting
    const auto size = obj.attr("size").cast<std::pair<std::int64_t, std::int64_t>>();
    check_pixels(size.first, size.second, max_pixels, "the image");
    const auto np = py::module_::import("numpy");
    const std::string mode = py::hasattr(obj, "mode") ? py::str(obj.attr("mode")).cast<std::string>() : "";
    // Pillow's convert("RGB") clips 16-bit and 32-bit integer pixels at 255 (a white image): they
    // take their high byte, as the file loader does for 16-bit PNG and TIFF.
    if (mode == "I" || mode.rfind("I;16", 0) == 0) {
      const py::object wide = np.attr("asarray")(obj).attr("astype")("int64");
      return image_from_array(np.attr("clip")(wide.attr("__rshift__")(8), 0, 255).attr("astype")("uint8"), max_pixels);
    }
    if (mode == "F")
      invalid("a PIL image of mode F (floating point) has no 8-bit pixels: scale it to 0..255 and convert it to \"L\" or \"RGB\"");
    return image_from_array(np.attr("asarray")(obj.attr("convert")("RGB")), max_pixels);
  }
  invalid("image must be a path, a numpy uint8 array (HxW, HxWx3, HxWx4) or a PIL.Image");
}

// Writes `m` as 0/1 bytes into numpy's bool storage of its image's size (zeroed here first).
void paint_into(bool* storage, const sam3::Mask& m) {
  const size_t plane = static_cast<size_t>(m.width()) * static_cast<size_t>(m.height());
  auto* bytes = reinterpret_cast<std::uint8_t*>(storage);
  std::memset(bytes, 0, plane);
  m.paint({bytes, plane}, 1);
}

BoolArray mask_array(const sam3::Mask& m) {
  BoolArray out({m.height(), m.width()});
  paint_into(out.mutable_data(), m);
  return out;
}

// An H x W array of any numeric or bool dtype -> a 0/1 mask, its size judged before any copy.
sam3::Mask mask_from_array(const py::array& any) {
  if (any.ndim() != 2) invalid("the mask must be a 2-D array (H x W)");
  check_pixels(any.shape(1), any.shape(0), sam3::ImageLoadOptions{}.max_pixels, "the mask");
  const auto a = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(any);
  if (!a) invalid("the mask must hold numbers or bools (got dtype " + std::string(py::str(any.dtype())) + ")");
  return sam3::Mask::from_raster(static_cast<int>(a.shape(1)), static_cast<int>(a.shape(0)), {a.data(), static_cast<size_t>(a.size())});
}

std::vector<sam3::BoxPrompt> boxes_from(const py::object& boxes) {
  std::vector<sam3::BoxPrompt> out;
  if (boxes.is_none()) return out;
  if (!py::isinstance<py::iterable>(boxes) || py::isinstance<py::str>(boxes)) invalid("boxes must be a list of boxes");
  for (const auto& item : boxes) {
    const std::string where = "box " + std::to_string(out.size() + 1);
    if (!py::isinstance<py::sequence>(item) || py::isinstance<py::str>(item)) {
      invalid(where + ": a box is (x0, y0, x1, y1) or (x0, y0, x1, y1, positive)");
    }
    const auto seq = py::reinterpret_borrow<py::sequence>(item);
    if (seq.size() != 4 && seq.size() != 5) invalid(where + ": a box is (x0, y0, x1, y1) or (x0, y0, x1, y1, positive)");
    sam3::BoxPrompt b;
    b.box = {number_of(seq[0], where + "'s x0"), number_of(seq[1], where + "'s y0"), number_of(seq[2], where + "'s x1"),
             number_of(seq[3], where + "'s y1")};
    if (seq.size() == 5) b.positive = polarity_of(seq[4], where + "'s fifth item");
    out.push_back(b);
  }
  return out;
}

// What segment() returns: instances plus N x H x W / N x 4 / N array views.
struct Result {
  std::string text;
  std::vector<sam3::Instance> instances;
  int width = 0, height = 0;
  sam3::PromptTimings timings;
  std::optional<float> object_score;  // clicks on the interactive model
};

// points=[(x, y) or (x, y, positive)] -> clicks; a point's third item is True/False or "pos"/"neg".
std::vector<sam3::PointPrompt> points_from(const py::object& obj) {
  std::vector<sam3::PointPrompt> out;
  if (obj.is_none()) return out;
  if (!py::isinstance<py::iterable>(obj) || py::isinstance<py::str>(obj)) invalid("points must be a list of (x, y) points");
  for (const auto& item : obj) {
    const std::string where = "point " + std::to_string(out.size() + 1);
    if (!py::isinstance<py::sequence>(item) || py::isinstance<py::str>(item)) invalid(where + ": a point is (x, y) or (x, y, positive)");
    const auto seq = py::reinterpret_borrow<py::sequence>(item);
    if (seq.size() != 2 && seq.size() != 3) invalid(where + ": a point is (x, y) or (x, y, positive)");
    sam3::PointPrompt p{number_of(seq[0], where + "'s x"), number_of(seq[1], where + "'s y"), true};
    if (seq.size() == 3) p.positive = polarity_of(seq[2], where + "'s third item");
    out.push_back(p);
  }
  return out;
}

std::optional<sam3::Box> box_from(const py::object& obj) {
  if (obj.is_none()) return std::nullopt;
  if (!py::isinstance<py::sequence>(obj) || py::isinstance<py::str>(obj) || py::len(obj) != 4) {
    invalid("box is (x0, y0, x1, y1) in pixels");
  }
  const auto seq = py::reinterpret_borrow<py::sequence>(obj);
  return sam3::Box{number_of(seq[0], "box's x0"), number_of(seq[1], "box's y0"), number_of(seq[2], "box's x1"),
                   number_of(seq[3], "box's y1")};
}

struct Embedding {
  sam3::ImageEmbedding value;
};

sam3::SegmentOptions options_of(float threshold, float mask_threshold, std::int64_t min_area, int max_instances, float nms) {
  sam3::SegmentOptions o;
  o.score_threshold = threshold;
  o.mask_threshold = mask_threshold;
  o.min_area = min_area;
  o.max_instances = max_instances;
  o.nms_iou = nms;
  return o;
}

Result result_of(sam3::PromptResult r, int width, int height) { return {r.prompt.text, std::move(r.instances), width, height, r.timings}; }

// None, "cuda,cpu", or a list of names ("cuda:device_id=1") and (name, {option: value}) pairs.
std::vector<sam3::ExecutionProvider> providers_from_object(const py::object& o) {
  if (o.is_none()) return {};
  if (py::isinstance<py::str>(o)) return sam3::parse_execution_providers({o.cast<std::string>()});
  std::vector<sam3::ExecutionProvider> out;
  const auto bad = [] {
    return sam3::Error(sam3::ErrorCode::kInvalidArgument,
                       "providers is a list of names such as \"cuda\" or (name, {option: value}) pairs such as "
                       "(\"cuda\", {\"device_id\": 1})");
  };
  if (!py::isinstance<py::sequence>(o)) throw bad();
  for (const py::handle item : o) {
    if (py::isinstance<py::str>(item)) {
      for (auto& p : sam3::parse_execution_providers({item.cast<std::string>()})) out.push_back(std::move(p));
      continue;
    }
    if (!py::isinstance<py::sequence>(item) || py::len(item) != 2 || !py::isinstance<py::str>(item[py::int_(0)]) ||
        !py::isinstance<py::dict>(item[py::int_(1)])) {
      throw bad();
    }
    sam3::ExecutionProvider p = sam3::parse_execution_provider(item[py::int_(0)].cast<std::string>());
    for (const auto& [key, value] : item[py::int_(1)].cast<py::dict>()) {
      // ONNX Runtime reads flags as 1/0; other values as their text.
      p.options[py::str(key)] = py::isinstance<py::bool_>(value) ? (value.cast<bool>() ? "1" : "0") : std::string(py::str(value));
    }
    out.push_back(std::move(p));
  }
  sam3::validate_execution_providers(out);
  return out;
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "sam3cpp: SAM3 text-prompted instance segmentation on ONNX Runtime, without PyTorch";

  // sam3cpp.Error and one subclass per error code, carrying the library's one-line message.
  auto base = py::register_exception<sam3::Error>(m, "Error", PyExc_RuntimeError);
  std::map<sam3::ErrorCode, py::object> classes;
  for (const auto* t = sam3::error_traits_begin(); t != sam3::error_traits_end(); ++t) {
    auto cls =
        py::reinterpret_steal<py::object>(PyErr_NewException(("sam3cpp." + std::string(t->python_exception)).c_str(), base.ptr(), nullptr));
    cls.attr("code") = t->name;
    m.attr(t->python_exception) = cls;
    classes[t->code] = cls;
  }
  static auto* error_classes = new std::map<sam3::ErrorCode, py::object>(classes);  // lives as long as the interpreter
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const sam3::Error& e) {
      PyErr_SetString(error_classes->at(e.code()).ptr(), e.what());
    }
  });

  py::class_<sam3::Box>(m, "Box")
      .def_readonly("x0", &sam3::Box::x0)
      .def_readonly("y0", &sam3::Box::y0)
      .def_readonly("x1", &sam3::Box::x1)
      .def_readonly("y1", &sam3::Box::y1)
      .def("__iter__", [](const sam3::Box& b) { return py::iter(py::make_tuple(b.x0, b.y0, b.x1, b.y1)); })
      .def("__repr__", [](const sam3::Box& b) {
        return "Box(" + std::to_string(b.x0) + ", " + std::to_string(b.y0) + ", " + std::to_string(b.x1) + ", " + std::to_string(b.y1) +
               ")";
      });

  py::class_<sam3::Instance>(m, "Instance", "One found instance: its mask, box (x0, y0, x1, y1 pixels), score and area.")
      .def_readonly("score", &sam3::Instance::score)
      .def_readonly("box", &sam3::Instance::box)
      .def_readonly("area", &sam3::Instance::area)
      .def_property_readonly(
          "mask", [](const sam3::Instance& i) { return mask_array(i.mask); }, "bool array H x W");

  py::class_<Result>(m, "Result", "The instances of one prompt in one image, best score first.")
      .def_readonly("text", &Result::text)
      .def_readonly("instances", &Result::instances)
      .def_property_readonly(
          "masks",
          [](const Result& r) {
            BoolArray out(
                {static_cast<py::ssize_t>(r.instances.size()), static_cast<py::ssize_t>(r.height), static_cast<py::ssize_t>(r.width)});
            const size_t plane = static_cast<size_t>(r.width) * r.height;
            for (size_t i = 0; i < r.instances.size(); ++i) paint_into(out.mutable_data() + i * plane, r.instances[i].mask);
            return out;
          },
          "bool array N x H x W")
      .def_property_readonly(
          "boxes",
          [](const Result& r) {
            py::array_t<float> out({static_cast<py::ssize_t>(r.instances.size()), py::ssize_t{4}});
            auto v = out.mutable_unchecked<2>();
            for (size_t i = 0; i < r.instances.size(); ++i) {
              const auto& b = r.instances[i].box;
              v(i, 0) = b.x0, v(i, 1) = b.y0, v(i, 2) = b.x1, v(i, 3) = b.y1;
            }
            return out;
          },
          "float32 array N x 4: x0, y0, x1, y1 in pixels")
      .def_property_readonly(
          "scores",
          [](const Result& r) {
            py::array_t<float> out(static_cast<py::ssize_t>(r.instances.size()));
            for (size_t i = 0; i < r.instances.size(); ++i) out.mutable_data()[i] = r.instances[i].score;
            return out;
          },
          "float32 array N")
      .def_property_readonly("timings",
                             [](const Result& r) {
                               return py::dict("encode_text_ms"_a = sam3::rounded_ms(r.timings.encode_text_ms),
                                               "decode_ms"_a = sam3::rounded_ms(r.timings.decode_ms),
                                               "postprocess_ms"_a = sam3::rounded_ms(r.timings.postprocess_ms),
                                               "text_cached"_a = r.timings.text_cached);
                             })
      .def_readonly("object_score", &Result::object_score,
                    "clicks: the model's confidence that there is an object at all (0..1); None for text prompts")
      .def("__len__", [](const Result& r) { return r.instances.size(); })
      .def("__repr__", [](const Result& r) { return "Result(" + r.text + ": " + std::to_string(r.instances.size()) + " instances)"; });

  py::class_<Embedding>(m, "Embedding", "One encoded image; prompts on it cost only the decoder.")
      .def_property_readonly("width", [](const Embedding& e) { return e.value.width(); })
      .def_property_readonly("height", [](const Embedding& e) { return e.value.height(); })
      .def_property_readonly("timings", [](const Embedding& e) {
        return py::dict("preprocess_ms"_a = sam3::rounded_ms(e.value.preprocess_ms()),
                        "encode_ms"_a = sam3::rounded_ms(e.value.encode_ms()));
      });

  py::class_<sam3::Model, std::shared_ptr<sam3::Model>>(m, "Model", "A SAM3 ONNX model folder, loaded once and shared by threads.")
      .def(py::init([](const std::filesystem::path& path, int threads, const std::filesystem::path& vocabulary, const py::object& providers,
                       const std::string& precision) {
             sam3::ModelOptions o;
             if (precision != "exact" && precision != "fast") {
               throw sam3::Error(sam3::ErrorCode::kInvalidArgument, "precision must be \"exact\" or \"fast\", got \"" + precision + "\"");
             }
             o.precision = precision == "fast" ? sam3::Precision::kFast : sam3::Precision::kExact;
             o.providers = providers_from_object(providers);
             o.intra_op_threads = threads;
             o.fallback_vocabulary = vocabulary;
             py::gil_scoped_release release;
             return sam3::Model::load(path, o);
           }),
           "path"_a, py::kw_only(), "threads"_a = 0, "vocabulary"_a = std::filesystem::path(), "providers"_a = py::none(),
           "precision"_a = "exact",
           "Loads a model folder (either public layout). threads: ONNX Runtime threads, 0 = one per core. providers: "
           "execution providers as a fallback order, e.g. [\"cuda\", \"cpu\"], \"auto\" or [(\"cuda\", {\"device_id\": 1})]; "
           "None = the CPU. precision: \"exact\", or \"fast\" (attention and large float products in bf16 where the CPU "
           "has bf16 instructions).")
      .def_property_readonly("bf16_nodes",
                             [](const sam3::Model& model) {  // 0 unless precision "fast" took effect
                               int n = 0;
                               for (const auto& f : model.files()) n += f.bf16_attention + f.bf16_matmuls;
                               return n;
                             })
      .def_property_readonly("providers", &sam3::Model::providers)
      .def_property_readonly("layout", [](const sam3::Model& model) { return std::string(sam3::layout_name(model.layout())); })
      .def_property_readonly("input_size", &sam3::Model::input_size)
      .def_property_readonly("input_width", &sam3::Model::input_width)
      .def_property_readonly("input_height", &sam3::Model::input_height)
      .def_property_readonly("generation", &sam3::Model::generation)
      .def_property_readonly("directory", &sam3::Model::directory)
      .def(
          "encode",
          [](const sam3::Model& model, const py::object& image, std::int64_t max_pixels) {
            sam3::Image im = image_from_object(image, max_pixels);
            return interruptible([&](const sam3::StopToken& stop) { return Embedding{model.encode(im, {stop})}; });
          },
          "image"_a, py::kw_only(), "max_pixels"_a = sam3::ImageLoadOptions{}.max_pixels,
          "Encodes an image: a path, a numpy uint8 array (HxW, HxWx3 RGB, HxWx4 RGBA) or a PIL.Image. Ctrl-C "
          "stops it within about a network node (KeyboardInterrupt).")
      .def(
          "segment",
          [](const std::shared_ptr<sam3::Model>& model, const py::object& target, const std::optional<std::string>& text,
             const py::object& boxes, float threshold, float mask_threshold, std::int64_t min_area, int max_instances, float nms,
             const py::object& points, const py::object& box, bool multimask) {
            Embedding e = py::isinstance<Embedding>(target) ? target.cast<Embedding>() : Embedding{[&] {
              sam3::Image im = image_from_object(target, sam3::ImageLoadOptions{}.max_pixels);
              py::gil_scoped_release release;
              return model->encode(im);
            }()};
            if (!points.is_none() || !box.is_none()) {  // one clicked object (interactive model)
              if (text || !boxes.is_none()) {
                throw sam3::Error(sam3::ErrorCode::kInvalidArgument,
                                  "give either points/box (one clicked object, interactive model) or text/boxes (a concept)");
              }
              sam3::InteractivePrompt object{points_from(points), box_from(box)};
              const sam3::InteractiveSegmenter clicks = click_facade(model);
              sam3::ObjectResult r = [&] {
                py::gil_scoped_release release;
                return clicks.segment(e.value, object, sam3::InteractiveOptions{multimask, {}});
              }();
              Result out{"", std::move(r.masks), e.value.width(), e.value.height(), {}, r.object_score};
              out.timings.decode_ms = r.timings.decode_ms;
              out.timings.postprocess_ms = r.timings.postprocess_ms;
              return out;
            }
            sam3::Prompt prompt{text.value_or(""), boxes_from(boxes)};
            const auto o = options_of(threshold, mask_threshold, min_area, max_instances, nms);
            const sam3::ImageSegmenter concepts = text_facade(model);
            py::gil_scoped_release release;
            return result_of(concepts.segment(e.value, prompt, o), e.value.width(), e.value.height());
          },
          "embedding_or_image"_a, "text"_a = py::none(), "boxes"_a = py::none(), py::kw_only(), "threshold"_a = 0.5f,
          "mask_threshold"_a = 0.5f, "min_area"_a = 0, "max_instances"_a = 0, "nms"_a = 0.0f, "points"_a = py::none(), "box"_a = py::none(),
          "multimask"_a = false,
          "Every instance of a text and/or exemplar boxes [(x0, y0, x1, y1[, positive])] in pixels; or, on the "
          "interactive model, the one object at points [(x, y) or (x, y, positive)] and/or in box (x0, y0, x1, y1) "
          "(multimask: its three candidate masks, best first).")
      .def_property_readonly(
          "interactive", [](const sam3::Model& model) { return model.kind() == sam3::ModelKind::kInteractive; },
          "True for SAM3's interactive (tracker) model: points and boxes, no text")
      .def(
          "segment_everything",
          [](const std::shared_ptr<sam3::Model>& model, const Embedding& e, int points_per_side, float pred_iou_threshold,
             float stability_threshold, float box_nms_threshold, std::int64_t min_area, int crop_layers, const py::object& image) {
            sam3::EverythingOptions o;
            o.points_per_side = points_per_side;
            o.pred_iou_threshold = pred_iou_threshold;
            o.stability_threshold = stability_threshold;
            o.box_nms_threshold = box_nms_threshold;
            o.min_area = min_area;
            o.crop_layers = crop_layers;
            if (crop_layers != 0 && image.is_none()) {
              invalid("crop_layers encode crops of the image: pass the image too (image=..., the one encoded)");
            }
            const sam3::InteractiveSegmenter clicks = click_facade(model);
            const sam3::Image pixels = image.is_none() ? sam3::Image{} : image_from_object(image, sam3::ImageLoadOptions{}.max_pixels);
            py::gil_scoped_release release;
            auto r = crop_layers == 0 ? clicks.segment_everything(e.value, o) : clicks.segment_everything(pixels, e.value, o);
            r.prompt.text = "everything";
            return result_of(std::move(r), e.value.width(), e.value.height());
          },
          "embedding"_a, py::kw_only(), "points_per_side"_a = 32, "pred_iou_threshold"_a = 0.88f, "stability_threshold"_a = 0.95f,
          "box_nms_threshold"_a = 0.7f, "min_area"_a = 0, "crop_layers"_a = 0, "image"_a = py::none(),
          "Every object in the image with the interactive model (SAM's automatic mask generator); crop_layers "
          "(SAM's crop_n_layers) also encodes 2^i x 2^i crops of `image` for small objects.")
      .def(
          "segment_many",
          [](const std::shared_ptr<sam3::Model>& model, const Embedding& e, const py::list& prompts, float threshold, float mask_threshold,
             std::int64_t min_area, int max_instances, float nms) {
            std::vector<sam3::Prompt> list;
            for (const auto& p : prompts) {
              if (py::isinstance<py::str>(p))
                list.push_back({p.cast<std::string>(), {}});
              else if (!py::isinstance<py::dict>(p))
                invalid("a prompt is a string or {\"text\": ..., \"boxes\": [...]}");
              else {
                const auto d = py::reinterpret_borrow<py::dict>(p);
                const std::string where = "prompt " + std::to_string(list.size() + 1) + "'s text";
                list.push_back({d.contains("text") ? text_of(d["text"], where) : "",
                                boxes_from(d.contains("boxes") ? py::object(d["boxes"]) : py::none())});
              }
            }
            const auto o = options_of(threshold, mask_threshold, min_area, max_instances, nms);
            const sam3::ImageSegmenter concepts = text_facade(model);
            py::gil_scoped_release release;
            auto results = concepts.segment_all(e.value, list, o);  // with the family's rule across them
            std::vector<Result> out;
            for (auto& r : results) out.push_back(result_of(std::move(r), e.value.width(), e.value.height()));
            return out;
          },
          "embedding"_a, "prompts"_a, py::kw_only(), "threshold"_a = 0.5f, "mask_threshold"_a = 0.5f, "min_area"_a = 0,
          "max_instances"_a = 0, "nms"_a = 0.0f, "Several prompts (strings or {\"text\", \"boxes\"}) on one encoded image.");

  m.def(
      "tokenize",
      [](const std::string& text, const std::filesystem::path& vocabulary) {
        static std::map<std::string, sam3::ClipTokenizer>* cache = new std::map<std::string, sam3::ClipTokenizer>();
        auto it = cache->find(vocabulary.string());
        if (it == cache->end()) it = cache->emplace(vocabulary.string(), sam3::ClipTokenizer::from_file(vocabulary)).first;
        const auto t = it->second.encode(text);
        return py::dict("ids"_a = std::vector<std::int64_t>(t.ids.begin(), t.ids.end()),
                        "mask"_a = std::vector<std::int64_t>(t.mask.begin(), t.mask.end()), "tokens"_a = t.tokens);
      },
      "text"_a, "vocabulary"_a);

  m.def(
      "encode_rle",
      [](const py::array& mask) {
        const sam3::Mask m = mask_from_array(mask);
        return py::dict("size"_a = py::make_tuple(m.height(), m.width()), "counts"_a = sam3::rle_encode(m));
      },
      "mask"_a, "COCO compressed RLE of an H x W mask, as pycocotools.mask.encode gives (counts as str).");
  m.def(
      "decode_rle",
      [](const py::dict& rle) {
        if (!rle.contains("size") || !rle.contains("counts")) invalid("an RLE is {\"size\": [height, width], \"counts\": ...}");
        std::vector<std::int64_t> size;
        try {
          size = rle["size"].cast<std::vector<std::int64_t>>();
        } catch (const py::cast_error&) {
          size.clear();
        }
        if (size.size() != 2 || size[0] < 0 || size[1] < 0 || size[0] > INT32_MAX || size[1] > INT32_MAX) {
          invalid("rle[\"size\"] must be [height, width], two whole numbers of 0 or more");
        }
        py::object counts = rle["counts"];
        const std::string text = py::isinstance<py::bytes>(counts) ? counts.cast<std::string>() : py::str(counts).cast<std::string>();
        return mask_array(sam3::rle_decode(text, static_cast<int>(size[0]), static_cast<int>(size[1])));
      },
      "rle"_a, "The bool H x W mask of a COCO RLE dict (counts as str or bytes).");

  m.def(
      "label",
      [](const std::vector<std::string>& inputs, const std::vector<std::string>& prompts, const std::filesystem::path& out,
         const std::shared_ptr<sam3::Model>& model, const std::string& formats, float threshold,
         const std::function<void(py::dict)>& progress) {
        sam3::LabelConfig config;
        for (const auto& p : prompts) config.categories.push_back({p, {p, {}}, std::nullopt});
        config.formats = sam3::parse_label_formats(formats);
        config.segment.score_threshold = threshold;
        std::atomic<bool> stop{false};
        std::optional<py::error_already_set> callback_error;  // raised again once the run has ended
        sam3::LabelSummary s;
        {
          py::gil_scoped_release release;
          auto list = sam3::collect_label_inputs(inputs, out);
          if (config.formats & sam3::kFormatGeoJson) {
            for (const auto& in : list) {
              if (!is_georeferenced_input(in.path)) continue;
              throw sam3::Error(sam3::ErrorCode::kInvalidArgument,
                                in.path.string() +
                                    " is a georeferenced raster: label() would write its GeoJSON in pixels with no "
                                    "CRS; label_map([...], prompts, out, formats=\"geojson\") writes it in its CRS "
                                    "through GDAL");
            }
          }
          sam3::Labeler labeler(model, config, out);
          s = labeler.run(
              list,
              [&](const sam3::LabelProgress& p) {
                if (!progress || stop) return;
                py::gil_scoped_acquire acquire;
                try {
                  progress(py::dict("total"_a = p.total, "done"_a = p.done, "skipped"_a = p.skipped, "failed"_a = p.failed,
                                    "images_per_second"_a = p.images_per_second, "current"_a = p.current));
                } catch (py::error_already_set& e) {
                  stop = true;  // the image in flight is finished, the outputs are written, then it is raised
                  callback_error = std::move(e);
                }
              },
              &stop);
        }
        if (callback_error) throw std::move(*callback_error);
        return py::dict("total"_a = s.total, "processed"_a = s.processed, "skipped"_a = s.skipped, "failed"_a = s.failed,
                        "interrupted"_a = s.interrupted);
      },
      "inputs"_a, "prompts"_a, "out"_a, py::kw_only(), "model"_a, "formats"_a = "coco", "threshold"_a = 0.5f, "progress"_a = nullptr);

  bind_label_map(m);
  bind_video(m, [](const py::object& image) { return image_from_object(image, sam3::ImageLoadOptions{}.max_pixels); });
  bind_video_io(m);

  m.def(
      "registry_path",
      [](const std::optional<std::string>& name) -> py::object {
        const sam3::RegistryEntry* e = name ? sam3::find_registry_entry(*name) : &sam3::default_registry_entry();
        if (!e) throw sam3::Error(sam3::ErrorCode::kModelNotFound, "no model named " + *name + " in the registry");
        sam3::ModelStore store(sam3::hub_options_from_environment());
        if (store.state(*e) != sam3::ModelState::kComplete) {
          throw sam3::Error(sam3::ErrorCode::kModelNotFound, e->name + " is not downloaded; call sam3cpp.pull(\"" + e->name +
                                                                 "\") first (or `sam3 models pull " + e->name + "`)");
        }
        return py::cast(store.model_dir(*e));
      },
      "name"_a = py::none());
  m.def(
      "pull",
      [](const std::optional<std::string>& name, const std::function<void(py::dict)>& progress) {
        const sam3::RegistryEntry* e = name ? sam3::find_registry_entry(*name) : &sam3::default_registry_entry();
        if (!e) throw sam3::Error(sam3::ErrorCode::kModelNotFound, "no model named " + *name + " in the registry");
        sam3::ModelStore store(sam3::hub_options_from_environment());
        py::gil_scoped_release release;
        return store.pull(*e, [&](const sam3::DownloadProgress& p) {
          if (!progress) return;
          py::gil_scoped_acquire acquire;
          progress(py::dict("file"_a = p.file, "done"_a = p.done, "total"_a = p.total, "bytes_per_second"_a = p.bytes_per_second));
        });
      },
      "name"_a = py::none(), "progress"_a = nullptr);
  m.attr("__version__") = SAM3_VERSION_STRING;  // CMakeLists.txt's project() version, as the wheel's
  m.attr("onnxruntime_version") = sam3::onnxruntime_version();
  m.def("available_providers", &sam3::available_execution_providers,
        "The execution providers the loaded ONNX Runtime lists, best first (\"cpu\" last).");
  m.def("usable_providers", &sam3::usable_execution_providers,
        "Those of available_providers() that can start here (a listed one may lack its libraries or device).");
}
