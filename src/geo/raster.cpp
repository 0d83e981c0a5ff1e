#include "sam3/raster.h"

#include <gdal_priv.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>

#include "sam3/error.h"

namespace sam3 {
namespace {

void register_drivers() {
  static std::once_flag once;
  std::call_once(once, [] {
    GDALAllRegister();
    CPLSetErrorHandler(CPLQuietErrorHandler);  // errors come back as sam3 errors, not on stderr
    // GDAL caches up to 5% of RAM in blocks by default; tiles are read once, so a small cache
    // keeps the peak bounded whatever the raster's size (GDAL_CACHEMAX still decides if set).
    if (!CPLGetConfigOption("GDAL_CACHEMAX", nullptr)) GDALSetCacheMax64(std::int64_t{128} << 20);
  });
}

std::string last_gdal_error() {
  const char* m = CPLGetLastErrorMsg();
  return m && *m ? m : "unknown GDAL error";
}

// What to do when GDAL opens a file but cannot read its pixels.
std::string unreadable_hint(const std::filesystem::path& path) {
  return "check that the file is whole and that the files it refers to (a VRT's sources) are there; gdalinfo -checksum " + path.string() +
         " reads every pixel";
}

std::vector<int> default_bands(GDALDataset& ds) {
  const int n = ds.GetRasterCount();
  int r = 0, g = 0, b = 0;
  for (int i = 1; i <= n; ++i) {
    switch (ds.GetRasterBand(i)->GetColorInterpretation()) {
      case GCI_RedBand:
        r = r ? r : i;
        break;
      case GCI_GreenBand:
        g = g ? g : i;
        break;
      case GCI_BlueBand:
        b = b ? b : i;
        break;
      default:
        break;
    }
  }
  if (r && g && b) return {r, g, b};
  if (n >= 3) return {1, 2, 3};
  return {1, 1, 1};  // one band (or two: gray and alpha) shown as gray
}

BandScale scale_of(const std::filesystem::path& path, GDALRasterBand& band, const RasterOptions& o) {
  const bool byte = band.GetRasterDataType() == GDT_Byte;
  if ((o.scale == RasterOptions::Scale::kAuto && byte)) return {0, 1};
  if (o.scale == RasterOptions::Scale::kFixed) {
    return {o.low, o.high > o.low ? 255.0 / (o.high - o.low) : 1.0};
  }
  double min = 0, max = 0, mean = 0, sd = 0;
  if (band.ComputeStatistics(TRUE, &min, &max, &mean, &sd, nullptr, nullptr) != CE_None) {
    throw Error(ErrorCode::kImageCorrupt, path.string() + ": cannot compute the band statistics that --scale needs (" + last_gdal_error() +
                                              "): " + unreadable_hint(path));
  }
  if (o.scale == RasterOptions::Scale::kPercentile && max > min) {
    constexpr int kBuckets = 1024;
    std::vector<GUIntBig> histogram(kBuckets);
    if (band.GetHistogram(min, max, kBuckets, histogram.data(), FALSE, TRUE, nullptr, nullptr) == CE_None) {
      GUIntBig total = 0;
      for (auto h : histogram) total += h;
      const auto at = [&](double percent) {
        const double want = total * percent / 100.0;
        double seen = 0;
        for (int i = 0; i < kBuckets; ++i) {
          seen += static_cast<double>(histogram[static_cast<size_t>(i)]);
          if (seen >= want) return min + (max - min) * (i + 0.5) / kBuckets;
        }
        return max;
      };
      const double lo = at(o.low), hi = at(o.high);
      if (hi > lo) return {lo, 255.0 / (hi - lo)};
    }
  }
  return {min, max > min ? 255.0 / (max - min) : 1.0};
}

// GDAL drivers that fetch from web services rather than read a file.
constexpr const char* kNetworkDrivers[] = {"WMS",    "WMTS",   "WCS",    "HTTP", "EEDA",       "EEDAI", "PLMOSAIC", "PLSCENES", "DAAS",
                                           "OGCAPI", "STACTA", "STACIT", "NGW",  "AMIGOCLOUD", "CARTO", "ELASTIC",  "CSW",      "WFS"};

// Every raster driver this GDAL has but the network ones (GDALOpenEx's allow list).
const CPLStringList& local_raster_drivers() {
  static const CPLStringList names = [] {
    CPLStringList out;
    for (int i = 0; i < GDALGetDriverCount(); ++i) {
      GDALDriverH d = GDALGetDriver(i);
      const std::string name = GDALGetDriverShortName(d);
      const bool network =
          std::any_of(std::begin(kNetworkDrivers), std::end(kNetworkDrivers), [&](const char* n) { return EQUAL(n, name.c_str()); });
      if (!network && GDALGetMetadataItem(d, GDAL_DCAP_RASTER, nullptr)) out.AddString(name.c_str());
    }
    return out;
  }();
  return names;
}

// While alive (unless network is allowed), GDAL's curl file systems refuse every name in this
// thread before any request: a VRT naming a /vsicurl/ source cannot reach out when opened or read.
class NoNetwork {
 public:
  explicit NoNetwork(bool allowed) : active_(!allowed) {
    if (!active_) return;
    const char* before = CPLGetThreadLocalConfigOption("CPL_VSIL_CURL_ALLOWED_EXTENSIONS", nullptr);
    had_ = before != nullptr;
    if (had_) before_ = before;
    CPLSetThreadLocalConfigOption("CPL_VSIL_CURL_ALLOWED_EXTENSIONS", ".sam3-network-not-allowed");
  }
  ~NoNetwork() {
    if (active_) CPLSetThreadLocalConfigOption("CPL_VSIL_CURL_ALLOWED_EXTENSIONS", had_ ? before_.c_str() : nullptr);
  }
  NoNetwork(const NoNetwork&) = delete;
  NoNetwork& operator=(const NoNetwork&) = delete;

