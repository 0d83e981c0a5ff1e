// Writes seed inputs for the fuzz targets: small images in every supported format and
// POST /v1/segment bodies.  make_seeds images|requests DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

namespace {

void write(const std::filesystem::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

void images(const std::filesystem::path& dir) {
  int n = 0;
  for (auto [w, h] : {std::pair{1, 1}, std::pair{7, 3}, std::pair{16, 16}, std::pair{33, 20}}) {
    cv::Mat m(h, w, CV_8UC3);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) m.at<cv::Vec3b>(y, x) = cv::Vec3b(x * 7, y * 11, (x + y) * 5);
    for (const char* ext : {".png", ".jpg", ".bmp", ".tiff", ".webp"}) {
      std::vector<std::uint8_t> buf;
      if (!cv::imencode(ext, m, buf)) continue;
      write(dir / ("img" + std::to_string(n++) + ext), std::string(buf.begin(), buf.end()));
    }
    cv::Mat gray(h, w, CV_16UC1, cv::Scalar(1000)), rgba(h, w, CV_8UC4, cv::Scalar(1, 2, 3, 4));
    for (const auto& [mat, ext] : {std::pair{gray, ".png"}, std::pair{gray, ".tiff"}, std::pair{rgba, ".png"}}) {
      std::vector<std::uint8_t> buf;
      if (cv::imencode(ext, mat, buf)) write(dir / ("img" + std::to_string(n++) + ext), std::string(buf.begin(), buf.end()));
    }
  }
}

void requests(const std::filesystem::path& dir) {
  const std::vector<std::string> bodies = {
      R"({"image_id":"9188e926d556cc90d114b8c853f7e04f","prompts":["car"]})",
      R"({"image":"iVBORw0KGgo=","prompts":[{"text":"bus","boxes":[[10,20,200,180,"pos"],[1,2,3,4,"neg"]]}],"threshold":0.5})",
      R"({"image_id":"x","prompts":["a","b"],"mask_threshold":0.3,"min_area":10,"max_instances":2,"nms":0.5,"mask_format":"polygon"})",
      R"({"image_id":"x","prompts":[{"boxes":[[0,0,1,1]]}],"mask_format":"png","polygon_tolerance":2})",
      R"({"image_id":"x","prompts":[],"threshold":"high"})",
      R"([1,2,3])",
      "--XyZ\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n"
      "PNGDATA\r\n--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--XyZ--\r\n",
  };
  for (size_t i = 0; i < bodies.size(); ++i) write(dir / ("body" + std::to_string(i) + ".json"), bodies[i]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_seeds images|requests DIR\n");
    return 2;
  }
  std::filesystem::create_directories(argv[2]);
  if (std::string(argv[1]) == "images")
    images(argv[2]);
  else
    requests(argv[2]);
  return 0;
}
