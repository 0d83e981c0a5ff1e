// Prompts and segment options sent as JSON, read by one codec for every front (the server's "prompts", the
// browser module, label's box-prompt files): errors are kInvalidArgument and name the field
// path, e.g. "prompts[2].boxes[0][4] must be \"pos\" or \"neg\", got \"maybe\"".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sam3/interactive.h"
#include "sam3/types.h"

namespace sam3 {

// One entry of a "prompts" list: a concept (a string, or {"text", "boxes": [[x0, y0, x1, y1,
// "pos"|"neg"], ...]}), a clicked object ({"points": [[x, y, "pos"|"neg"], ...], "box":
// [x0, y0, x1, y1]}), or {"everything": true, "points_per_side": N}. A key an entry does not
// take is refused, naming it ("prompts[0] has an unknown key \"bozes\"; a concept takes ...").
struct PromptEntry {
  enum class Kind { kConcept, kObject, kEverything };
  Kind kind = Kind::kConcept;
  Prompt prompt;  // kConcept
  InteractivePrompt object;
  int points_per_side = 32;  // kEverything
};

// JSON text of a list of entries -> the entries; `where` names the list in errors.
std::vector<PromptEntry> parse_prompts_json(std::string_view json, const std::string& where = "prompts");

// The upper bounds of SegmentOptions' counts, the same for every front: this codec, the CLI's
// flags, and the library's own check before a segmentation (Python's keywords meet it there).
inline constexpr std::int64_t kMaxMinArea = 1'000'000'000'000;  // min_area, pixels
inline constexpr int kMaxMaxInstances = 1'000'000;              // max_instances

// JSON text of an object -> segment options, with one set of bounds for every front:
// "threshold", "mask_threshold", "nms" (0 to 1), "min_area" (whole pixels, 0 to 10^12),
// "max_instances" (whole, 0 to 10^6; 0 keeps all). Missing keys keep `defaults`' values; any
// other key is refused, naming it. Errors name the key under `where` (none when empty).
SegmentOptions parse_segment_options_json(std::string_view json, const std::string& where = "", const SegmentOptions& defaults = {});

}  // namespace sam3
