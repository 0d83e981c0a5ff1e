#include <gdal_alg.h>
#include <gdal_priv.h>
#include <ogrsf_frmts.h>

#include <memory>

#include "sam3/error.h"
#include "geo/map_label.h"

namespace sam3::geo {
namespace {

std::string lower_extension(const std::filesystem::path& p) {
  std::string e = p.extension().string();
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

const char* driver_for(const std::filesystem::path& path) {
  const std::string e = lower_extension(path);
  if (e == ".gpkg") return "GPKG";
  if (e == ".geojson" || e == ".json") return "GeoJSON";
  if (e == ".fgb") return "FlatGeobuf";
  if (e == ".shp" || e.empty()) return "ESRI Shapefile";  // a folder: one .shp per layer
  throw Error(ErrorCode::kInvalidArgument, path.string() + ": vector output by extension: .gpkg, .geojson, .fgb or .shp");
}

std::string gdal_error() {
  const char* m = CPLGetLastErrorMsg();
  return m && *m ? m : "unknown GDAL error";
}

// The instance's mask as polygons along pixel edges (GDALPolygonize on an in-memory raster of
// its crop, placed by the raster's geotransform), holes kept, as one (multi)polygon.
std::unique_ptr<OGRGeometry> outline(const label::MaskCrop& m, const std::array<double, 6>& g) {
  GDALDriver* mem = GetGDALDriverManager()->GetDriverByName("MEM");
  std::unique_ptr<GDALDataset> crop(mem->Create("", m.width, m.height, 1, GDT_Byte, nullptr));
  double cg[6] = {g[0] + m.x0 * g[1] + m.y0 * g[2], g[1], g[2], g[3] + m.x0 * g[4] + m.y0 * g[5], g[4], g[5]};
  crop->SetGeoTransform(cg);
  GDALRasterBand* band = crop->GetRasterBand(1);
  std::vector<std::uint8_t> data = m.data;
  if (band->RasterIO(GF_Write, 0, 0, m.width, m.height, data.data(), m.width, m.height, GDT_Byte, 0, 0) != CE_None) {
    throw Error(ErrorCode::kIo, "cannot rasterize a mask for polygonizing: " + gdal_error());
  }
  GDALDriver* memv = GetGDALDriverManager()->GetDriverByName("Memory");
  std::unique_ptr<GDALDataset> vec(memv->Create("", 0, 0, 0, GDT_Unknown, nullptr));
  OGRLayer* layer = vec->CreateLayer("p", nullptr, wkbPolygon, nullptr);
  OGRFieldDefn value("v", OFTInteger);
  layer->CreateField(&value);
  // The mask itself as the mask band: only pixels that are set become polygons.
  if (GDALPolygonize(band, band, layer, 0, nullptr, nullptr, nullptr) != CE_None) {
    throw Error(ErrorCode::kIo, "cannot polygonize a mask: " + gdal_error());
  }
  auto multi = std::make_unique<OGRMultiPolygon>();
  layer->ResetReading();
  for (auto& feature : *layer) {
    if (const OGRGeometry* geom = feature->GetGeometryRef()) multi->addGeometry(geom);
  }
  std::unique_ptr<OGRGeometry> valid(multi->MakeValid());
  if (!valid) return multi;
  // One geometry type for every feature of the layer, whatever MakeValid returned.
  return std::unique_ptr<OGRGeometry>(OGRGeometryFactory::forceToMultiPolygon(valid.release()));
}

// The CRS of a raster, or nullopt when it has none.
std::unique_ptr<OGRSpatialReference> crs_of(const Raster& raster) {
  if (raster.crs_wkt().empty()) return nullptr;
  auto srs = std::make_unique<OGRSpatialReference>();
  if (srs->importFromWkt(raster.crs_wkt().c_str()) != OGRERR_NONE) return nullptr;
  srs->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  return srs;
}

double area_of(const OGRGeometry& g) {
  if (const auto* m = dynamic_cast<const OGRMultiPolygon*>(&g)) return m->get_Area();
  if (const auto* p = dynamic_cast<const OGRPolygon*>(&g)) return p->get_Area();
  if (const auto* c = dynamic_cast<const OGRGeometryCollection*>(&g)) return c->get_Area();
  return 0;
}

}  // namespace

std::vector<int> write_map_vectors(const VectorOutput& output, const std::vector<LabelCategory>& categories,
                                   const std::vector<MapPart>& parts) {
  GDALAllRegister();
  const std::string driver_name = driver_for(output.path);
  GDALDriver* driver = GetGDALDriverManager()->GetDriverByName(driver_name.c_str());
  if (!driver) throw Error(ErrorCode::kIo, "this GDAL has no " + driver_name + " driver");
  const bool geojson = driver_name == "GeoJSON";
  const std::string wanted = geojson ? "EPSG:4326" : output.target_crs;  // RFC 7946: WGS84 lon/lat
  std::unique_ptr<OGRSpatialReference> out_srs;
  if (!wanted.empty()) {
    out_srs = std::make_unique<OGRSpatialReference>();
    if (out_srs->SetFromUserInput(wanted.c_str()) != OGRERR_NONE) {
      throw Error(ErrorCode::kInvalidArgument, "--t-srs " + wanted + ": not a CRS GDAL knows (e.g. EPSG:4326)");
    }
    out_srs->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  } else if (!parts.empty()) {
    out_srs = crs_of(*parts.front().raster);
  }
  // No CRS (a world file without a .prj): a GeoPackage layer without one is "Undefined
  // geographic SRS" (srs_id 0), which a GIS reads as degrees; map units are "Undefined Cartesian
  // SRS" (srs_id -1), which GDAL writes for this local frame.
  OGRSpatialReference undefined_cartesian;
  undefined_cartesian.importFromWkt(R"(LOCAL_CS["Undefined cartesian SRS",UNIT["unknown",0]])");
  OGRSpatialReference* layer_srs = out_srs ? out_srs.get() : driver_name == "GPKG" ? &undefined_cartesian : nullptr;
  OGRSpatialReference equal_area;  // m² for rasters in geographic coordinates
  equal_area.importFromEPSG(6933);
  equal_area.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);

