// The folder of generated images that the `sam3 label` CLI tests label.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sam3/export.h"
#include "support/files.h"
#include "support/run_command.h"
#include "support/test_images.h"

namespace sam3::test {

namespace fs = std::filesystem;

inline const std::string kSam3 = SAM3_CLI_PATH;

class LabelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = sam3::test::fresh_test_dir("sam3_label");
    fs::create_directories(root_ / "images" / "sub");
    scene_ = sam3::test::make_scene(false);
  }
  // n copies of the scene (distinct bytes: a marker pixel), some in a subfolder.
  void make_images(int n, int scale = 1) {
    for (int i = 0; i < n; ++i) {
      sam3::Image im = scene_.image;
      im.rgb[0] = static_cast<std::uint8_t>(i);
      if (scale > 1) im = sam3::test::upscale(im, scale);
      const auto dir = i % 3 == 0 ? root_ / "images" / "sub" : root_ / "images";
      sam3::write_file_atomic(dir / ("img" + std::to_string(100 + i) + ".png"), sam3::encode_rgb_png(im));
    }
  }
  std::string label(const std::string& args, const std::string& out = "out") {
    return kSam3 + " label " + quote((root_ / "images").string()) + " --models " +
           quote((sam3::test::test_models_dir() / "usls").string()) + " -p red -p blue --out " + quote((root_ / out).string()) + " " + args;
  }
  fs::path root_;
  sam3::test::Scene scene_;
};

}  // namespace sam3::test