 private:
  bool active_, had_ = false;
  std::string before_;
};

[[noreturn]] void refuse_network(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, what +
                                               " reads from the network; sam3 reads local rasters only unless asked: "
                                               "add --allow-network-rasters (RasterOptions::allow_network), or download it first");
}

// Pixel sizes that give features an area on the ground: finite, non-zero, invertible.
void check_geotransform(const std::filesystem::path& path, const std::array<double, 6>& g) {
  const double det = g[1] * g[5] - g[2] * g[4];
  if (std::all_of(g.begin(), g.end(), [](double v) { return std::isfinite(v); }) && std::isfinite(det) && det != 0) return;
  char text[256];
  std::snprintf(text, sizeof text, "%g, %g, %g, %g, %g, %g", g[0], g[1], g[2], g[3], g[4], g[5]);
  throw Error(ErrorCode::kImageUnsupported,
              path.string() + ": its geotransform (" + text + ") is degenerate: a pixel has " +
                  (std::isfinite(det) ? "no area" : "a non-finite size") +
                  " on the ground, so every feature would too; fix the georeferencing (gdal_edit.py -a_ullr or -tr)");
}

}  // namespace

bool is_network_raster_name(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* prefix : {"/vsicurl", "/vsis3", "/vsigs", "/vsiaz", "/vsiadls", "/vsioss", "/vsiswift", "/vsiwebhdfs", "/vsihdfs",
                             "http://", "https://", "ftp://", "ftps://"}) {
    if (lower.find(prefix) != std::string::npos) return true;
  }
  return false;
}

