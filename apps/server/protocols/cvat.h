// sam3 serve as CVAT's model: the part of Nuclio's dashboard API that CVAT's lambda manager
// calls (GET /api/functions, GET /api/functions/NAME, POST /api/function_invocations), so that
// CVAT needs only CVAT_NUCLIO_HOST / CVAT_NUCLIO_PORT pointed at sam3. A detector answers for
// every configured label (CVAT sends none and maps labels afterwards) with masks as CVAT reads
// them: the instance's cropped bitmap row by row, then its inclusive corners. An interactor
// answers CVAT's clicks (positive and negative points, a box) with the object's mask. A tracker
// follows CVAT's rectangles from frame to frame (cvat_tracker.h).
#pragma once

#include "tracker_sessions.h"

#include <cstddef>
#include <string>
#include <vector>

#include <string_view>

namespace sam3::server {

class Api;

// One label of the detector and the prompts that find it (its name when none are given).
struct CvatLabel {
  std::string name;
  std::vector<std::string> prompts;
};

// "car" or "car=car,automobile": a label and its prompts. Throws sam3::Error naming the text.
CvatLabel parse_cvat_label(const std::string& text);
// One label per line (blank lines and lines starting with # skipped), in parse_cvat_label's form.
std::vector<CvatLabel> read_cvat_labels(const std::string& path);

// The functions' names in the listing and in x-nuclio-function-name: the detector (text
// prompts, listed when labels are given) and the interactor (clicks, listed when the server
// has SAM3's interactive model).
inline constexpr const char* kCvatDetector = "sam3-detector";
inline constexpr const char* kCvatInteractor = "sam3-interactor";

// The tracker (listed when the model is SAM 3.1's video bundle) keeps its sessions within
// `tracker_budget` (tracker_sessions.h).
void add_cvat_routes(Api& api, const std::vector<CvatLabel>& labels, TrackerBudget tracker_budget = {});

}  // namespace sam3::server
