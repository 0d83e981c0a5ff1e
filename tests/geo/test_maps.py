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
# A VRT's <GeoTransform> at ORIGIN and PIXEL: map outputs need georeferencing.
VRT_GEOTRANSFORM = f"<GeoTransform>{ORIGIN[0]}, {PIXEL}, 0, {ORIGIN[1]}, 0, {-PIXEL}</GeoTransform>"

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
    deadline = time.monotonic() + 120  # bounded, and long enough for a loaded 2-core machine
    while time.monotonic() < deadline and p.poll() is None:  # until some tiles are recorded, then SIGKILL
        if records.exists() and len(list(records.glob("*/tile-*.json"))) >= 2:
            break
        time.sleep(0.01)
    assert p.poll() is None, "the run ended before two tiles were recorded: nothing to kill mid-way"
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


def test_sigterm_ends_the_tile_in_flight_and_records_nothing_for_it(tmp_path):
    import signal
    import time
    # The usls-slow model's encoder runs about a minute per tile: SIGTERM must end the tile's
    # run itself (ONNX Runtime's terminate), not wait for it.
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    out = tmp_path / "out"
    args = [CLI, "label", str(tmp_path / "utm.tif"), "--models", str(MODELS.parent / "usls-slow"), "-p", "red",
            "--format", "gpkg", "--out", str(out)]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(1200):  # until the run has begun (the folder is locked once the model is loaded)
            if p.poll() is not None or (out / ".sam3-lock").exists():
                break
            time.sleep(0.1)
        assert (out / ".sam3-lock").exists() and p.poll() is None, f"the run never began: {p.communicate()}"
        time.sleep(1.5)  # inside the first tile's encode
        p.send_signal(signal.SIGTERM)
        start = time.monotonic()
        stdout, _ = p.communicate(timeout=120)
        assert time.monotonic() - start < 10, "SIGTERM waited for the tile's encode to end"
        assert p.returncode == 130 and "interrupted" in stdout, stdout
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert not list((out / "map-tiles").glob("*/tile-*.json")), "a record of a tile never finished"
    assert not list(out.glob("labels*")), "no outputs from an interrupted run"


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


# ---- Exemplar boxes on maps: moved into each tile's window; every setting keys the records ----

def box_prompts(path, boxes):
    """A --box-prompt file: one box-only category ("visual": the test model marks the box) per name."""
    path.write_text(json.dumps([{"name": name, "text": "visual", "boxes": [list(b)]} for name, b in boxes.items()]))
    return path