bool is_georeferenced_raster(const std::filesystem::path& path) {
  if (is_network_raster_name(path.string())) return false;  // not a file the image path could take either
  register_drivers();
  const NoNetwork no_network(false);
  CPLErrorReset();
  std::unique_ptr<GDALDataset> ds(GDALDataset::Open(path.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, local_raster_drivers().List()));
  if (!ds || ds->GetRasterCount() < 1) return false;
  const OGRSpatialReference* srs = ds->GetSpatialRef();
  if ((srs && !srs->IsEmpty()) || ds->GetGCPCount() > 0) return true;
  std::array<double, 6> g{};
  if (ds->GetGeoTransform(g.data()) != CE_None) return false;
  // A geotransform and no CRS: a world file beside a plain image gives it, and the image path
  // reads that file itself (map coordinates, no CRS); one inside the file is the map path's.
  // The names the image path looks for (.wld; .png -> .pgw and .pngw), as GDAL lists them.
  const auto lower_ext = [](const std::filesystem::path& p) {
    std::string ext = p.extension().string();
    for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
  };
  const std::string ext = lower_ext(path);
  std::vector<std::string> world = {".wld", ext + "w"};
  if (ext.size() >= 3) world.push_back(std::string(".") + ext[1] + ext.back() + "w");
  char** files = ds->GetFileList();
  bool world_file = false;
  for (char** f = files; f && *f; ++f) {
    const std::filesystem::path file = *f;
    world_file |= file.stem() == path.stem() && std::find(world.begin(), world.end(), lower_ext(file)) != world.end();
  }
  CSLDestroy(files);
  return !world_file;
}

struct Raster::Impl {
  std::filesystem::path path;
  std::unique_ptr<GDALDataset> dataset;
  std::array<double, 6> geotransform{0, 1, 0, 0, 0, 1};
  bool georeferenced = false;
  std::string crs;
  std::vector<int> bands;
  std::vector<BandScale> scales;
  int alpha = 0;      // alpha band index, 0 when none
  double factor = 1;  // read grid pixels per source pixel (--gsd)
  bool allow_network = false;
  int width = 0, height = 0;
  mutable std::mutex mutex;  // a GDAL dataset is not to be read from two threads at once
};

