#include <algorithm>
#include <fstream>

#include "core/hash.h"
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

void add_path(const fs::path& p, const std::string& name, std::vector<LabelInput>& out) {
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec)) {
      if (e.is_regular_file() && is_image_extension(e.path())) {
        out.push_back({e.path(), fs::relative(e.path(), p).generic_string()});
      }
    }
  } else if (fs::is_regular_file(p, ec) && is_list_file(p)) {
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (line.empty() || line[0] == '#') continue;
      fs::path item = line;
      if (item.is_relative()) item = p.parent_path() / item;
      out.push_back({item, line});  // missing files become failures, not a stop
    }
  } else if (fs::exists(p, ec)) {
    out.push_back({p, name});
  } else {
    throw Error(ErrorCode::kInvalidArgument, p.string() + ": no such file or folder");
  }
}

}  // namespace

std::vector<LabelInput> collect_label_inputs(const std::vector<std::string>& inputs) {
  std::vector<LabelInput> out;
  for (const auto& input : inputs) add_path(input, fs::path(input).filename().string(), out);
  std::sort(out.begin(), out.end(), [](const LabelInput& a, const LabelInput& b) { return a.name < b.name; });
  out.erase(std::unique(out.begin(), out.end(), [](const LabelInput& a, const LabelInput& b) { return a.name == b.name; }),
            out.end());
  return out;
}

std::vector<LabelInput> shard_label_inputs(const std::vector<LabelInput>& inputs, int k, int n) {
  if (n < 1 || k < 1 || k > n) {
    throw Error(ErrorCode::kInvalidArgument, "--shard K/N needs 1 <= K <= N, got " + std::to_string(k) + "/" + std::to_string(n));
  }
  std::vector<LabelInput> out;
  for (const auto& in : inputs) {
    if (static_cast<int>(fnv1a64(in.name) % static_cast<std::uint64_t>(n)) == k - 1) out.push_back(in);
  }
  return out;
}

unsigned parse_label_formats(const std::string& list) {
  unsigned formats = 0;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string f = list.substr(start, comma - start);
    if (f == "coco") formats |= kFormatCoco;
    else if (f == "yolo") formats |= kFormatYolo;
    else if (f == "masks") formats |= kFormatMasks;
    else if (f == "geojson") formats |= kFormatGeoJson;
    else if (!f.empty()) throw Error(ErrorCode::kInvalidArgument, "unknown format '" + f + "'; use coco, yolo, masks, geojson");
    start = comma + 1;
  }
  if (!formats) throw Error(ErrorCode::kInvalidArgument, "no output format; use --format coco,yolo,masks,geojson");
  return formats;
}

}  // namespace sam3
