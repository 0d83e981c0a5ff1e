// Georeferenced rasters of any size through GDAL (GeoTIFF, COG, JPEG 2000, VRT mosaics, PNG or
// JPEG with a world file, ...), read window by window as 8-bit RGB, never whole.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sam3/image.h"
#include "sam3/types.h"

namespace sam3 {

// The most a --gsd finer than the raster's own may enlarge it, per side. Upsampling adds no
// detail: it makes coarse imagery's small objects (a 10 m pixel's houses) big enough for the
// model, which 16 times does (a 1008-pixel model tile then still spans 63 of the raster's
// pixels, about the smallest tile sam3 takes, 64); finer only spreads the same pixels over more
// tiles, their count growing with the square (--gsd 0.0001 on a 0.75 m raster: 56 million times the pixels).
inline constexpr double kMaxGsdUpsample = 16;

struct RasterOptions {
  std::vector<int> bands;  // 1-based; empty: red, green, blue by colour interpretation, else 1, 2, 3
  // How band values become 0..255: kAuto keeps 8-bit bands and stretches others min-max;
  // kPercentile cuts at low/high percent; kFixed maps [low, high]. Statistics are computed once
  // per dataset (GDAL's approximate statistics and histogram), never per tile.
  enum class Scale { kAuto, kMinMax, kPercentile, kFixed } scale = Scale::kAuto;
  double low = 2, high = 98;
  // Read as if resampled to this ground sample distance in metres (0: the raster's own), so
  // objects look as they do in photos at the scale the model knows; needs a projected CRS, and
  // upsamples at most kMaxGsdUpsample times.
  double gsd_m = 0;
  // GDAL reads network paths (/vsicurl/, /vsis3/, /vsigs/, /vsiaz/, http(s)://, ...) and web
  // service drivers (WMS, WMTS, ...) only when this is set: a raster name, or a VRT's source,
  // never makes sam3 reach a host unasked. Local archives (/vsizip/, /vsitar/) are always fine.
  bool allow_network = false;
};

// Whether a GDAL name reaches the network (/vsicurl/, /vsis3/, http://, ... anywhere in it).
bool is_network_raster_name(const std::string& name);

// Whether GDAL reads `path` as georeferenced by its own content (a CRS, ground control points,
// or a geotransform inside the file): `sam3 label` labels such a raster as a map (MapLabeler:
// vectors in its CRS), never as a photo in pixel coordinates, whatever the formats asked. A
// plain image whose only georeferencing is a world file beside it (.pgw, .jgw, .wld, ...) is not:
// the image path writes its GeoJSON in the world file's coordinates (no CRS). False for what GDAL
// cannot open; local files only.
bool is_georeferenced_raster(const std::filesystem::path& path);

// How much of one band maps to 0..255.
struct BandScale {
  double offset = 0, factor = 1;  // out = (value - offset) * factor, clamped
};

class Raster {
 public:
  // Throws kImageUnreadable (cannot open; a folder GDAL reads no raster from says so),
  // kInvalidArgument (bands, a non-finite or negative option, a --gsd upsampling more than
  // kMaxGsdUpsample times or giving under 1 or over 2147483647 pixels a side, a network name
  // not allowed), kImageUnsupported (no band, a degenerate geotransform: zero or non-finite
  // pixel size, not invertible).
  static Raster open(const std::filesystem::path& path, const RasterOptions& options = {});
  Raster(Raster&&) noexcept;
  Raster& operator=(Raster&&) noexcept;
  ~Raster();

  const std::filesystem::path& path() const;
  // Size and geotransform of the grid the raster is read on (resampled when gsd_m is set).
  int width() const;
  int height() const;
  // Size of the file itself, in its own pixels (what --box-prompt boxes are drawn on).
  int source_width() const;
  int source_height() const;
  std::array<int, 2> block_size() const;  // the first band's natural block (tile or strip)
  bool georeferenced() const;
  // pixel (col, row) -> map: x = g[0] + col*g[1] + row*g[2], y = g[3] + col*g[4] + row*g[5]
  const std::array<double, 6>& geotransform() const;
  const std::string& crs_wkt() const;  // "" when the raster has none
  const std::vector<int>& bands() const;
  const std::vector<BandScale>& scales() const;

  // The window as 8-bit RGB and, per pixel, whether it holds data (nodata values, alpha band
  // and mask bands give 0). Throws kImageCorrupt when GDAL cannot read it.
  Image read(const TileRect& window, std::vector<std::uint8_t>* valid) const;

 private:
  struct Impl;
  explicit Raster(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sam3
