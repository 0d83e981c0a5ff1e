"""sam3 label on georeferenced rasters, checked with GDAL's own readers (python3-gdal): the
CRS, one layer per prompt, each polygon's place and area in map units, validity, nodata,
VRT mosaics, GeoJSON in WGS84, and bounded memory on a large sparse raster."""
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal, ogr, osr

gdal.UseExceptions()
CLI = os.environ["SAM3_CLI"]
MODELS = Path(os.environ["SAM3_TEST_MODELS"]) / "usls"
ORIGIN = (500000.0, 4100000.0)  # UTM 33N
PIXEL = 0.5                      # metres

# Objects in pixels (x0, y0, x1, y1) on a 1200 x 800 raster tiled 600 with overlap 100: each lies
# inside one quadrant of the tiles that see it (the test model answers one instance per quadrant).
RED = [(60, 40, 200, 160), (820, 460, 980, 560)]
BLUE = [(340, 60, 520, 200)]


def create_utm(path, width, height, bands, dtype, options=("TILED=YES",)):
    """An empty GeoTIFF in UTM 33N at PIXEL metres, its top-left corner at ORIGIN."""
    ds = gdal.GetDriverByName("GTiff").Create(str(path), width, height, bands, dtype, list(options))
    ds.SetGeoTransform([ORIGIN[0], PIXEL, 0, ORIGIN[1], 0, -PIXEL])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32633)
    ds.SetProjection(srs.ExportToWkt())
    return ds


def write_raster(path, width=1200, height=800, dtype=gdal.GDT_UInt16, value=4000, nodata=None, objects=None,
                 nodata_box=None):
    ds = create_utm(path, width, height, 3, dtype, ("TILED=YES", "BLOCKXSIZE=256", "BLOCKYSIZE=256"))
    bands = np.zeros((3, height, width), np.uint16)
    for (channel, boxes) in (objects or {}).items():
        for x0, y0, x1, y1 in boxes:
            bands[channel, y0:y1, x0:x1] = value
    if nodata_box is not None:
        x0, y0, x1, y1 = nodata_box
        bands[:, y0:y1, x0:x1] = nodata
    for b in range(3):
        band = ds.GetRasterBand(b + 1)
        if nodata is not None:
            band.SetNoDataValue(nodata)
        band.WriteArray(bands[b])
    ds = None


