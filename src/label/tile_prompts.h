// Exemplar boxes given for a whole image (or raster) moved into one tile's window: shared by
// tiled images (label_image) and maps (label_raster), so a box applies where it is drawn.
#pragma once

#include "label/label_image.h"

namespace sam3::label {

// The boxes that fall in the tile, clipped to it, in the tile's coordinates; a box with less
// than one pixel inside is left out. The text is kept.
Prompt prompt_for_tile(const Prompt& prompt, const TileRect& tile);

}  // namespace sam3::label
