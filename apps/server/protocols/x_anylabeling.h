// X-AnyLabeling's remote-server protocol on sam3 serve: GET /v1/models lists one model,
// "segment_anything_3"; POST /v1/predict takes a base64 image with text prompts (split on
// "," and ".") or rectangle marks, and answers polygons in pixels plus rectangles. Errors are
// {"success": false, "error": {"code", "message"}}; the key comes as "Token: KEY".
#pragma once

#include "api.h"

namespace sam3::server {

void add_x_anylabeling_routes(Api& api);

}  // namespace sam3::server