def label(inputs, out, *extra, tile="600", overlap="100"):
    r = subprocess.run([CLI, "label", *map(str, inputs), "--models", str(MODELS), "-p", "red", "-p", "blue",
                        "--tile", tile, "--overlap", overlap, "--out", str(out), *extra],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r


def features(path, layer):
    ds = ogr.Open(str(path))
    lyr = ds.GetLayerByName(layer)
    assert lyr is not None, f"no layer {layer} in {path}"
    return ds, lyr, [f for f in lyr]


def map_box(x0, y0, x1, y1):
    """Pixel bounds -> map minx, miny, maxx, maxy."""
    return (ORIGIN[0] + x0 * PIXEL, ORIGIN[1] - y1 * PIXEL, ORIGIN[0] + x1 * PIXEL, ORIGIN[1] - y0 * PIXEL)


def test_a_geotiff_becomes_a_geopackage_in_its_crs_with_a_layer_per_prompt(tmp_path):
    write_raster(tmp_path / "utm.tif", objects={0: RED, 2: BLUE})
    r = label([tmp_path / "utm.tif"], tmp_path / "out", "--format", "gpkg")
    assert "0.240 km2 with data" in r.stdout, "1200 x 800 pixels of 0.25 m2, each counted once: " + r.stdout
    gpkg = tmp_path / "out" / "labels.gpkg"
    info = subprocess.run(["ogrinfo", "-so", "-al", str(gpkg)], capture_output=True, text=True, check=True).stdout
    assert 'ID["EPSG",32633]' in info, info
    for layer, boxes in (("red", RED), ("blue", BLUE)):
        ds, lyr, feats = features(gpkg, layer)
        assert len(feats) == len(boxes), [f.GetGeometryRef().GetEnvelope() for f in feats]
        for f in feats:
            geom = f.GetGeometryRef()
            assert geom.IsValid()
            env = geom.GetEnvelope()  # minx, maxx, miny, maxy
            near = [b for b in boxes if abs(map_box(*b)[0] - env[0]) < 6 and abs(map_box(*b)[3] - env[3]) < 6]
            assert near, f"{layer} polygon at {env} is where no {layer} object is"
            bx = map_box(*near[0])
            expected_area = (bx[2] - bx[0]) * (bx[3] - bx[1])
            assert abs(geom.GetArea() - expected_area) < 0.08 * expected_area
            assert abs(f.GetField("area") - geom.GetArea()) < 1e-6 * expected_area
            assert abs(f.GetField("area_m2") - expected_area) < 0.08 * expected_area, "metres: UTM units"
            assert f.GetField("class") == layer and f.GetField("source") == "utm.tif"
            assert 0.5 < f.GetField("score") <= 1.0


def test_nodata_is_never_detected_and_all_nodata_tiles_are_skipped(tmp_path):
    # Red objects under the nodata region (x >= 550), which covers the last column of tiles whole.
    write_raster(tmp_path / "holes.tif", nodata=65535, objects={0: RED + [(700, 60, 820, 160)]},
                 nodata_box=(550, 0, 1200, 800))
    r = label([tmp_path / "holes.tif"], tmp_path / "out", "--format", "gpkg")
    skipped = int(re.search(r"\((\d+) all nodata", r.stdout).group(1))
    assert skipped >= 1, r.stdout
    _, _, feats = features(tmp_path / "out" / "labels.gpkg", "red")
    assert len(feats) == 1, "only the red object left of the nodata region"
    env = feats[0].GetGeometryRef().GetEnvelope()
    assert env[1] <= map_box(550, 0, 550, 0)[0] + 1e-6, "nothing east of the data's edge"


def test_a_vrt_of_several_files_equals_the_single_raster(tmp_path):
    write_raster(tmp_path / "whole.tif", objects={0: RED, 2: BLUE})
    src = gdal.Open(str(tmp_path / "whole.tif"))
    gdal.Translate(str(tmp_path / "west.tif"), src, srcWin=[0, 0, 600, 800])
    gdal.Translate(str(tmp_path / "east.tif"), src, srcWin=[600, 0, 600, 800])
    src = None
    gdal.BuildVRT(str(tmp_path / "mosaic.vrt"), [str(tmp_path / "west.tif"), str(tmp_path / "east.tif")])
    label([tmp_path / "whole.tif"], tmp_path / "single", "--format", "gpkg")
    label([tmp_path / "mosaic.vrt"], tmp_path / "vrt", "--format", "gpkg")
    for layer in ("red", "blue"):
        _, _, a = features(tmp_path / "single" / "labels.gpkg", layer)
        _, _, b = features(tmp_path / "vrt" / "labels.gpkg", layer)
        assert sorted(round(f.GetGeometryRef().GetArea()) for f in a) == sorted(round(f.GetGeometryRef().GetArea()) for f in b)


def test_geojson_is_rfc7946_wgs84_and_flatgeobuf_keeps_the_crs(tmp_path):
    write_raster(tmp_path / "utm.tif", objects={0: RED, 2: BLUE})
    label([tmp_path / "utm.tif"], tmp_path / "out", "--format", "geojson,fgb")
    doc = json.loads((tmp_path / "out" / "labels.geojson").read_text())
    assert "crs" not in doc, "RFC 7946: WGS84 lon/lat, no crs member"
    utm, wgs = osr.SpatialReference(), osr.SpatialReference()
    utm.ImportFromEPSG(32633)
    wgs.ImportFromEPSG(4326)
    wgs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    to_wgs = osr.CoordinateTransformation(utm, wgs)
    lon, lat, _ = to_wgs.TransformPoint(*map_box(*RED[0])[:2])
    reds = [f for f in doc["features"] if f["properties"]["class"] == "red"]
    assert len(reds) == 2
    def points(geometry):
        polygons = geometry["coordinates"] if geometry["type"] == "MultiPolygon" else [geometry["coordinates"]]
        return [p for poly in polygons for ring in poly for p in ring]
    xs = [p[0] for f in reds for p in points(f["geometry"])]
    ys = [p[1] for f in reds for p in points(f["geometry"])]
    assert min(abs(x - lon) for x in xs) < 1e-4 and min(abs(y - lat) for y in ys) < 1e-4, "lon/lat order, right place"
    fgb = ogr.Open(str(tmp_path / "out" / "labels.fgb"))
    assert fgb.GetLayer(0).GetSpatialRef().GetAuthorityCode(None) == "32633"
    assert fgb.GetLayer(0).GetFeatureCount() == 3


def test_the_class_raster_is_aligned_pixel_for_pixel(tmp_path):
    write_raster(tmp_path / "utm.tif", objects={0: RED, 2: BLUE})
    label([tmp_path / "utm.tif"], tmp_path / "out", "--format", "gpkg", "--raster-out", "classes.tif")
    src, cls = gdal.Open(str(tmp_path / "utm.tif")), gdal.Open(str(tmp_path / "out" / "classes.tif"))
    assert (cls.RasterXSize, cls.RasterYSize) == (src.RasterXSize, src.RasterYSize)
    assert cls.GetGeoTransform() == src.GetGeoTransform()
    assert cls.GetSpatialRef().IsSame(src.GetSpatialRef())
    assert cls.GetRasterBand(1).GetBlockSize() == [256, 256], "tiled"
    classes = cls.GetRasterBand(1).ReadAsArray()
    for value, boxes in ((1, RED), (2, BLUE)):
        for x0, y0, x1, y1 in boxes:
            inside = classes[y0 + 5:y1 - 5, x0 + 5:x1 - 5]
            assert (inside == value).mean() > 0.95, f"class {value} at {x0},{y0}"
    assert (classes[700:800, 0:300] == 0).all(), "background is 0 (nodata)"


def test_t_srs_reprojects_the_geopackage(tmp_path):
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    label([tmp_path / "utm.tif"], tmp_path / "out", "--format", "gpkg", "--t-srs", "EPSG:3857")
    _, lyr, feats = features(tmp_path / "out" / "labels.gpkg", "red")
    assert lyr.GetSpatialRef().GetAuthorityCode(None) == "3857"
    assert len(feats) == 2


def test_a_large_sparse_raster_is_read_tile_by_tile_in_bounded_memory(tmp_path):
    # 24000 x 24000 pixels x 3 bands x 16 bit (3.5 GB if read whole), sparse on disk: nodata
    # except one block holding a red object.
    size = 24000
    path = tmp_path / "big.tif"
    ds = create_utm(path, size, size, 3, gdal.GDT_UInt16, ("TILED=YES", "SPARSE_OK=TRUE", "BLOCKXSIZE=512", "BLOCKYSIZE=512"))
    for b in range(3):
        ds.GetRasterBand(b + 1).SetNoDataValue(65535)  # sparse: blocks never written read as nodata
    block = np.zeros((2000, 2000), np.uint16)
    red = block.copy()
    red[200:500, 200:600] = 4000
    ds.GetRasterBand(1).WriteArray(red, 12000, 12000)
    ds.GetRasterBand(2).WriteArray(block, 12000, 12000)
    ds.GetRasterBand(3).WriteArray(block, 12000, 12000)
    ds = None
    assert path.stat().st_size < 200 * 1024 * 1024
    r = subprocess.run(["/usr/bin/time", "-v", CLI, "label", str(path), "--models", str(MODELS), "-p", "red",
                        "--tile", "2000", "--overlap", "200", "--format", "gpkg", "--scale", "0,4000",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    assert peak_kb < 1_000_000, f"peak {peak_kb / 1024:.0f} MB for a raster of 3.5 GB"
    _, _, feats = features(tmp_path / "out" / "labels.gpkg", "red")
    assert len(feats) == 1
    env = feats[0].GetGeometryRef().GetEnvelope()
    assert abs(env[0] - (ORIGIN[0] + 12200 * PIXEL)) < 10 and abs(env[3] - (ORIGIN[1] - 12200 * PIXEL)) < 10


def test_shards_of_one_raster_merge_into_what_one_run_writes(tmp_path):
    write_raster(tmp_path / "utm.tif", objects={0: RED, 2: BLUE})
    for k in (1, 2, 3):
        r = label([tmp_path / "utm.tif"], tmp_path / f"shard-{k}", "--format", "gpkg", "--shard", f"{k}/3",
                  tile="400", overlap="60")
        assert "map-shard.json" in r.stdout
    missing = subprocess.run([CLI, "label", "merge", str(tmp_path / "shard-1"), str(tmp_path / "shard-2"),
                              "--out", str(tmp_path / "merged")], capture_output=True, text=True)
    assert missing.returncode != 0 and "shard 3/3 is missing" in missing.stderr, missing.stderr
    merged = subprocess.run([CLI, "label", "merge", *(str(tmp_path / f"shard-{k}") for k in (3, 1, 2)),
                             "--out", str(tmp_path / "merged")], capture_output=True, text=True)
    assert merged.returncode == 0, merged.stderr
    label([tmp_path / "utm.tif"], tmp_path / "single", "--format", "gpkg", tile="400", overlap="60")

    def rows(path, layer):
        _, _, feats = features(path, layer)
        return sorted((f.GetField("score"), f.GetField("tile"), f.GetGeometryRef().ExportToWkt()) for f in feats)
    for layer in ("red", "blue"):
        assert rows(tmp_path / "merged" / "labels.gpkg", layer) == rows(tmp_path / "single" / "labels.gpkg", layer)


def test_gsd_resamples_first_and_shapefiles_are_a_layer_per_prompt(tmp_path):
    write_raster(tmp_path / "utm.tif", objects={0: RED, 2: BLUE})
    r = label([tmp_path / "utm.tif"], tmp_path / "out", "--format", "gpkg,shp", "--gsd", "1.0", tile="300", overlap="40")
    assert "0.240 km2" in r.stdout, "the same ground at 1 m: " + r.stdout
    for layer, boxes in (("red", RED), ("blue", BLUE)):
        _, _, feats = features(tmp_path / "out" / "labels.gpkg", layer)
        assert len(feats) == len(boxes)
        for f in feats:
            env = f.GetGeometryRef().GetEnvelope()
            near = [b for b in boxes if abs(map_box(*b)[0] - env[0]) < 3 and abs(map_box(*b)[3] - env[3]) < 3]
            assert near, f"{layer} at {env}: resampled polygons stay where the objects are"
        shp = ogr.Open(str(tmp_path / "out" / "labels-shp" / f"{layer}.shp"))
        assert shp.GetLayer(0).GetFeatureCount() == len(boxes)
        assert shp.GetLayer(0).GetSpatialRef().GetAuthorityCode(None) == "32633"
    mixed = subprocess.run([CLI, "label", str(tmp_path / "utm.tif"), "--models", str(MODELS), "-p", "red", "--format",
                            "gpkg,coco", "--out", str(tmp_path / "x")], capture_output=True, text=True)
    assert mixed.returncode != 0 and "cannot be mixed" in mixed.stderr, mixed.stderr
    assert not (tmp_path / "x").exists()
    geographic = tmp_path / "wgs84.tif"
    gdal.Warp(str(geographic), str(tmp_path / "utm.tif"), dstSRS="EPSG:4326")
    no_gsd = subprocess.run([CLI, "label", str(geographic), "--models", str(MODELS), "-p", "red", "--format", "gpkg",
                             "--gsd", "1", "--out", str(tmp_path / "y")], capture_output=True, text=True)
    assert no_gsd.returncode != 0 and "projected CRS" in no_gsd.stderr, no_gsd.stderr


def test_a_killed_map_run_resumes_per_tile_and_ends_as_one_run(tmp_path):
    import signal
    import time
    write_raster(tmp_path / "utm.tif", objects={0: RED, 2: BLUE})
    label([tmp_path / "utm.tif"], tmp_path / "fresh", "--format", "gpkg", tile="300", overlap="40")
    args = [CLI, "label", str(tmp_path / "utm.tif"), "--models", str(MODELS), "-p", "red", "-p", "blue", "--tile", "300",
            "--overlap", "40", "--format", "gpkg", "--out", str(tmp_path / "out")]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    records = tmp_path / "out" / "map-tiles"
    for _ in range(200):  # until some tiles are recorded, then SIGKILL
        if records.exists() and len(list(records.glob("*/tile-*.json"))) >= 2:
            break
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    done_before = {f.name: f.stat().st_mtime_ns for f in records.glob("*/tile-*.json")}
    damaged = sorted(records.glob("*/tile-*.json"))[0]
    damaged.write_text("{not json")
    label([tmp_path / "utm.tif"], tmp_path / "out", "--format", "gpkg", tile="300", overlap="40")
    after = {f.name: f.stat().st_mtime_ns for f in records.glob("*/tile-*.json")}
    kept = [n for n, t in done_before.items() if n != damaged.name and after.get(n) == t]
    assert len(kept) == len(done_before) - 1, "finished tiles were not done again; the damaged one was"

    def rows(path, layer):
        _, _, feats = features(path, layer)
        return sorted((f.GetField("score"), f.GetGeometryRef().ExportToWkt()) for f in feats)
    for layer in ("red", "blue"):
        assert rows(tmp_path / "out" / "labels.gpkg", layer) == rows(tmp_path / "fresh" / "labels.gpkg", layer)
    # Other prompts are another run: its records are not taken.
    label([tmp_path / "utm.tif"], tmp_path / "out", "--format", "gpkg", "--threshold", "0.9", tile="300", overlap="40")
    assert len(list(records.iterdir())) == 2, "one record folder per run's settings"


def test_alpha_bands_world_files_percentile_scaling_and_holes(tmp_path):
    # An 8-bit RGBA GeoTIFF: a red ring (a hole in the middle) and a red square under alpha 0.
    w, h = 600, 400
    ds = create_utm(tmp_path / "rgba.tif", w, h, 4, gdal.GDT_Byte, ("ALPHA=YES",))
    rgb = np.zeros((3, h, w), np.uint8)
    rgb[0, 40:160, 40:200] = 255
    rgb[0, 80:120, 90:150] = 0            # the hole
    rgb[0, 250:350, 350:500] = 255        # hidden by alpha
    alpha = np.full((h, w), 255, np.uint8)
    alpha[230:370, 330:520] = 0
    for b in range(3):
        ds.GetRasterBand(b + 1).WriteArray(rgb[b])
    ds.GetRasterBand(4).SetColorInterpretation(gdal.GCI_AlphaBand)
    ds.GetRasterBand(4).WriteArray(alpha)
    ds = None
    label([tmp_path / "rgba.tif"], tmp_path / "out", "--format", "gpkg", tile="600", overlap="100")
    _, _, feats = features(tmp_path / "out" / "labels.gpkg", "red")
    assert len(feats) == 1, "nothing under alpha 0"
    geom = feats[0].GetGeometryRef()
    assert geom.IsValid()
    polygon = geom.GetGeometryRef(0)
    assert polygon.GetGeometryCount() == 2, "the ring's hole is kept"
    assert abs(geom.GetArea() - (160 * 120 - 60 * 40) * PIXEL * PIXEL) < 0.08 * 160 * 120 * PIXEL * PIXEL

    # A PNG with a world file (and no CRS): placed by the world file, in its pixel frame.
    png = tmp_path / "scene.png"
    gdal.Translate(str(png), str(tmp_path / "rgba.tif"), format="PNG", bandList=[1, 2, 3])
    (tmp_path / "scene.wld").unlink(missing_ok=True)
    (tmp_path / "scene.pgw").write_text(f"{PIXEL}\n0\n0\n{-PIXEL}\n{ORIGIN[0] + PIXEL / 2}\n{ORIGIN[1] - PIXEL / 2}\n")
    for aux in tmp_path.glob("scene.png.aux.xml"):
        aux.unlink()
    label([png], tmp_path / "png", "--format", "gpkg", tile="600", overlap="100")
    _, _, feats = features(tmp_path / "png" / "labels.gpkg", "red")
    env = min((f.GetGeometryRef().GetEnvelope() for f in feats), key=lambda e: e[0])
    assert abs(env[0] - (ORIGIN[0] + 40 * PIXEL)) < 1.5 and abs(env[3] - (ORIGIN[1] - 40 * PIXEL)) < 1.5

    # 16-bit values far above 255, stretched by percentiles computed once for the dataset.
    write_raster(tmp_path / "bright.tif", value=60000, objects={0: RED})
    label([tmp_path / "bright.tif"], tmp_path / "pct", "--format", "gpkg", "--scale", "percentile:2,98")
    _, _, feats = features(tmp_path / "pct" / "labels.gpkg", "red")
    assert len(feats) == len(RED)


def test_band_selection_and_float_bands(tmp_path):
    # Four float bands; the red objects are in band 4, so --bands 4,2,3 sees them as red.
    w, h = 1200, 800
    ds = create_utm(tmp_path / "float.tif", w, h, 4, gdal.GDT_Float32)
    bands = np.zeros((4, h, w), np.float32)
    for x0, y0, x1, y1 in RED:
        bands[3, y0:y1, x0:x1] = 0.8  # reflectance-like values, stretched min-max to 0..255
    for b in range(4):
        ds.GetRasterBand(b + 1).WriteArray(bands[b])
    ds = None
    label([tmp_path / "float.tif"], tmp_path / "out", "--format", "gpkg", "--bands", "4,2,3")
    _, _, feats = features(tmp_path / "out" / "labels.gpkg", "red")
    assert len(feats) == len(RED)
    label([tmp_path / "float.tif"], tmp_path / "default", "--format", "gpkg")
    _, _, feats = features(tmp_path / "default" / "labels.gpkg", "red")
    assert len(feats) == 0, "by default bands 1, 2, 3: no red there"
    bad = subprocess.run([CLI, "label", str(tmp_path / "float.tif"), "--models", str(MODELS), "-p", "red", "--format", "gpkg",
                          "--bands", "5,2,3", "--out", str(tmp_path / "x")], capture_output=True, text=True)
    assert bad.returncode != 0 and "band 5 does not exist" in bad.stderr, bad.stderr
    assert not (tmp_path / "x").exists(), "a run refused at once leaves no folder"
    (tmp_path / "text.tif").write_text("not a raster")
    for path, words in ((tmp_path / "missing.tif", "no such file"), (tmp_path / "text.tif", "cannot open it as a raster")):
        r = subprocess.run([CLI, "label", str(path), "--models", str(MODELS), "-p", "red", "--format", "gpkg",
                            "--out", str(tmp_path / "y")], capture_output=True, text=True)
        assert r.returncode != 0 and words in r.stderr, r.stderr
        assert not (tmp_path / "y").exists()
