"""The QGIS plugin (integrations/qgis/sam3) run headlessly by QGIS's own qgis_process, as a batch
or Slurm job would: installed into a fresh profile, enabled, then sam3:segmentraster on a
generated GeoTIFF, judged with GDAL's readers against `sam3 label --format gpkg` on the same raster."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from osgeo import ogr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "geo"))
from test_maps import BLUE, CLI, MODELS, RED, write_raster  # noqa: E402

PLUGIN = Path(__file__).resolve().parents[2] / "integrations" / "qgis" / "sam3"
# Debian's /usr/bin/qgis_process wrapper adds --noversioncheck, which QGIS 3.22 refuses.
QGIS_PROCESS = shutil.which("qgis_process.bin", path="/usr/lib/qgis:/usr/bin") or "qgis_process"


@pytest.fixture(scope="module")
def qgis_home(tmp_path_factory):
    """A fresh home with the plugin copied into QGIS's default profile and enabled."""
    home = tmp_path_factory.mktemp("qgis-home")
    plugins = home / ".local/share/QGIS/QGIS3/profiles/default/python/plugins"
    shutil.copytree(PLUGIN, plugins / "sam3", ignore=shutil.ignore_patterns("__pycache__"))
    r = qgis(home, "plugins", "enable", "sam3")
    assert r.returncode == 0, r.stdout + r.stderr
    return home


def qgis(home, *args):
    env = dict(os.environ, HOME=str(home), QT_QPA_PLATFORM="offscreen", XDG_RUNTIME_DIR=str(home))
    return subprocess.run([QGIS_PROCESS, *args], capture_output=True, text=True, env=env, timeout=600)


def segment_raster(home, raster, out, models=MODELS):
    return qgis(home, "run", "sam3:segmentraster", "--", f"INPUT={raster}", "PROMPTS=red, blue", f"MODELS={models}",
                f"SAM3={CLI}", "TILE=600", "OVERLAP=100", f"OUTPUT={out}")


def geometries_by_prompt(path, prompt_of):
    ds = ogr.Open(str(path))
    out = {}
    for i in range(ds.GetLayerCount()):
        layer = ds.GetLayer(i)
        for f in layer:
            out.setdefault(prompt_of(layer, f), []).append((f.GetGeometryRef().Clone(), f))
    return ds, out


def test_segmentraster_gives_the_features_sam3_label_gives(qgis_home, tmp_path):
    raster = tmp_path / "utm.tif"
    write_raster(raster, objects={0: RED, 2: BLUE})
    r = segment_raster(qgis_home, raster, tmp_path / "qgis.gpkg")
    assert r.returncode == 0, r.stdout + r.stderr
    cli = subprocess.run([CLI, "label", str(raster), "--models", str(MODELS), "-p", "red", "-p", "blue", "--tile", "600",
                          "--overlap", "100", "--format", "gpkg", "--out", str(tmp_path / "cli")],
                         capture_output=True, text=True, timeout=600)
    assert cli.returncode == 0, cli.stderr

    qgis_ds, ours = geometries_by_prompt(tmp_path / "qgis.gpkg", lambda layer, f: f.GetField("prompt"))
    assert qgis_ds.GetLayerCount() == 1, "one output layer, a prompt attribute per feature"
    srs = qgis_ds.GetLayer(0).GetSpatialRef()
    assert srs is not None and srs.GetAuthorityCode(None) == "32633", "features in the raster's CRS"
    cli_ds, theirs = geometries_by_prompt(tmp_path / "cli" / "labels.gpkg", lambda layer, f: layer.GetName())
    assert sorted(ours) == sorted(theirs) == ["blue", "red"]
    for prompt in ours:
        assert len(ours[prompt]) == len(theirs[prompt]), prompt
        for geom, feature in ours[prompt]:
            same = [f for g, f in theirs[prompt] if g.SymDifference(geom).GetArea() < 1e-6 * geom.GetArea()]
            assert same, f"a {prompt} feature from QGIS is not one of sam3 label's"
            assert feature.GetField("score") == pytest.approx(same[0].GetField("score"), abs=1e-6)
            assert feature.GetField("area_m2") == pytest.approx(same[0].GetField("area_m2"), rel=1e-9)
            assert feature.GetField("source") == "utm.tif"


def test_errors_say_what_is_wrong_in_qgis_own_log(qgis_home, tmp_path):
    raster = tmp_path / "utm.tif"
    write_raster(raster, objects={0: RED})
    missing_program = qgis(qgis_home, "run", "sam3:segmentraster", "--", f"INPUT={raster}", "PROMPTS=red",
                           f"MODELS={MODELS}", f"SAM3={tmp_path / 'no-sam3'}", f"OUTPUT={tmp_path / 'a.gpkg'}")
    assert missing_program.returncode != 0
    assert "sam3 program" in missing_program.stdout + missing_program.stderr
    missing_model = segment_raster(qgis_home, raster, tmp_path / "b.gpkg", models=tmp_path / "no-model")
    assert missing_model.returncode != 0
    assert "no-model" in missing_model.stdout + missing_model.stderr
    not_a_raster = tmp_path / "notes.tif"
    not_a_raster.write_text("not a raster")
    bad_raster = segment_raster(qgis_home, not_a_raster, tmp_path / "c.gpkg")
    assert bad_raster.returncode != 0