  std::unique_ptr<GDALDataset> ds(driver->Create(output.path.c_str(), 0, 0, 0, GDT_Unknown, nullptr));
  if (!ds) throw Error(ErrorCode::kIo, output.path.string() + ": cannot create (" + gdal_error() + ")");
  const bool layer_per_category = driver_name == "GPKG" || driver_name == "ESRI Shapefile";
  std::vector<OGRLayer*> layers;
  char** layer_options = geojson ? CSLSetNameValue(nullptr, "RFC7946", "YES") : nullptr;
  auto make_layer = [&](const std::string& name) {
    OGRLayer* l = ds->CreateLayer(name.c_str(), layer_srs, wkbMultiPolygon, layer_options);
    if (!l) throw Error(ErrorCode::kIo, output.path.string() + ": cannot create layer " + name + " (" + gdal_error() + ")");
    for (auto [field, type] : {std::pair{"source", OFTString}, std::pair{"class", OFTString}, std::pair{"score", OFTReal},
                               std::pair{"area", OFTReal}, std::pair{"area_m2", OFTReal}, std::pair{"tile", OFTInteger}}) {
      OGRFieldDefn f(field, type);
      l->CreateField(&f);
    }
    return l;
  };
  if (layer_per_category) {
    for (const auto& c : categories) layers.push_back(make_layer(c.name));
  } else {
    layers.push_back(make_layer(output.path.stem().string()));
  }
  CSLDestroy(layer_options);
  std::vector<bool> in_transaction;  // formats without transactions write directly
  for (OGRLayer* l : layers) in_transaction.push_back(l->StartTransaction() == OGRERR_NONE);
  std::vector<int> written(categories.size(), 0);
  for (const auto& part : parts) {
    const Raster& raster = *part.raster;
    const auto srs = crs_of(raster);
    if (!srs && out_srs && !wanted.empty()) {
      throw Error(ErrorCode::kInvalidArgument, raster.path().string() + ": has no CRS, so it cannot be written in " + wanted +
                                                   "; write a .gpkg or .fgb in its own frame, or give it a CRS");
    }
    if (wanted.empty() && (srs != nullptr) != (out_srs != nullptr)) {  // one output, one frame
      const Raster& with = srs ? raster : *parts.front().raster;
      const Raster& without = srs ? *parts.front().raster : raster;
      throw Error(ErrorCode::kInvalidArgument,
                  with.path().string() + " has a CRS and " + without.path().string() +
                      " has none (a world file without a .prj), so their features cannot share one output: give it its CRS (a .prj "
                      "beside it, or gdal_edit.py -a_srs EPSG:CODE), or label them in separate runs");
    }
    std::unique_ptr<OGRCoordinateTransformation> to_out, to_equal_area;
    if (srs && out_srs && !srs->IsSame(out_srs.get())) to_out.reset(OGRCreateCoordinateTransformation(srs.get(), out_srs.get()));
    const double unit = srs && srs->IsProjected() ? srs->GetLinearUnits() : 0;
    if (srs && !srs->IsProjected()) to_equal_area.reset(OGRCreateCoordinateTransformation(srs.get(), &equal_area));
    const std::string source_name = raster.path().filename().string();
    const auto& result = *part.result;
    for (size_t i = 0; i < result.instances.size(); ++i) {
      const auto& inst = result.instances[i];
      auto geom = outline(inst.mask, raster.geotransform());
      const double area = area_of(*geom);
      double m2 = -1;
      if (unit > 0) {
        m2 = area * unit * unit;
      } else if (to_equal_area) {
        std::unique_ptr<OGRGeometry> ea(geom->clone());
        if (ea->transform(to_equal_area.get()) == OGRERR_NONE) m2 = area_of(*ea);
      }
      if (to_out && geom->transform(to_out.get()) != OGRERR_NONE) {
        throw Error(ErrorCode::kIo, "cannot transform a polygon of " + source_name + " to the output CRS");
      }
      OGRLayer* layer = layers[layer_per_category ? static_cast<size_t>(inst.category) : 0];
      OGRFeature feature(layer->GetLayerDefn());
      feature.SetField("source", source_name.c_str());
      feature.SetField("class", categories[static_cast<size_t>(inst.category)].name.c_str());
      feature.SetField("score", inst.score);
      feature.SetField("area", area);
      if (m2 >= 0) feature.SetField("area_m2", m2);
      feature.SetField("tile", i < result.tile_of_instance.size() ? result.tile_of_instance[i] : -1);
      feature.SetGeometryDirectly(geom.release());
      if (layer->CreateFeature(&feature) != OGRERR_NONE) {
        throw Error(ErrorCode::kIo, output.path.string() + ": cannot write a feature (" + gdal_error() + ")");
      }
      ++written[static_cast<size_t>(inst.category)];
    }
  }
  for (size_t l = 0; l < layers.size(); ++l) {
    if (in_transaction[l] && layers[l]->CommitTransaction() != OGRERR_NONE) {
      throw Error(ErrorCode::kIo, output.path.string() + ": cannot write (" + gdal_error() + ")");
    }
  }
  ds.reset();  // flushes and closes
  return written;
}

}  // namespace sam3::geo
