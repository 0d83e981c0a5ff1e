// The README's library example as a program: every instance of each prompt in one image.
//   segment MODEL_DIR IMAGE PROMPT...
#include <sam3/error.h>
#include <sam3/image_segmenter.h>
#include <sam3/version.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL_DIR IMAGE PROMPT...  (sam3 %s)\n", argv[0], SAM3_VERSION_STRING);
    return 2;
  }
  try {
    auto segmenter = sam3::ImageSegmenter::load(argv[1]);  // expensive: share it
    auto image = sam3::load_image(argv[2]);
    auto embedding = segmenter.encode(image);  // the costly step, once per image
    for (int i = 3; i < argc; ++i) {
      auto result = segmenter.segment(embedding, {.text = argv[i]});  // cheap per prompt
      for (const auto& inst : result.instances) {
        std::printf("%s\t%.4f\t%.2f %.2f %.2f %.2f\t%lld\n", argv[i], inst.score, inst.box.x0, inst.box.y0, inst.box.x1, inst.box.y1,
                    static_cast<long long>(inst.area));
      }
    }
  } catch (const sam3::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