def label_boxes(raster, out, prompts, *extra, tile="600", overlap="100"):
    r = subprocess.run([CLI, "label", str(raster), "--models", str(MODELS), "--box-prompt", str(prompts), "--format", "gpkg",
                        "--tile", tile, "--overlap", overlap, "--out", str(out), *extra],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r


def near(env, box, tolerance=6.0):
    m = map_box(*box)
    return all(abs(a - b) < tolerance for a, b in zip((env[0], env[2], env[1], env[3]), m))


def test_exemplar_boxes_apply_in_the_tile_where_they_are_drawn(tmp_path):
    # 2400 x 800 tiled 600/100: columns start at 0, 500, 1000, 1500, 1800; rows at 0 and 200.
    # "far" lies only in tile 2 (x 1000..1600, row 0), past the first 1008 pixels; "near" only in tile 0.
    write_raster(tmp_path / "wide.tif", width=2400, height=800)
    far, close = (1320, 40, 1480, 160), (340, 40, 460, 160)
    prompts = box_prompts(tmp_path / "boxes.json", {"far": far, "near": close})
    label_boxes(tmp_path / "wide.tif", tmp_path / "out", prompts)
    for layer, box, tile in (("far", far, 2), ("near", close, 0)):
        _, _, feats = features(tmp_path / "out" / "labels.gpkg", layer)
        envs = [f.GetGeometryRef().GetEnvelope() for f in feats]
        assert len(feats) == 1, f"{layer}: one object where the box is drawn, not one per tile: {envs}"
        assert near(envs[0], box), f"{layer} at {envs[0]}, drawn at {map_box(*box)}"
        assert feats[0].GetField("tile") == tile
    # At --gsd 1 (half the pixels) the boxes stay in the file's pixels and land in the same place.
    label_boxes(tmp_path / "wide.tif", tmp_path / "gsd", prompts, "--gsd", "1")
    for layer, box in (("far", far), ("near", close)):
        _, _, feats = features(tmp_path / "gsd" / "labels.gpkg", layer)
        assert len(feats) == 1 and near(feats[0].GetGeometryRef().GetEnvelope(), box, 8), layer
    # A box outside the raster is refused, naming it, before any folder is made.
    outside = box_prompts(tmp_path / "outside.json", {"far": (2300, 40, 2500, 160)})
    r = subprocess.run([CLI, "label", str(tmp_path / "wide.tif"), "--models", str(MODELS), "--box-prompt", str(outside),
                        "--format", "gpkg", "--out", str(tmp_path / "x")], capture_output=True, text=True)
    assert r.returncode != 0 and "box 1 of 'far'" in r.stderr and "2400" in r.stderr, r.stderr
    assert not (tmp_path / "x").exists()


def test_a_rerun_with_another_box_or_scale_redoes_the_tiles(tmp_path):
    write_raster(tmp_path / "wide.tif", width=2400, height=800)
    first, second = (340, 40, 460, 160), (1320, 40, 1480, 160)
    records = tmp_path / "out" / "map-tiles"
    label_boxes(tmp_path / "wide.tif", tmp_path / "out", box_prompts(tmp_path / "a.json", {"thing": first}))
    label_boxes(tmp_path / "wide.tif", tmp_path / "out", box_prompts(tmp_path / "b.json", {"thing": second}))
    assert len(list(records.iterdir())) == 2, "another box is another run: its tiles are not reused"
    _, _, feats = features(tmp_path / "out" / "labels.gpkg", "thing")
    assert len(feats) == 1 and near(feats[0].GetGeometryRef().GetEnvelope(), second), "the new box's object"
    label_boxes(tmp_path / "wide.tif", tmp_path / "out", tmp_path / "b.json", "--scale", "0,5000")
    assert len(list(records.iterdir())) == 3, "another --scale is another run"


# ---- Impossible numbers, degenerate georeferencing, huge declared sizes ----

def run_cli(*args, timeout=120, limit_memory=True, env=None):
    """The CLI with its address space capped (6 GB): a run that would grow with a declared size
    fails fast instead of taking the machine."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          preexec_fn=cap if limit_memory else None, env=env)


@pytest.mark.parametrize("option,value", [
    ("--gsd", "nan"), ("--gsd", "inf"), ("--gsd", "-1"), ("--gsd", "0"), ("--threshold", "nan"),
    ("--mask-threshold", "inf"), ("--nms", "nan"), ("--simplify", "nan"), ("--overlap", "nan"), ("--tile", "nan"),
    ("--tile", "1e300"), ("--tile", "99999"), ("--bands", "1e300"), ("--bands", "nan"), ("--scale", "nan,4000"),
    ("--scale", "0,inf"), ("--max-pixels", "nan"), ("--min-area", "1e300")])
def test_non_finite_and_impossible_numbers_are_refused_naming_them(tmp_path, option, value):
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    r = run_cli("label", tmp_path / "utm.tif", "--models", MODELS, "-p", "red", "--format", "gpkg", option, value,
                "--out", tmp_path / "out")
    assert r.returncode in (2, 3), f"{option} {value}: exit {r.returncode}: {r.stderr}"
    shown = next(v for v in value.split(",") if v in ("nan", "inf")) if "," in value else value
    assert option in r.stderr and f"'{shown}'" in r.stderr or f"= {shown}" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists(), "refused at once: no folder"


def test_gsd_far_out_of_range_and_huge_declared_rasters_are_refused_at_once_naming_the_size(tmp_path):
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    for gsd, words in (("1e-300", "6e+302 x 4e+302 pixels"), ("1e300", "less than one pixel"),
                       ("0.00001", "60000000 x 40000000 pixels")):
        r = run_cli("label", tmp_path / "utm.tif", "--models", MODELS, "-p", "red", "--format", "gpkg", "--gsd", gsd,
                    "--out", tmp_path / "out")
        assert r.returncode == 3 and words in r.stderr, f"--gsd {gsd}: {r.stderr}"
        assert not (tmp_path / "out").exists()
    # A 1 KB VRT declaring 2147483647 x 2147483647 pixels: refused at once, in bounded memory.
    vrt = tmp_path / "huge.vrt"
    vrt.write_text('<VRTDataset rasterXSize="2147483647" rasterYSize="2147483647">' + VRT_GEOTRANSFORM +
                   '<VRTRasterBand dataType="Byte" band="1"/></VRTDataset>')
    r = run_cli("label", vrt, "--models", MODELS, "-p", "red", "--format", "gpkg", "--out", tmp_path / "out")
    assert r.returncode == 3 and "2147483647 x 2147483647 pixels" in r.stderr and "tiles" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()
    # A class raster too large to index is refused before the run, not after it.
    vrt.write_text('<VRTDataset rasterXSize="20000000" rasterYSize="20000000">' + VRT_GEOTRANSFORM +
                   '<VRTRasterBand dataType="Byte" band="1"/></VRTDataset>')
    r = run_cli("label", vrt, "--models", MODELS, "-p", "red", "--format", "gpkg", "--tile", "1000", "--raster-out",
                "classes.tif", "--out", tmp_path / "out")
    assert r.returncode == 3 and "--raster-out" in r.stderr and "20000000 x 20000000" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_a_degenerate_geotransform_is_refused(tmp_path):
    for name, transform in (("zero.tif", [ORIGIN[0], 0, 0, ORIGIN[1], 0, -PIXEL]),
                            ("flat.tif", [ORIGIN[0], PIXEL, PIXEL, ORIGIN[1], PIXEL, PIXEL])):
        write_raster(tmp_path / name, objects={0: RED})
        ds = gdal.Open(str(tmp_path / name), gdal.GA_Update)
        ds.SetGeoTransform(transform)
        ds = None
        r = run_cli("label", tmp_path / name, "--models", MODELS, "-p", "red", "--format", "gpkg", "--out", tmp_path / "out")
        assert r.returncode == 3 and "degenerate" in r.stderr, f"{name}: {r.stderr}"
        assert not (tmp_path / "out").exists()


def test_sigterm_ends_a_huge_lazy_run_at_once_and_a_second_run_on_the_folder_is_refused(tmp_path):
    import resource
    import signal
    import time
    # 20,000,000 x 20,000,000 pixels of nodata: 494 million tiles of 1000, computed one by one
    # (listing them would take 8 GB; the run is capped at 6).
    vrt = tmp_path / "sparse.vrt"
    vrt.write_text('<VRTDataset rasterXSize="20000000" rasterYSize="20000000">' + VRT_GEOTRANSFORM +
                   '<VRTRasterBand dataType="Byte" band="1"><NoDataValue>0</NoDataValue></VRTRasterBand></VRTDataset>')
    out = tmp_path / "out"
    args = [CLI, "label", str(vrt), "--models", str(MODELS), "-p", "red", "--format", "gpkg", "--tile", "1000",
            "--overlap", "100", "--out", str(out)]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30)))
    try:
        for _ in range(600):  # until tiles are being recorded (bounded: 60 s)
            if p.poll() is not None or len(list((out / "map-tiles").glob("*/tile-*.json"))) >= 3:
                break
            time.sleep(0.1)
        assert p.poll() is None, f"the run ended by itself: {p.communicate()}"
        second = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert second.returncode == 6 and str(out) in second.stderr, "one run per folder: " + second.stderr
        p.send_signal(signal.SIGTERM)
        start = time.monotonic()
        stdout, _ = p.communicate(timeout=30)
        assert time.monotonic() - start < 10, "SIGTERM honoured within a tile (about 2.6 s measured, on a busy machine)"
        assert p.returncode == 130 and "interrupted" in stdout, stdout
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert not list(out.glob("labels*")), "no outputs from an interrupted run"


# ---- Network names, archives and odd output folders ----

def test_network_rasters_are_refused_unless_allowed_and_local_archives_are_read(tmp_path):
    import socket
    import zipfile
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    url = f"http://127.0.0.1:{server.getsockname()[1]}/scene.tif"
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    source_vrt = tmp_path / "remote.vrt"
    gdal.BuildVRT(str(source_vrt), [str(tmp_path / "utm.tif")])
    text = source_vrt.read_text()
    assert '<SourceFilename relativeToVRT="1">utm.tif</SourceFilename>' in text
    source_vrt.write_text(text.replace('<SourceFilename relativeToVRT="1">utm.tif</SourceFilename>',
                                       f'<SourceFilename relativeToVRT="0">/vsicurl/{url}</SourceFilename>'))
    connections = 0

    def count_connections():
        nonlocal connections
        while True:
            try:
                conn, _ = server.accept()
            except BlockingIOError:
                return
            connections += 1
            conn.close()
    try:
        for name in ("/vsicurl/" + url, url, "/vsis3/bucket/scene.tif", "/vsizip//vsicurl/" + url + ".zip/a.tif",
                     str(source_vrt)):
            r = run_cli("label", name, "--models", MODELS, "-p", "red", "--format", "gpkg", "--out", tmp_path / "out")
            assert r.returncode == 3 and "--allow-network-rasters" in r.stderr, f"{name}: {r.stderr}"
            assert not (tmp_path / "out").exists()
        count_connections()
        assert connections == 0, "nothing reached the network"
        # The listener never answers: GDAL gives up after its timeout.
        r = run_cli("label", "/vsicurl/" + url, "--models", MODELS, "-p", "red", "--format", "gpkg", "--allow-network-rasters",
                    "--out", tmp_path / "out", env={**os.environ, "GDAL_HTTP_TIMEOUT": "2", "GDAL_HTTP_MAX_RETRY": "0"})
        count_connections()
        assert connections >= 1 and "--allow-network-rasters" not in r.stderr, "asked for, the network is used"
    finally:
        server.close()
    with zipfile.ZipFile(tmp_path / "scene.zip", "w") as z:
        z.write(tmp_path / "utm.tif", "utm.tif")
    label([f"/vsizip/{tmp_path / 'scene.zip'}/utm.tif"], tmp_path / "zipped", "--format", "gpkg")
    _, _, feats = features(tmp_path / "zipped" / "labels.gpkg", "red")
    assert len(feats) == len(RED)


def test_odd_output_folder_names_and_a_read_only_folder(tmp_path):
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    for given, folder in (("with space ü 地图", "with space ü 地图"), ("-dash", "-dash"), ("trailing/", "trailing")):
        r = subprocess.run([CLI, "label", str(tmp_path / "utm.tif"), "--models", str(MODELS), "-p", "red", "--format", "gpkg",
                            "--tile", "600", "--overlap", "100", f"--out={given}"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=600)
        assert r.returncode == 0, f"--out {given!r}: {r.stderr}"
        _, _, feats = features(tmp_path / folder / "labels.gpkg", "red")
        assert len(feats) == len(RED), given
    if os.geteuid() == 0:
        return  # root writes through any mode bits; the read-only case needs another user
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        r = subprocess.run([CLI, "label", str(tmp_path / "utm.tif"), "--models", str(MODELS), "-p", "red", "--format",
                            "gpkg", "--out", str(locked)], capture_output=True, text=True, timeout=600)
        assert r.returncode == 6 and str(locked) in r.stderr, r.stderr
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o755)


def test_everything_on_the_interactive_model_gives_one_object_layer(tmp_path):
    # The "segment everything" scene of the C++ tests (60-pixel squares of three colours), as a
    # GeoTIFF of two tiles; each square is found once, in map units, as category "object".
    squares = {0: [(60, 60, 120, 120)], 1: [(300, 80, 360, 140)], 2: [(700, 240, 760, 300)]}
    write_raster(tmp_path / "utm.tif", width=1000, height=400, objects=squares)
    r = subprocess.run([CLI, "label", str(tmp_path / "utm.tif"), "--models", str(MODELS.parent / "tracker"), "--everything",
                        "--points-per-side", "16", "--min-area", "200", "--tile", "512", "--overlap", "64",
                        "--format", "gpkg", "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    ds, lyr, feats = features(tmp_path / "out" / "labels.gpkg", "object")
    boxes = [b for v in squares.values() for b in v]
    assert len(feats) == len(boxes), [f.GetGeometryRef().GetEnvelope() for f in feats]
    for f in feats:
        env = f.GetGeometryRef().GetEnvelope()
        near = [b for b in boxes if abs(map_box(*b)[0] - env[0]) < 3 and abs(map_box(*b)[3] - env[3]) < 3]
        assert near, f"an object at {env} where no square is"
        assert f.GetField("class") == "object"


def test_python_label_map_writes_what_the_cli_writes(tmp_path):
    """sam3cpp.label_map is MapLabeler as the CLI runs it: the same features, and a progress
    callback that raises stops the run after the tile in flight and raises again."""
    sam3cpp = pytest.importorskip("sam3cpp")  # built with the project where pybind11 is installed

    write_raster(tmp_path / "utm.tif", objects={0: RED, 2: BLUE})
    label([tmp_path / "utm.tif"], tmp_path / "cli", "--format", "gpkg,geojson", "--raster-out", "classes.tif")
    model = sam3cpp.Model(MODELS)
    seen = []
    summary = sam3cpp.label_map([tmp_path / "utm.tif"], ["red", "blue"], tmp_path / "py", model=model,
                                formats="gpkg,geojson", tile=600, overlap=100, raster_out="classes.tif",
                                progress=seen.append)
    assert summary["features"] == {"red": 2, "blue": 1} and not summary["stopped"], summary
    assert seen and seen[-1]["tiles_done"] == seen[-1]["tiles_total"] == summary["tiles"]

    def rows(path, layer):
        _, _, found = features(path, layer)
        return sorted((f.GetField("class"), round(f.GetField("score"), 4), f.GetField("area"),
                       f.GetGeometryRef().ExportToWkt()) for f in found)
    for layer in ("red", "blue"):
        assert rows(tmp_path / "py" / "labels.gpkg", layer) == rows(tmp_path / "cli" / "labels.gpkg", layer)
    cli, py = gdal.Open(str(tmp_path / "cli" / "classes.tif")), gdal.Open(str(tmp_path / "py" / "classes.tif"))
    assert (cli.ReadAsArray() == py.ReadAsArray()).all()

    class Stop(Exception):
        pass

    def stop_after_first(p):
        raise Stop()
    with pytest.raises(Stop):
        sam3cpp.label_map([tmp_path / "utm.tif"], ["red"], tmp_path / "stopped", model=model, tile=600, overlap=100,
                          progress=stop_after_first)
    assert not (tmp_path / "stopped" / "labels.gpkg").exists()
    with pytest.raises(sam3cpp.InvalidArgumentError, match="image output"):
        sam3cpp.label_map([tmp_path / "utm.tif"], ["red"], tmp_path / "bad", model=model, formats="coco")
    assert not (tmp_path / "bad").exists()
    # The library's bounds, not the CLI's alone: a 1-pixel tile (1.2 million tiles here) is refused
    # as `--tile 1` is, and so is a layer name the GeoPackage refuses.
    with pytest.raises(sam3cpp.InvalidArgumentError, match="at least 64 pixels"):
        sam3cpp.label_map([tmp_path / "utm.tif"], ["red"], tmp_path / "bad", model=model, tile=1)
    with pytest.raises(sam3cpp.InvalidArgumentError, match="layer White"):
        sam3cpp.label_map([tmp_path / "utm.tif"], ["white", "White"], tmp_path / "bad", model=model)
    assert not (tmp_path / "bad").exists()
    # label() is the image labeler: a GeoTIFF asked for GeoJSON there would get pixel coordinates
    # and no CRS, so it is refused, naming label_map (`sam3 label` sends it to the map path).
    with pytest.raises(sam3cpp.InvalidArgumentError, match="georeferenced raster.*label_map"):
        sam3cpp.label([tmp_path / "utm.tif"], ["red"], tmp_path / "bad", model=model, formats="geojson")
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize("fmt,prompts,layer", [
    ("gpkg", ("white", "White"), "White"), ("gpkg", ("red", "-red"), "-red"), ("shp", ("white", "White"), "White")])
def test_layer_names_a_format_refuses_fail_before_any_tile_is_labelled(tmp_path, fmt, prompts, layer):
    # GeoPackage layer names ignore case and may not start with "-"; a folder of shapefiles holds
    # one file per layer. Found by writing the outputs empty first, not after every tile.
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    args = [f"--prompt={p}" for p in prompts]
    r = run_cli("label", tmp_path / "utm.tif", "--models", MODELS, *args, "--format", fmt, "--out", tmp_path / "out")
    assert r.returncode == 3, f"exit {r.returncode}: {r.stderr}"
    assert f"layer {layer}" in r.stderr and "before labelling" in r.stderr, r.stderr
    assert "/vsimem/" not in r.stderr, "names the output, not the scratch copy"
    assert not (tmp_path / "out").exists(), "refused at once: no folder"


def test_the_rule_across_prompts_is_the_clis(tmp_path):
    # EfficientSAM3 drops an instance repeating a better one of another prompt of the image (the
    # library's ImageSegmenter::segment_all, which every front calls): on the generated model
    # "red car" finds the squares "red" finds (its text encoder reads the first word), so the map
    # keeps them once, as `sam3 segment` on the same pixels does.
    ds = create_utm(tmp_path / "small.tif", 400, 240, 3, gdal.GDT_Byte, ())
    pixels = np.zeros((3, 240, 400), np.uint8)
    for x0, y0, x1, y1 in [(40, 30, 120, 100), (250, 140, 330, 210)]:
        pixels[0, y0:y1, x0:x1] = 255
    for b in range(3):
        ds.GetRasterBand(b + 1).WriteArray(pixels[b])
    ds = None
    models = MODELS.parent / "efficientsam3"
    segment = subprocess.run([CLI, "segment", "--models", str(models), "--image", str(tmp_path / "small.tif"), "--prompt", "red",
                              "--prompt", "red car", "--json"], capture_output=True, text=True, timeout=120)
    assert segment.returncode == 0, segment.stderr
    want = {p["text"]: p["instances"] for p in json.loads(segment.stdout)["images"][0]["prompts"]}
    assert len(want["red"]) == 2 and len(want["red car"]) == 0, {k: len(v) for k, v in want.items()}
    r = subprocess.run([CLI, "label", str(tmp_path / "small.tif"), "--models", str(models), "-p", "red", "-p", "red car",
                        "--tile", "600", "--format", "gpkg", "--out", str(tmp_path / "out")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    got = {"red": [], "red car": []}
    out = ogr.Open(str(tmp_path / "out" / "labels.gpkg"))
    for i in range(out.GetLayerCount()):
        for f in out.GetLayerByIndex(i):
            got[f.GetField("class")].append(f)
    assert {k: len(v) for k, v in got.items()} == {k: len(v) for k, v in want.items()}
    for f in got["red"]:  # each polygon (the mask's pixels) within two pixels of the CLI's box, with its score
        env = f.GetGeometryRef().GetEnvelope()  # minx, maxx, miny, maxy
        same = [w for w in want["red"] if abs(map_box(*w["box"])[0] - env[0]) <= 2 * PIXEL
                and abs(map_box(*w["box"])[3] - env[3]) <= 2 * PIXEL]
        assert same and abs(same[0]["score"] - f.GetField("score")) < 1e-4, (env, want["red"])


# ---- A new user's trial: absurd upsampling, an image with no georeferencing, a folder ----

def test_gsd_upsamples_at_most_16_times_and_refuses_more_at_once_naming_the_sizes_and_the_finest_gsd(tmp_path):
    # --gsd 0.0001 on a 0.75 m raster was taken: 7500 times a side, 1.4 billion tiles of
    # bilinear blur, and hundreds of MB of tile records before anyone noticed.
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    r = run_cli("label", tmp_path / "utm.tif", "--models", MODELS, "-p", "red", "--format", "gpkg", "--gsd", "0.0001",
                "--out", tmp_path / "out", timeout=60)
    assert r.returncode == 3, f"exit {r.returncode}: {r.stderr}"
    for words in ("6000000 x 4000000 pixels", "the raster has 0.5 m", "5000 times", "at most 16 times",
                  "--gsd 0.03125 or coarser"):
        assert words in r.stderr, f"{words!r} not in {r.stderr}"
    assert not (tmp_path / "out").exists(), "refused before any work: no folder, no tile records"
    # 16 times, the finest the message offers, runs: coarse imagery's small objects made bigger.
    ds = create_utm(tmp_path / "coarse.tif", 60, 40, 3, gdal.GDT_Byte, ())
    pixels = np.zeros((3, 40, 60), np.uint8)
    pixels[0, 5:15, 5:15] = 255
    for b in range(3):
        ds.GetRasterBand(b + 1).WriteArray(pixels[b])
    ds = None
    r = label([tmp_path / "coarse.tif"], tmp_path / "x16", "--format", "gpkg", "--gsd", "0.03125")
    _, _, feats = features(tmp_path / "x16" / "labels.gpkg", "red")
    assert len(feats) == 1, r.stdout
    env = feats[0].GetGeometryRef().GetEnvelope()
    assert abs(env[0] - map_box(5, 5, 15, 15)[0]) < 0.5 and abs(env[3] - map_box(5, 5, 15, 15)[3]) < 0.5


def test_a_raster_without_georeferencing_is_refused_for_map_formats_before_any_work(tmp_path):
    # A plain PNG asked for a GeoPackage was written in pixel rows as map coordinates, in the
    # GeoPackage's "Undefined geographic SRS", without a word.
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    png = tmp_path / "plain.png"
    gdal.Translate(str(png), str(tmp_path / "utm.tif"), format="PNG", outputType=gdal.GDT_Byte, scaleParams=[[0, 4000, 0, 255]])
    for aux in tmp_path.glob("plain.png.aux.xml"):  # GDAL keeps the GeoTIFF's georeferencing there
        aux.unlink()
    assert gdal.Open(str(png)).GetGeoTransform(can_return_null=True) is None
    for fmt in ("gpkg", "fgb,geojson", "shp"):
        r = run_cli("label", png, "--models", MODELS, "-p", "red", "--format", fmt, "--out", tmp_path / "out")
        assert r.returncode == 3, f"{fmt}: exit {r.returncode}: {r.stderr}"
        assert "plain.png has no georeferencing" in r.stderr and "world file" in r.stderr and "--format coco" in r.stderr, r.stderr
        assert not (tmp_path / "out").exists(), "refused at once: no folder"
    # What the message offers: pixel coordinates from the image path, said in the document.
    r = run_cli("label", png, "--models", MODELS, "-p", "red", "--format", "geojson", "--out", tmp_path / "pixels")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "pixels" / "geojson" / "plain.geojson").read_text())
    assert doc["properties"]["coordinates"].startswith("pixel"), doc["properties"]


def test_a_folder_of_rasters_is_labelled_as_its_files_and_a_folder_of_none_says_what_to_give(tmp_path):
    # A folder was handed to GDAL whole: "`tiles' not recognized as a supported file format".
    write_raster(tmp_path / "whole.tif", objects={0: RED, 2: BLUE})
    tiles = tmp_path / "tiles"
    (tiles / "east").mkdir(parents=True)
    gdal.Translate(str(tiles / "west.tif"), str(tmp_path / "whole.tif"), srcWin=[0, 0, 600, 800])
    gdal.Translate(str(tiles / "east" / "east.tif"), str(tmp_path / "whole.tif"), srcWin=[600, 0, 600, 800])
    (tiles / "notes.md").write_text("not a raster")
    r = label([tiles], tmp_path / "out", "--format", "gpkg")
    assert r.stdout.startswith("2 rasters"), r.stdout
    _, _, reds = features(tmp_path / "out" / "labels.gpkg", "red")
    assert sorted({f.GetField("source") for f in reds}) == ["east.tif", "west.tif"], "a red object in each half"
    # A list file is read as the image path reads it too.
    (tmp_path / "list.txt").write_text("tiles/west.tif\ntiles/east/east.tif\n")
    r = label([tmp_path / "list.txt"], tmp_path / "listed", "--format", "gpkg")
    assert r.stdout.startswith("2 rasters"), r.stdout
    # A folder without image files: GDAL reads no raster from it; the message says what to give.
    (tmp_path / "empty").mkdir()
    r = run_cli("label", tmp_path / "empty", "--models", MODELS, "-p", "red", "--format", "gpkg", "--out", tmp_path / "none")
    assert r.returncode != 0 and "is a folder" in r.stderr and "gdalbuildvrt" in r.stderr, r.stderr
    assert "not recognized" not in r.stderr, "not GDAL's raw message"
    assert not (tmp_path / "none").exists()


def test_a_raster_out_not_named_tif_and_a_truncated_raster_are_refused_saying_what_to_do(tmp_path):
    # --raster-out classes.png wrote a GeoTIFF under a PNG's name; a truncated GeoTIFF gave GDAL's
    # "IReadBlock failed" and nothing more.
    write_raster(tmp_path / "utm.tif", objects={0: RED})
    for name in ("classes.png", "classes"):
        r = run_cli("label", tmp_path / "utm.tif", "--models", MODELS, "-p", "red", "--format", "gpkg", "--raster-out", name,
                    "--out", tmp_path / "out")
        assert r.returncode == 3 and f"--raster-out {name}" in r.stderr and "classes.tif" in r.stderr, r.stderr
        assert not (tmp_path / "out").exists(), "refused at once: no folder"
    # 16-bit: the statistics for --scale fail first; 8-bit: the first tile's read.
    gdal.Translate(str(tmp_path / "byte.tif"), str(tmp_path / "utm.tif"), outputType=gdal.GDT_Byte, creationOptions=["TILED=YES"])
    for source, words in (("utm.tif", "band statistics"), ("byte.tif", "cannot read pixels")):
        truncated = tmp_path / f"truncated-{source}"
        truncated.write_bytes((tmp_path / source).read_bytes()[:20000])
        r = run_cli("label", truncated, "--models", MODELS, "-p", "red", "--format", "gpkg", "--out", tmp_path / "cut")
        assert r.returncode != 0 and words in r.stderr and f"gdalinfo -checksum {truncated}" in r.stderr, r.stderr
        assert not list((tmp_path / "cut").glob("labels*")), "no outputs from a run that failed"


def test_a_world_file_without_a_crs_is_an_undefined_cartesian_frame_never_mixed_with_a_crs(tmp_path):
    # A world file without a .prj gave a GeoPackage "Undefined geographic SRS" (a GIS reads its
    # metres as degrees), and beside a GeoTIFF in one run its features were written unconverted
    # into the GeoTIFF's CRS.
    (tmp_path / "rasters").mkdir()
    write_raster(tmp_path / "rasters" / "utm.tif", objects={0: RED})
    png = tmp_path / "rasters" / "scene.png"
    gdal.Translate(str(png), str(tmp_path / "rasters" / "utm.tif"), format="PNG", outputType=gdal.GDT_Byte,
                   scaleParams=[[0, 4000, 0, 255]])
    for aux in png.parent.glob("scene.png.aux.xml"):  # the GeoTIFF's CRS would be kept there
        aux.unlink()
    (png.parent / "scene.wld").unlink(missing_ok=True)
    (png.parent / "scene.pgw").write_text(f"{PIXEL}\n0\n0\n{-PIXEL}\n{ORIGIN[0] + PIXEL / 2}\n{ORIGIN[1] - PIXEL / 2}\n")
    label([png], tmp_path / "png", "--format", "gpkg")
    import sqlite3
    with sqlite3.connect(tmp_path / "png" / "labels.gpkg") as db:
        ids = {row[0] for row in db.execute("SELECT srs_id FROM gpkg_geometry_columns")}
    assert ids == {-1}, f"srs_id {ids}: -1 is GeoPackage's undefined Cartesian frame, 0 its undefined geographic one"
    r = run_cli("label", png.parent, "--models", MODELS, "-p", "red", "--format", "gpkg", "--out", tmp_path / "mixed")
    assert r.returncode == 3 and "utm.tif has a CRS and" in r.stderr and "scene.png has none" in r.stderr, r.stderr
    assert not (tmp_path / "mixed").exists(), "refused at once: no folder"
