#!/usr/bin/env bash
# The commit advisor's done-means on this machine (issue 35, docs/ADVISOR.md): `advise
# --quick` on loop ext4, xfs and btrfs (1 GiB images on /var/tmp, loop devices with direct
# I/O) and on a tmpfs, timed; loop ext4 REPEATS times (default 3) to see whether the
# recommendation at 16 writers stays a batching strategy; then `advise --device` on a bare
# loop device (FILESYSTEMS without "device" leaves it out). Prints one line per advice.
#
#   sudo scripts/advise-check.sh [REPEATS]      # FSYNCLAB=path/to/fsynclab to pick a build,
#                                               # FILESYSTEMS="btrfs" for some, PLAN=full for the default plan
set -euo pipefail
REPEATS=${1:-3}
BIN=${FSYNCLAB:-target/release/fsynclab}
WORK=$(mktemp -d /var/tmp/fsynclab-advise.XXXXXX)
DB=$WORK/advise.sqlite
loops=()
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || true; done
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

make_fs() { # fs -> sets MNT (in this shell, so cleanup sees the mount and the loop)
  local fs=$1 img=$WORK/$1.img loop
  MNT=$WORK/mnt-$fs
  mkdir -p "$MNT"
  if [ "$fs" = tmpfs ]; then
    mount -t tmpfs -o size=1G tmpfs "$MNT"
  else
    truncate -s 1G "$img"
    loop=$(losetup --direct-io=on -f --show "$img")
    loops+=("$loop")
    case $fs in
      ext4) mkfs.ext4 -q "$loop" ;;
      xfs) mkfs.xfs -q -f "$loop" ;;
      btrfs) mkfs.btrfs -q -f "$loop" > /dev/null ;;
    esac
    mount "$loop" "$MNT"
  fi
  mounts+=("$MNT")
}

summary() { # json file, seconds
  python3 - "$1" "$2" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
a = doc["advice"]
r = a["recommended"]
named = [r["strategy"]] if r["verdict"] == "one" else r.get("strategies", [])
sp = a["sync_parallelism"] or {}
own = a["sync_parallelism_own_files"] or {}
def method(name):
    for m in a["methods"]:
        if m["method"] == name:
            return m
    return {}
def ratio(m, key):
    r = m.get(key)
    if not r:
        return "-"
    lo, hi = r["ci95"] or (float("nan"), float("nan"))
    return f'{r["ratio"]:.2f}x[{lo:.2f},{hi:.2f}]'
def cps(s, w):
    for p in a["points"]:
        if p["strategy"] == s and p["writers"] == w:
            v = p["commits_per_sec"]
            return round(sorted(v)[len(v) // 2])
print(f'{a["fs_type"] or "device":6} {sys.argv[2]:>4}s  shared {sp.get("class")} {sp.get("factor", 0):.2f} '
      f'own {own.get("class")} {own.get("factor", 0):.2f}  duckdb {a["duckdb_rule"]["guess"]} '
      f'agrees={a["duckdb_rule"]["agrees"]}  16w: {r["verdict"]} {",".join(named)}  '
      f'solo {cps("solo", 16)}/s leader {cps("leader", 16)}/s  flush {a["flush_lat_us"]}  '
      f'empty fsync {ratio(method("fsync_empty"), "vs_fsync")} of fsync  '
      f'sfr+fdatasync {ratio(method("sync_file_range_fdatasync"), "vs_fdatasync")} of fdatasync')
EOF
}

FILESYSTEMS=${FILESYSTEMS:-tmpfs ext4 xfs btrfs device}
for fs in $FILESYSTEMS; do
  if [ "$fs" = device ]; then
    img=$WORK/device.img
    truncate -s 256M "$img"
    dev=$(losetup --direct-io=on -f --show "$img")
    loops+=("$dev")
    start=$(date +%s.%N)
    quick=--quick
    [ "${PLAN:-quick}" = full ] && quick=
    "$BIN" --db "$DB" advise --device "$dev" --destroy-data-on "$dev" $quick --quiet --json > "$WORK/device.json"
    end=$(date +%s.%N)
    summary "$WORK/device.json" "$(printf '%.0f' "$(echo "$end - $start" | bc)")"
    continue
  fi
  make_fs "$fs"
  mnt=$MNT
  rounds=1
  [ "$fs" = ext4 ] && rounds=$REPEATS
  for ((i = 0; i < rounds; i++)); do
    start=$(date +%s.%N)
    quick=--quick
    [ "${PLAN:-quick}" = full ] && quick=
    "$BIN" --db "$DB" advise "$mnt" $quick --quiet --json > "$WORK/$fs-$i.json"
    end=$(date +%s.%N)
    summary "$WORK/$fs-$i.json" "$(printf '%.0f' "$(echo "$end - $start" | bc)")"
  done
done
