#include <gdal_priv.h>

#include <algorithm>
#include <numeric>

#include "sam3/error.h"
#include "geo/map_label.h"

namespace sam3::geo {

namespace {
constexpr int kBlock = 256;
}

void check_class_raster_size(const Raster& raster) {
  const std::int64_t blocks =
      ((std::int64_t{raster.width()} + kBlock - 1) / kBlock) * ((std::int64_t{raster.height()} + kBlock - 1) / kBlock);
  if (blocks > kMaxClassRasterBlocks) {
    throw Error(ErrorCode::kInvalidArgument,
                "--raster-out: a class raster of " + std::to_string(raster.width()) + " x " + std::to_string(raster.height()) +
                    " pixels needs " + std::to_string(blocks) + " blocks of " + std::to_string(kBlock) + " x " + std::to_string(kBlock) +
                    ", more than the " + std::to_string(kMaxClassRasterBlocks) +
                    " a GeoTIFF can index in bounded memory; label without --raster-out and rasterize the vectors "
                    "where needed (gdal_rasterize)");
  }
}

void write_class_raster(const std::filesystem::path& path, const Raster& raster, const MapLabelResult& result, std::size_t categories) {
  check_class_raster_size(raster);
  GDALAllRegister();
  GDALDriver* gtiff = GetGDALDriverManager()->GetDriverByName("GTiff");
  const GDALDataType type = categories > 255 ? GDT_UInt16 : GDT_Byte;
  const char* options[] = {"TILED=YES", "COMPRESS=DEFLATE", "SPARSE_OK=TRUE", "BIGTIFF=IF_SAFER", nullptr};
  std::unique_ptr<GDALDataset> ds(gtiff->Create(path.c_str(), raster.width(), raster.height(), 1, type, const_cast<char**>(options)));
  if (!ds) throw Error(ErrorCode::kIo, path.string() + ": cannot create the class raster (" + CPLGetLastErrorMsg() + ")");
  if (raster.georeferenced()) {
    auto g = raster.geotransform();
    ds->SetGeoTransform(g.data());
  }
  if (!raster.crs_wkt().empty()) ds->SetProjection(raster.crs_wkt().c_str());
  GDALRasterBand* band = ds->GetRasterBand(1);
  band->SetNoDataValue(0);
  // Lowest score first, so where instances overlap the best one is written last and wins.
  std::vector<size_t> order(result.instances.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return result.instances[a].score < result.instances[b].score; });
  for (size_t i : order) {
    const auto& inst = result.instances[i];
    const label::MaskCrop& m = inst.mask;
    if (m.width <= 0 || m.height <= 0) continue;
    std::vector<std::uint16_t> block(static_cast<size_t>(m.width) * m.height);
    if (band->RasterIO(GF_Read, m.x0, m.y0, m.width, m.height, block.data(), m.width, m.height, GDT_UInt16, 0, 0) != CE_None) {
      throw Error(ErrorCode::kIo, path.string() + ": cannot read back the class raster");
    }
    for (size_t k = 0; k < block.size(); ++k) {
      if (m.data[k]) block[k] = static_cast<std::uint16_t>(inst.category + 1);
    }
    if (band->RasterIO(GF_Write, m.x0, m.y0, m.width, m.height, block.data(), m.width, m.height, GDT_UInt16, 0, 0) != CE_None) {
      throw Error(ErrorCode::kIo, path.string() + ": cannot write the class raster (" + CPLGetLastErrorMsg() + ")");
    }
  }
  ds->FlushCache();
  ds.reset();
}

}  // namespace sam3::geo
