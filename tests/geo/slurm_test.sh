#!/usr/bin/env bash
# A one-node Slurm cluster (Debian slurm-wlm and munge, no cgroups, loopback only) started
# here, an `sbatch --array` over the shards of one generated raster, then `sam3 label merge`;
# the merged GeoPackage must equal a single-process run. Every daemon is stopped on exit.
#   tests/geo/slurm_test.sh SAM3_CLI MODEL_DIR [PYTHON]   (PYTHON: one with numpy and osgeo)
set -euo pipefail
cli=$(readlink -f "$1")
models=$(readlink -f "$2")
py=${3:-/usr/bin/python3}
for tool in slurmctld slurmd sbatch sinfo munged "$py"; do
  command -v "$tool" >/dev/null || { echo "slurm test: skipped, $tool is needed (apt-get install slurm-wlm munge)" >&2; exit 77; }
done
# The daemons run as this user; Slurm's own user switching needs root.
[ "$(id -u)" = 0 ] || { echo "slurm test: skipped, a one-node cluster needs root here" >&2; exit 77; }
work=$(mktemp -d /tmp/sam3-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -9 "$p" 2>/dev/null || true; done
  [ -n "${SAM3_KEEP_SLURM_DIR:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
mkdir -p "$work/state" "$work/spool" "$work/munge"
chmod 700 "$work/munge"

# munge: a fresh key and a private socket.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1 count=1024 status=none
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" \
  --foreground 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -S "$work/munge/socket" ] && break; sleep 0.1; done

ctl_port=$(free_port)
node_port=$(free_port)
cat > "$work/slurm.conf" <<CONF
ClusterName=sam3test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$node_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -f "$SLURM_CONF" 2>"$work/slurmctld.stderr" &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" 2>"$work/slurmd.stderr" &
pids+=($!)
for _ in $(seq 300); do sinfo -h -o %t 2>/dev/null | grep -qx idle && break; sleep 0.2; done
sinfo -h -o %t | grep -qx idle || { echo "slurm test: the node never came up" >&2; tail -20 "$work/slurmctld.log" "$work/slurmd.log" >&2; exit 1; }

# A UTM raster with objects, labeled as three array tasks, then merged.
"$py" - "$work/map.tif" <<'PY'
import sys
import numpy as np
from osgeo import gdal, osr
ds = gdal.GetDriverByName("GTiff").Create(sys.argv[1], 1200, 800, 3, gdal.GDT_UInt16, ["TILED=YES"])
ds.SetGeoTransform([500000, 0.5, 0, 4100000, 0, -0.5])
srs = osr.SpatialReference(); srs.ImportFromEPSG(32633); ds.SetProjection(srs.ExportToWkt())
bands = np.zeros((3, 800, 1200), np.uint16)
bands[0, 40:160, 60:200] = 4000
bands[0, 460:560, 820:980] = 4000
bands[2, 60:200, 340:520] = 4000
for b in range(3):
    ds.GetRasterBand(b + 1).WriteArray(bands[b])
PY
cat > "$work/job.sh" <<JOB
#!/bin/bash
#SBATCH --array=1-3
#SBATCH --output=$work/task-%a.log
"$cli" label "$work/map.tif" --models "$models" -p red -p blue --format gpkg --tile 400 --overlap 60 \\
  --shard \${SLURM_ARRAY_TASK_ID}/\${SLURM_ARRAY_TASK_COUNT} --out "$work/shard-\${SLURM_ARRAY_TASK_ID}"
JOB
sbatch --wait --quiet "$work/job.sh" || { cat "$work"/task-*.log >&2; exit 1; }
"$cli" label merge "$work"/shard-1 "$work"/shard-2 "$work"/shard-3 --out "$work/merged" >/dev/null
"$cli" label "$work/map.tif" --models "$models" -p red -p blue --format gpkg --tile 400 --overlap 60 --out "$work/single" >/dev/null
"$py" - "$work/merged/labels.gpkg" "$work/single/labels.gpkg" <<'PY'
import sys
from osgeo import ogr
def rows(path, layer):
    ds = ogr.Open(path)  # kept alive while its layer is read
    return sorted((f.GetField("score"), f.GetField("tile"), f.GetGeometryRef().ExportToWkt())
                  for f in ds.GetLayerByName(layer))
for layer in ("red", "blue"):
    a, b = rows(sys.argv[1], layer), rows(sys.argv[2], layer)
    assert a and a == b, f"{layer}: the Slurm shards merged differ from one run ({len(a)} vs {len(b)} features)"
print("slurm test: 3 array tasks merged equal one run")
PY
