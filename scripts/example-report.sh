#!/usr/bin/env bash
# Makes docs/images/example-report.{png,md}: the seed-000 preset (btrfs log commit) on a
# fresh btrfs mounted `nossd` vs the same image mounted `ssd`, 3 runs each, on a loop
# device backed by a file on the real disk. Needs root (mkfs, losetup, mount).
#   sudo scripts/example-report.sh            (SCALE=0.02 REPEAT=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${SCALE:-0.02}
REPEAT=${REPEAT:-3}
[[ $(id -u) == 0 ]] || { echo "needs root (mkfs.btrfs, losetup, mount)" >&2; exit 2; }
command -v mkfs.btrfs >/dev/null || { echo "install btrfs-progs" >&2; exit 2; }
cargo build --release --quiet -p fsynclab
BIN=$PWD/target/release/fsynclab
WORK=$(mktemp -d /var/tmp/fsynclab-example.XXXXXX)
DB=$WORK/example.sqlite
MNT=$WORK/mnt
LOOP=""
cleanup() {
    mountpoint -q "$MNT" && umount "$MNT"
    [[ -n $LOOP ]] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$MNT" docs/images
truncate -s 1G "$WORK/btrfs.img"
mkfs.btrfs -q -f "$WORK/btrfs.img" >/dev/null
LOOP=$(losetup -f --show "$WORK/btrfs.img")
for opt in nossd ssd; do
    mount -o "$opt" "$LOOP" "$MNT"
    "$BIN" --db "$DB" run --quiet --preset btrfs-log-commit --scale "$SCALE" --repeat "$REPEAT" \
        --quiet-wait 30 --label "btrfs-$opt" --target "$MNT"
    umount "$MNT"
done
"$BIN" --db "$DB" compare btrfs-nossd btrfs-ssd
"$BIN" --db "$DB" report btrfs-nossd btrfs-ssd --force --out docs/images/example-report.md \
    --title "seed 000 (btrfs log commit) on one kernel: nossd vs ssd mount, --scale $SCALE, ${REPEAT} runs each"
echo "wrote docs/images/example-report.md and docs/images/example-report.png"
