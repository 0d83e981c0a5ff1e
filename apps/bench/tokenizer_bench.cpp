// Tokenizer throughput: prompts per second for short and long prompts, with the BPE cache
// (the normal case: prompts repeat) and without it (every word merged from scratch).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "sam3/tokenizer.h"

namespace {

double prompts_per_second(const sam3::ClipTokenizer& tok, const std::vector<std::string>& prompts, int rounds) {
  const auto t0 = std::chrono::steady_clock::now();
  std::int64_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    for (const auto& p : prompts) sink += tok.encode(p).ids[1];
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sink == 42) std::puts("");  // keep the work observable
  return static_cast<double>(prompts.size()) * rounds / s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string vocab = argc > 1 ? argv[1] : sam3::bundled_vocabulary().string();
  const auto t0 = std::chrono::steady_clock::now();
  const auto cached = sam3::ClipTokenizer::from_file(vocab, true);
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto uncached = sam3::ClipTokenizer::from_file(vocab, false);
  const std::vector<std::string> short_prompts = {"road",     "car",  "person",       "yellow school bus", "red car on the left",
                                                  "building", "tree", "traffic light"};
  const std::vector<std::string> long_prompts = {
      "a large yellow school bus parked next to the red brick building on the corner of the street",
      "every solar panel on the rooftops of the industrial warehouses in the northern part of the map",
      "the small white sailing boats moored along the wooden pier near the lighthouse at sunset &amp; dusk",
      "Pedestrians crossing the zebra crossing while holding colourful umbrellas during heavy rain, 2024"};
  std::printf("vocabulary: %s (loaded in %.0f ms)\n\n", vocab.c_str(), load_ms);
  std::printf("| prompts | cache | prompts/s | us/prompt |\n|---|---|---:|---:|\n");
  for (const auto& [name, prompts] : {std::pair{"short (1-5 words)", &short_prompts}, std::pair{"long (15-20 words)", &long_prompts}}) {
    for (const auto& [mode, tok] : {std::pair{"on", &cached}, std::pair{"off", &uncached}}) {
      prompts_per_second(*tok, *prompts, 20);  // warm up
      const double rate = prompts_per_second(*tok, *prompts, 2000);
      std::printf("| %s | %s | %.0f | %.1f |\n", name, mode, rate, 1e6 / rate);
    }
  }
  return 0;
}
