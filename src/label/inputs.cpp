#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "core/hash.h"
#include "label/records.h"
#include "sam3/error.h"
#include "sam3/labeler.h"

namespace sam3 {
namespace {

namespace fs = std::filesystem;

bool is_image_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* e : {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff"}) {
    if (ext == e) return true;
  }
  return false;
}

bool is_list_file(const fs::path& p) { return p.extension() == ".txt" || p.extension() == ".lst"; }

// A folder sam3 wrote (segment or label outputs): never labeled as input.
bool is_sam3_output(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / ".sam3-outputs.json", ec);
}

bool same_place(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return !b.empty() && fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

void add_path(const fs::path& p, const std::string& name, const fs::path& exclude, std::vector<LabelInput>& out) {
  std::error_code ec;
  const auto status = fs::status(p, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {  // a symlink loop, no permission: a failure with its reason
    out.push_back({p, name});
    return;
  }
  if (fs::is_directory(status)) {
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const auto& e = *it;
      std::error_code type_ec;
      if (e.is_directory(type_ec)) {
        if (same_place(e.path(), exclude) || is_sam3_output(e.path())) it.disable_recursion_pending();
      } else if (is_image_extension(e.path())) {
        // Not only regular files: a FIFO, a dangling link or a link loop named like an image is
        // recorded as a failure with its reason (the labeler opens no such file), never skipped unsaid.
        out.push_back({e.path(), e.path().lexically_relative(p).generic_string()});  // links not followed
      }
    }
    if (ec) throw Error(ErrorCode::kInvalidArgument, p.string() + ": cannot list the folder (" + ec.message() + ")");
  } else if (fs::is_regular_file(status) && is_list_file(p)) {
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (line.empty() || line[0] == '#') continue;
      fs::path item = line;
      if (item.is_relative()) item = p.parent_path() / item;
      out.push_back({item, line});  // missing files become failures, not a stop
    }
  } else if (fs::exists(status)) {
    out.push_back({p, name});  // not a regular file: a failure with its reason, not a stop
  } else {
    throw Error(ErrorCode::kInvalidArgument, p.string() + ": no such file or folder");
  }
}

std::string canonical_name(const fs::path& p) {
  std::error_code ec;
  const auto c = fs::weakly_canonical(p, ec);
  return (ec ? p : c).generic_string();
}

}  // namespace

std::vector<LabelInput> collect_label_inputs(const std::vector<std::string>& inputs, const fs::path& exclude, bool allow_none) {
  std::vector<LabelInput> out;
  std::vector<std::string> origin;  // per input: the name of the argument it came from
  std::set<std::string> seen;
  for (const auto& input : inputs) {
    std::vector<LabelInput> found;
    const fs::path arg = fs::path(input).lexically_normal();
    add_path(arg, arg.filename().string(), exclude, found);
    std::error_code ec;
    const fs::path from = fs::is_directory(arg, ec) ? arg : arg.parent_path();
    for (auto& in : found) {
      if (!seen.insert(canonical_name(in.path)).second) continue;  // the same file reached twice is one input
      out.push_back(std::move(in));
      origin.push_back(canonical_name(from.empty() ? fs::path(".") : from));
    }
  }
  // Different files under one name (img.png in two folders) are told apart by the folder they
  // came from ("images/img.png", "more/img.png"), or else by their full path.
  for (int pass = 0; pass < 2; ++pass) {
    std::map<std::string, int> uses;
    for (const auto& in : out) ++uses[in.name];
    for (size_t i = 0; i < out.size(); ++i) {
      if (uses[out[i].name] < 2) continue;
      out[i].name = pass == 0 ? (fs::path(origin[i]).filename() / out[i].name).generic_string() : canonical_name(out[i].path);
    }
  }
  if (out.empty() && !allow_none) {
    std::string given;
    for (size_t i = 0; i < inputs.size() && i < 3; ++i) given += (i ? ", " : "") + inputs[i];
    if (inputs.size() > 3) given += " and " + std::to_string(inputs.size() - 3) + " more";
    throw Error(ErrorCode::kInvalidArgument, "no images in " + (given.empty() ? std::string("the inputs") : given) +
                                                 ": sam3 label reads .jpg, .jpeg, .png, .webp, .bmp, .tif and .tiff files in folders "
                                                 "(and their subfolders) and the paths listed in .txt or .lst files");
  }
  std::sort(out.begin(), out.end(), [](const LabelInput& a, const LabelInput& b) { return a.name < b.name; });
  return out;
}

std::vector<LabelInput> shard_label_inputs(const std::vector<LabelInput>& inputs, int k, int n) {
  if (n < 1 || k < 1 || k > n) {
    throw Error(ErrorCode::kInvalidArgument, "--shard K/N needs 1 <= K <= N, got " + std::to_string(k) + "/" + std::to_string(n));
  }
  std::vector<LabelInput> out;
  for (const auto& in : inputs) {
    if (static_cast<int>(core::fnv1a64(in.name) % static_cast<std::uint64_t>(n)) == k - 1) out.push_back(in);
  }
  return out;
}

LabelShard label_shard(const std::vector<LabelInput>& all, int k, int n) {
  if (n < 1 || k < 1 || k > n) {
    throw Error(ErrorCode::kInvalidArgument, "--shard K/N needs 1 <= K <= N, got " + std::to_string(k) + "/" + std::to_string(n));
  }
  std::vector<std::string> names;
  for (const auto& in : all) names.push_back(in.name);
  return {k, n, label::input_list_id(names), static_cast<std::int64_t>(names.size())};
}

unsigned parse_label_formats(const std::string& list) {
  unsigned formats = 0;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string f = list.substr(start, comma - start);
    if (f == "coco")
      formats |= kFormatCoco;
    else if (f == "yolo")
      formats |= kFormatYolo;
    else if (f == "masks")
      formats |= kFormatMasks;
    else if (f == "geojson")
      formats |= kFormatGeoJson;
    else if (!f.empty())
      throw Error(ErrorCode::kInvalidArgument,
                  "unknown format '" + f + "'; use coco, yolo, masks, geojson for images (gpkg, fgb, shp for georeferenced rasters)");
    start = comma + 1;
  }
  if (!formats) throw Error(ErrorCode::kInvalidArgument, "no output format; give one or more of coco, yolo, masks, geojson");
  return formats;
}

}  // namespace sam3