Raster::Raster(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Raster::Raster(Raster&&) noexcept = default;
Raster& Raster::operator=(Raster&&) noexcept = default;
Raster::~Raster() = default;

Raster Raster::open(const std::filesystem::path& path, const RasterOptions& options) {
  register_drivers();
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->allow_network = options.allow_network;
  if (!(std::isfinite(options.gsd_m) && options.gsd_m >= 0)) {
    throw Error(ErrorCode::kInvalidArgument, "--gsd must be a positive number of metres, got " + std::to_string(options.gsd_m) + " (" +
                                                 (std::isnan(options.gsd_m) ? "nan" : "not finite or negative") + ")");
  }
  if (!std::isfinite(options.low) || !std::isfinite(options.high)) {
    throw Error(ErrorCode::kInvalidArgument, "--scale bounds must be finite numbers");
  }
  if (!options.allow_network && is_network_raster_name(path.string())) refuse_network(path.string());
  const bool virtual_name = path.string().rfind("/vsi", 0) == 0;  // /vsizip/..., /vsitar/...: GDAL's to find
  std::error_code ec;
  if (!virtual_name && !std::filesystem::exists(path, ec) && path.string().find(':') == std::string::npos) {
    throw Error(ErrorCode::kImageUnreadable, path.string() + ": no such file");
  }
  const NoNetwork no_network(options.allow_network);
  CPLErrorReset();
  impl->dataset.reset(GDALDataset::Open(path.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY | GDAL_OF_VERBOSE_ERROR,
                                        options.allow_network ? nullptr : local_raster_drivers().List()));
  if (!impl->dataset && !virtual_name && std::filesystem::is_directory(path, ec)) {
    // GDAL reads a few formats from folders (Zarr, ArcInfo grids); any other is a folder of files.
    throw Error(ErrorCode::kImageUnreadable,
                path.string() +
                    " is a folder, and GDAL reads no raster from it: give the raster files in it (sam3 label takes a folder's "
                    ".tif, .tiff, .png, .jpg ... files itself; name others, e.g. " +
                    (path / "*.jp2").string() + "), or join them in a VRT (gdalbuildvrt mosaic.vrt " + (path / "*.tif").string() +
                    "), which also merges objects across the files' edges");
  }
  if (!impl->dataset) {
    throw Error(ErrorCode::kImageUnreadable, path.string() + ": GDAL cannot open it as a raster (" + last_gdal_error() +
                                                 "); is it a format the installed GDAL reads (gdalinfo " + path.string() + ")?");
  }
  GDALDataset& ds = *impl->dataset;
  if (ds.GetRasterCount() < 1) throw Error(ErrorCode::kImageUnsupported, path.string() + ": has no raster band");
  if (!options.allow_network) {  // a VRT's sources, a world file, ...: read later, checked now
    char** files = ds.GetFileList();
    for (char** f = files; f && *f; ++f) {
      if (is_network_raster_name(*f)) {
        const std::string name = *f;
        CSLDestroy(files);
        refuse_network(path.string() + " names " + name + ", which");
      }
    }
    CSLDestroy(files);
    // GDAL lists a VRT's sources only when they exist locally: its own text is checked too.
    if (EQUAL(ds.GetDriverName(), "VRT") && !virtual_name && std::filesystem::is_regular_file(path, ec) &&
        std::filesystem::file_size(path, ec) < (std::uintmax_t{64} << 20)) {
      std::ifstream in(path, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (const std::string tag : {"<SourceFilename", "<SourceDataset"}) {  // file names, not metadata
        for (size_t at = text.find(tag); at != std::string::npos; at = text.find(tag, at + 1)) {
          const size_t open = text.find('>', at), close = text.find("</", at);
          if (open == std::string::npos || close == std::string::npos || close < open) continue;
          const std::string name = text.substr(open + 1, close - open - 1);
          if (is_network_raster_name(name)) refuse_network(path.string() + " has a source, " + name + ", that");
        }
      }
    }
  }
  impl->georeferenced = ds.GetGeoTransform(impl->geotransform.data()) == CE_None;
  if (impl->georeferenced) check_geotransform(path, impl->geotransform);
  if (const OGRSpatialReference* srs = ds.GetSpatialRef()) {
    char* wkt = nullptr;
    srs->exportToWkt(&wkt);
    impl->crs = wkt ? wkt : "";
    CPLFree(wkt);
  }
  if (!impl->georeferenced && (!impl->crs.empty() || ds.GetGCPCount() > 0)) {
    // GDAL reads a GeoTIFF with a zero pixel scale as one tie point and no geotransform: the
    // features would be in pixels yet labelled with the CRS, with zero area.
    throw Error(ErrorCode::kImageUnsupported, path.string() +
                                                  ": has a CRS or ground control points but no usable geotransform (a zero pixel size "
                                                  "is degenerate, or it is georeferenced by GCPs only); warp it first (gdalwarp) or fix "
                                                  "the georeferencing (gdal_edit.py -a_ullr or -tr)");
  }
  impl->bands = options.bands.empty() ? default_bands(ds) : options.bands;
  if (impl->bands.size() != 3 && impl->bands.size() != 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "--bands takes one band (gray) or three (red, green, blue), got " + std::to_string(impl->bands.size()));
  }
  if (impl->bands.size() == 1) impl->bands = {impl->bands[0], impl->bands[0], impl->bands[0]};
  for (int b : impl->bands) {
    if (b < 1 || b > ds.GetRasterCount()) {
      throw Error(ErrorCode::kInvalidArgument, path.string() + " has bands 1 to " + std::to_string(ds.GetRasterCount()) + "; band " +
                                                   std::to_string(b) + " does not exist");
    }
  }
  for (int i = 1; i <= ds.GetRasterCount(); ++i) {
    if (ds.GetRasterBand(i)->GetColorInterpretation() == GCI_AlphaBand) impl->alpha = i;
  }
  for (int b : impl->bands) impl->scales.push_back(scale_of(path, *ds.GetRasterBand(b), options));
  impl->width = ds.GetRasterXSize();
  impl->height = ds.GetRasterYSize();
  if (options.gsd_m > 0) {
    OGRSpatialReference srs;
    if (!impl->georeferenced || impl->crs.empty() || srs.importFromWkt(impl->crs.c_str()) != OGRERR_NONE || !srs.IsProjected()) {
      throw Error(ErrorCode::kInvalidArgument, path.string() +
                                                   ": --gsd needs a projected CRS (metres on the ground); "
                                                   "reproject it first, e.g. gdalwarp -t_srs EPSG:32633");
    }
    auto& g = impl->geotransform;
    const double pixel_m = std::sqrt(std::abs(g[1] * g[5] - g[2] * g[4])) * srs.GetLinearUnits();
    impl->factor = pixel_m / options.gsd_m;
    // Sizes in double first (finite or inf, never wrapped): an int cast of an out-of-range value is undefined.
    const double w = std::round(impl->width * impl->factor), h = std::round(impl->height * impl->factor);
    char size[128], gsd[64];
    std::snprintf(size, sizeof size, w < 1e15 && h < 1e15 ? "%.0f x %.0f pixels" : "%.3g x %.3g pixels", w, h);
    std::snprintf(gsd, sizeof gsd, "%g m (the raster has %g m)", options.gsd_m, pixel_m);
    // The finest --gsd allowed is printed to 6 digits: that value, typed back, must pass.
    if (!(impl->factor <= kMaxGsdUpsample * (1 + 1e-6))) {
      char why[512];
      std::snprintf(why, sizeof why,
                    ", enlarged %.4g times a side. Upsampling adds no detail, only tiles (their count grows with the square), "
                    "so sam3 enlarges at most %g times (enough to bring a coarse raster's small objects to the model's scale): "
                    "give --gsd %.6g or coarser (or leave --gsd out to read it at its own %g m)",
                    impl->factor, kMaxGsdUpsample, pixel_m / kMaxGsdUpsample, pixel_m);
      throw Error(ErrorCode::kInvalidArgument, path.string() + ": --gsd " + gsd + " would read it as " + size + why);
    }
    if (!(w <= std::numeric_limits<int>::max() && h <= std::numeric_limits<int>::max())) {
      throw Error(ErrorCode::kInvalidArgument, path.string() + ": --gsd " + gsd + " would read it as " + size +
                                                   "; GDAL's limit is 2147483647 a side: give a coarser --gsd");
    }
    if (!(w >= 1 && h >= 1)) {
      throw Error(ErrorCode::kInvalidArgument,
                  path.string() + ": --gsd " + gsd + " would read it as " + size + ", less than one pixel: give a finer --gsd");
    }
    impl->width = static_cast<int>(w);
    impl->height = static_cast<int>(h);
    const double fx = static_cast<double>(ds.GetRasterXSize()) / impl->width, fy = static_cast<double>(ds.GetRasterYSize()) / impl->height;
    g = {g[0], g[1] * fx, g[2] * fy, g[3], g[4] * fx, g[5] * fy};
  }
  return Raster(std::move(impl));
}

const std::filesystem::path& Raster::path() const { return impl_->path; }
int Raster::width() const { return impl_->width; }
int Raster::height() const { return impl_->height; }
int Raster::source_width() const { return impl_->dataset->GetRasterXSize(); }
int Raster::source_height() const { return impl_->dataset->GetRasterYSize(); }
std::array<int, 2> Raster::block_size() const {
  int bx = 0, by = 0;
  impl_->dataset->GetRasterBand(1)->GetBlockSize(&bx, &by);
  return {bx, by};
}
bool Raster::georeferenced() const { return impl_->georeferenced; }
const std::array<double, 6>& Raster::geotransform() const { return impl_->geotransform; }
const std::string& Raster::crs_wkt() const { return impl_->crs; }
const std::vector<int>& Raster::bands() const { return impl_->bands; }
const std::vector<BandScale>& Raster::scales() const { return impl_->scales; }

Image Raster::read(const TileRect& r, std::vector<std::uint8_t>* valid) const {
  const int w = r.x1 - r.x0, h = r.y1 - r.y0;
  // The window in source pixels; GDAL resamples it into the w x h buffer (area average when
  // shrinking, bilinear when enlarging).
  const int sw = impl_->dataset->GetRasterXSize(), sh = impl_->dataset->GetRasterYSize();
  const double fx = static_cast<double>(sw) / impl_->width, fy = static_cast<double>(sh) / impl_->height;
  GDALRasterIOExtraArg extra;
  INIT_RASTERIO_EXTRA_ARG(extra);
  extra.eResampleAlg = impl_->factor < 1 ? GRIORA_Average : GRIORA_Bilinear;
  extra.bFloatingPointWindowValidity = TRUE;
  extra.dfXOff = r.x0 * fx, extra.dfYOff = r.y0 * fy, extra.dfXSize = w * fx, extra.dfYSize = h * fy;
  const int x0 = static_cast<int>(std::floor(extra.dfXOff)), y0 = static_cast<int>(std::floor(extra.dfYOff));
  const int ww = std::min(sw - x0, std::max(1, static_cast<int>(std::ceil(extra.dfXOff + extra.dfXSize)) - x0));
  const int wh = std::min(sh - y0, std::max(1, static_cast<int>(std::ceil(extra.dfYOff + extra.dfYSize)) - y0));
  GDALRasterIOExtraArg* resample = impl_->factor == 1 ? nullptr : &extra;
  GDALRasterIOExtraArg nearest = extra;
  nearest.eResampleAlg = GRIORA_NearestNeighbour;
  GDALRasterIOExtraArg* mask_resample = impl_->factor == 1 ? nullptr : &nearest;
  const size_t n = static_cast<size_t>(w) * h;
  Image image{w, h, std::vector<std::uint8_t>(n * 3)};
  std::vector<double> values(n);
  if (valid) valid->assign(n, 1);
  std::lock_guard lock(impl_->mutex);
  const NoNetwork no_network(impl_->allow_network);
  GDALDataset& ds = *impl_->dataset;
  for (size_t c = 0; c < 3; ++c) {
    GDALRasterBand* band = ds.GetRasterBand(impl_->bands[c]);
    if (band->RasterIO(GF_Read, x0, y0, ww, wh, values.data(), w, h, GDT_Float64, 0, 0, resample) != CE_None) {
      throw Error(ErrorCode::kImageCorrupt, impl_->path.string() + ": cannot read pixels " + std::to_string(r.x0) + "," +
                                                std::to_string(r.y0) + " (" + last_gdal_error() + "): " + unreadable_hint(impl_->path));
    }
    int has_nodata = 0;
    const double nodata = band->GetNoDataValue(&has_nodata);
    const BandScale s = impl_->scales[c];
    for (size_t i = 0; i < n; ++i) {
      const double v = values[i];
      if (valid && has_nodata && (v == nodata || (std::isnan(nodata) && std::isnan(v)))) (*valid)[i] = 0;
      image.rgb[i * 3 + c] = static_cast<std::uint8_t>(std::clamp(std::lround((v - s.offset) * s.factor), 0l, 255l));
    }
    // The band's mask (a mask band, or alpha) says where there is data too.
    if (valid && !has_nodata && (band->GetMaskFlags() & GMF_ALL_VALID) == 0) {
      std::vector<std::uint8_t> mask(n);
      if (band->GetMaskBand()->RasterIO(GF_Read, x0, y0, ww, wh, mask.data(), w, h, GDT_Byte, 0, 0, mask_resample) == CE_None) {
        for (size_t i = 0; i < n; ++i) (*valid)[i] = (*valid)[i] && mask[i] != 0;
      }
    }
  }
  return image;
}

}  // namespace sam3
