// Label Studio's ML backend protocol on sam3 serve: GET /health and / (shared with the API),
// POST /setup, /predict and /webhook, GET /metrics and /versions. Routes need the key when
// --api-key is set (Label Studio sends it as HTTP Basic auth's password).
#pragma once

#include "api.h"
#include "task_images.h"

namespace sam3::server {

void add_label_studio_routes(Api& api, const LabelStudioOptions& options);

}  // namespace sam3::server
