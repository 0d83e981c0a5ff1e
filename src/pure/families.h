// The family registry: one row per SAM3 export family sam3 loads for text prompts, in the
// order they are tried. A row gives the family's stable id (Layout::id(), label records, the
// browser module's `layout`), its display name, the file names each of its parts may have,
// and the function that builds its Generation from the files' checked specs. The native
// loader (model/layout.cpp, model/text_backend.cpp), the browser module (web/sam3_wasm.cpp),
// `sam3 models inspect` and the tests (tests/pure/family_table_test.cpp: unique ids, a
// generated test model per row, the browser's type union) all read this table.
//
// Adding a family: its rules in one new file under pure/families/ (a FamilyRules subclass and
// a builder), its row in pure/families/table.cpp, its generated test model (tools/
// make_test_models.py --layout ID). A family that tracks video also gives its row a
// VideoCapability (SAM 3.1: families/sam31_video.cpp). Pure: standard library only.
#include <cstddef>
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pure/generation.h"

namespace sam3::pure {

struct PartNames {
  const char* part;                // "image", "text", "decoder", "geometry"
  std::vector<const char*> stems;  // file names without ".onnx" and the precision suffix
  bool required;
};

// One file of a family's video capability: the tracker's name for it and the file's name
// (a graph's without ".onnx").
struct VideoPart {
  const char* part;
  const char* stem;
};

// A constant the video tracker reads from a .npy file beside the graphs, and how many values it holds.
struct VideoConstant {
  const char* name;
  const char* file;
  std::size_t values;
};

// What a family needs to track video (sam3::VideoTracker): the graphs beside its image files
// and the check of their inputs and outputs, the constants, and the image encoder's outputs the
// tracker reads besides the detector's. The tracker's host rules are pure/video/.
struct VideoCapability {
  std::vector<VideoPart> graphs;
  std::vector<VideoConstant> constants;
  // Throws kModelMismatch naming the file, tensor, expected and found (specs by VideoPart::part).
  void (*check)(const PartSpecs& graphs);
  std::vector<const char*> encoder_outputs;
  const char* description;  // what messages call the bundle when files are missing
};

struct FamilyRow {
  const char* id;       // stable, lowercase: what sam3 calls the family in files and APIs
  const char* display;  // what messages and `models inspect` call it
  std::vector<PartNames> parts;
  // Throws kModelMismatch naming the file, tensor, expected and found when the files do not fit.
  // `id` is the row's: the builder names its Generation by it.
  Generation (*build)(const char* id, const PartSpecs& parts);
  bool browser;                            // the browser module runs it
  const VideoCapability* video = nullptr;  // null: the family tracks no video
};

const std::vector<FamilyRow>& families();
const FamilyRow* find_family(std::string_view id);  // null when none has that id
// The video capability of the family `id`, or null (no such family, or it tracks no video).
const VideoCapability* video_capability(std::string_view id);
// What can track video, for messages: "SAM 3.1 (ailia)'s bundle (sam3.1_image_encoder, ...)".
std::string video_families_description();

// The first of `candidates` (rows whose names all fit the same files) whose build accepts the
// specs; when none does, the error of the last one tried (the most general: a family that
// specialises another's files comes before it in the table).
Generation build_generation(const std::vector<const FamilyRow*>& candidates, const PartSpecs& parts);

}  // namespace sam3::pure
