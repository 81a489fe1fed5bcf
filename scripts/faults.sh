#!/usr/bin/env bash
# faults.sh - the fault campaign behind docs/RELIABILITY.md: kill, signal, fill, break and
# race fsynclab, then read what the database kept.
#
#   sudo scripts/faults.sh [SECTION...]     (default: all sections)
#
# Sections: kill9 term hup timeout enospc inodes eio shutdown readonly lazy lock corrupt options swap
# Environment: KILLS (50, kill -9 rounds), TERMS (10), FSYNCLAB (binary; default
#   target/release/fsynclab, built if missing), KEEP (1 keeps the work directory).
# Prints one line per trial and a summary per section; exits 1 if any section saw a result
# the issue calls a loss (a killed run losing more than its last second plus one interval,
# a directory left behind after `clean`, a victim changed, a damaged file written to).
set -euo pipefail

KILLS=${KILLS:-50}
TERMS=${TERMS:-10}
die() { echo "faults: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root (loop devices, tmpfs, device-mapper): sudo $0"
for t in sqlite3 python3 mkfs.ext4 losetup blkid setpriv xfs_io; do
    command -v "$t" >/dev/null || die "missing tool: $t"
done

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FSYNCLAB=${FSYNCLAB:-$REPO/target/release/fsynclab}
if [[ ! -x $FSYNCLAB ]]; then
    (cd "$REPO" && cargo build --release --quiet)
fi
WORK=$(mktemp -d /var/tmp/fsynclab-faults.XXXXXX)
chmod 0755 "$WORK"
DB=$WORK/runs.sqlite
LOOPS=()
MOUNTS=()
DMS=()
BAD=0
cleanup() {
    set +e
    for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
    for d in "${DMS[@]}"; do dmsetup remove --retry "$d" 2>/dev/null; done
    for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
    [[ ${KEEP:-0} == 1 ]] && { echo "work kept in $WORK"; return; }
    rm -rf "$WORK"
}
trap cleanup EXIT

fl() { "$FSYNCLAB" --db "$DB" "$@"; }
# For `flbg ... &`: exec, so that $! is fsynclab itself and a signal reaches it, not a subshell.
flbg() { exec "$FSYNCLAB" --db "$DB" "$@"; }
q() { sqlite3 -readonly "$DB" "$1"; }
now_ms() { date +%s%3N; }
last_id() { q "SELECT max(id) FROM runs"; }
bad() { echo "  LOSS: $*"; BAD=1; }
lastline() { grep -v '^[[:space:]]*$' "$1" | tail -1; }

# An ext4 loop filesystem at $1 (size $2), recorded for cleanup.
ext4_loop() {
    local mnt=$1 size=$2 img
    img=$WORK/$(basename "$mnt").img
    truncate -s "$size" "$img"
    mkfs.ext4 -q -F "$img"
    local dev
    dev=$(losetup --find --show "$img")
    LOOPS+=("$dev")
    mkdir -p "$mnt"
    mount "$dev" "$mnt"
    MOUNTS+=("$mnt")
    chmod 0755 "$mnt"
}

leftover_dirs() { find "$1" -maxdepth 1 -name 'fsynclab-*' | wc -l; }

section_kill9() {
    echo "== kill9: $KILLS x kill -9 at a random moment of a 4 s run (fileio, 4 threads, fsync)"
    local mnt=$WORK/k9 i delay pid id kill_ms row losses=() none=0
    ext4_loop "$mnt" 1G
    for ((i = 1; i <= KILLS; i++)); do
        # 0.2 .. 5.4 s: before the timed part (probe, 1 s noise sample, prepare), in it, and near its end.
        delay=$(python3 -c "import random; print(round(random.uniform(0.2, 5.4), 2))")
        flbg run --quiet --threads 4 --file-size 16M --duration 4 --target "$mnt" --label "k9-$i" \
            >/dev/null 2>&1 &
        pid=$!
        sleep "$delay"
        kill_ms=$(now_ms)
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        id=$(q "SELECT max(id) FROM runs WHERE label = 'k9-$i'")
        if [[ -z $id ]]; then
            echo "  k9-$i killed at ${delay}s: before the run was recorded (nothing measured)"
            none=$((none + 1))
            continue
        fi
        # The next command marks it interrupted (its lock is free now).
        fl list --limit 1 >/dev/null 2>&1 || true
        row=$(q "SELECT status, coalesce(progress_at_ms, ''), coalesce(progress_t_ms, ''), \
                 (SELECT count(*) FROM intervals WHERE run_id = $id), coalesce(started_at_ms, '') \
                 FROM runs WHERE id = $id")
        IFS='|' read -r status p_at p_t nint started <<<"$row"
        if [[ $status == finished ]]; then
            echo "  k9-$i killed at ${delay}s: run $id had already finished"
        elif [[ -z $started ]]; then
            echo "  k9-$i killed at ${delay}s: run $id $status before its timed part (nothing measured yet)"
            none=$((none + 1))
        elif [[ -z $p_at ]]; then
            local lost=$((kill_ms - started))
            losses+=("$lost")
            echo "  k9-$i killed at ${delay}s: run $id $status in its first second, lost ${lost} ms"
            ((lost <= 1200)) || bad "run $id lost $lost ms (> last second + one interval)"
        else
            local lost=$((kill_ms - p_at))
            losses+=("$lost")
            echo "  k9-$i killed at ${delay}s: run $id $status, kept ${p_t} ms ($nint intervals), lost ${lost} ms"
            ((lost <= 1200)) || bad "run $id lost $lost ms (> last second + one interval)"
        fi
    done
    local before_clean
    before_clean=$(leftover_dirs "$mnt")
    fl clean >/dev/null
    local after_clean
    after_clean=$(leftover_dirs "$mnt")
    ((after_clean == 0)) || bad "$after_clean fsynclab-* directories left after clean"
    if ((${#losses[@]})); then
        printf '%s\n' "${losses[@]}" | python3 -c "
import statistics, sys
v = [int(x) for x in sys.stdin]
print(f'  summary: {len(v)} kills in a timed part: lost ms median {statistics.median(v):.0f}, max {max(v)}')"
    fi
    echo "  summary: $none kills before the timed part; fsynclab-* dirs on the target before clean $before_clean, after $after_clean"
}

signal_rounds() {
    local sig=$1 code=$2 rounds=$3 mnt=$WORK/sig-$1 i pid rc id row ok=0
    ext4_loop "$mnt" 512M
    for ((i = 1; i <= rounds; i++)); do
        flbg run --quiet --threads 4 --file-size 16M --duration 6 --target "$mnt" --label "$sig-$i" \
            >/dev/null 2>"$WORK/$sig-$i.err" &
        pid=$!
        sleep "$(python3 -c "import random; print(round(random.uniform(2.5, 4.5), 2))")"
        kill "-$sig" "$pid"
        rc=0
        wait "$pid" || rc=$?
        id=$(q "SELECT max(id) FROM runs WHERE label = '$sig-$i'")
        row=$(q "SELECT status, coalesce(writes, 0), (SELECT count(*) FROM intervals WHERE run_id = $id) \
                 FROM runs WHERE id = $id")
        IFS='|' read -r status writes nint <<<"$row"
        local left
        left=$(leftover_dirs "$mnt")
        echo "  $sig-$i: exit $rc, run $id $status, $writes writes, $nint intervals, dirs left $left"
        if [[ $rc == "$code" && $status == cancelled && $writes -gt 0 && $left == 0 ]]; then
            ok=$((ok + 1))
        else
            bad "$sig round $i: expected exit $code, cancelled with data, no directory"
        fi
    done
    # A second signal exits at once (the same one from the same sender within 0.5 s counts once).
    flbg run --quiet --threads 4 --file-size 16M --duration 30 --target "$mnt" --label "$sig-twice" \
        >/dev/null 2>&1 &
    pid=$!
    sleep 3
    local t0
    kill "-$sig" "$pid"
    sleep 0.6
    t0=$(now_ms)
    kill "-$sig" "$pid" 2>/dev/null || true
    wait "$pid" || true
    echo "  $sig twice: gone $(($(now_ms) - t0)) ms after the second signal"
    fl clean >/dev/null
    echo "  summary: $ok of $rounds rounds exited $code with a cancelled run, its data and no directory"
}

section_term() { echo "== term: SIGTERM"; signal_rounds TERM 143 "$TERMS"; }
section_hup() { echo "== hup: SIGHUP"; signal_rounds HUP 129 5; }

section_timeout() {
    echo "== timeout: \`timeout -s SIG 3\` around a 6 s run (timeout signals the child, then its group)"
    local mnt=$WORK/timeout sig rc id ok=0 n=0
    ext4_loop "$mnt" 512M
    for sig in INT TERM HUP INT TERM HUP; do
        n=$((n + 1))
        rc=0
        timeout --preserve-status -s "$sig" 3 "$FSYNCLAB" --db "$DB" run --quiet --threads 2 \
            --file-size 16M --duration 6 --target "$mnt" --label "timeout-$n" >/dev/null 2>&1 || rc=$?
        id=$(q "SELECT max(id) FROM runs WHERE label = 'timeout-$n'")
        local status
        status=$(q "SELECT status || ' ' || coalesce(writes, 0) FROM runs WHERE id = $id")
        echo "  timeout -s $sig: exit $rc, run $id $status, dirs left $(leftover_dirs "$mnt")"
        [[ $status == cancelled* ]] && ok=$((ok + 1)) || bad "timeout -s $sig lost the run ($status)"
    done
    echo "  summary: $ok of $n runs stopped by timeout were stored cancelled with their data"
}

section_enospc() {
    echo "== enospc: a 24 MiB tmpfs, files of 16 MiB x 4 threads"
    local mnt=$WORK/full rc=0
    mkdir -p "$mnt"
    mount -t tmpfs -o size=24M,mode=0755 tmpfs "$mnt"
    MOUNTS+=("$mnt")
    fl run --quiet --threads 4 --file-size 16M --set prepare=fill --target "$mnt" --label enospc \
        >/dev/null 2>"$WORK/enospc.err" || rc=$?
    echo "  exit $rc: $(lastline "$WORK/enospc.err")"
    echo "  stored: $(q "SELECT id, status FROM runs WHERE label = 'enospc'")  dirs left $(leftover_dirs "$mnt")"
    [[ $(leftover_dirs "$mnt") == 0 ]] || bad "enospc left a directory"
}

section_inodes() {
    echo "== inodes: a tmpfs with 64 inodes, smallfiles of 1000 files"
    local mnt=$WORK/inodes rc=0
    mkdir -p "$mnt"
    mount -t tmpfs -o size=64M,nr_inodes=64,mode=0755 tmpfs "$mnt"
    MOUNTS+=("$mnt")
    fl run --quiet --kind smallfiles --threads 2 --files 1000 --file-size 4k --target "$mnt" \
        --label inodes >/dev/null 2>"$WORK/inodes.err" || rc=$?
    echo "  exit $rc: $(lastline "$WORK/inodes.err")"
    grep -q inode "$WORK/inodes.err" || q "SELECT error FROM runs WHERE label='inodes'" | grep -q inode ||
        bad "the inode exhaustion message does not say inodes"
    echo "  stored: $(q "SELECT id, status, substr(error, 1, 90) FROM runs WHERE label = 'inodes'")"
}

section_eio() {
    echo "== eio: ext4 on device-mapper, the table switched to 'error' 2 s into a 6 s run"
    if ! grep -qw device-mapper /proc/misc; then
        echo "  skipped: this kernel has no device-mapper (/proc/misc); the shutdown section gives EIO instead"
        return
    fi
    local img=$WORK/eio.img dev sectors mnt=$WORK/eio rc=0 pid
    truncate -s 512M "$img"
    dev=$(losetup --find --show "$img")
    LOOPS+=("$dev")
    sectors=$(blockdev --getsz "$dev")
    dmsetup create fsynclab-eio --table "0 $sectors linear $dev 0"
    DMS+=(fsynclab-eio)
    mkfs.ext4 -q -F /dev/mapper/fsynclab-eio
    mkdir -p "$mnt"
    mount /dev/mapper/fsynclab-eio "$mnt"
    MOUNTS+=("$mnt")
    chmod 0755 "$mnt"
    flbg run --quiet --threads 2 --file-size 16M --duration 6 --target "$mnt" --label eio \
        >/dev/null 2>"$WORK/eio.err" &
    pid=$!
    sleep 3
    dmsetup suspend --noflush fsynclab-eio
    dmsetup load fsynclab-eio --table "0 $sectors error"
    dmsetup resume fsynclab-eio
    wait "$pid" || rc=$?
    echo "  exit $rc: $(lastline "$WORK/eio.err")"
    echo "  stored: $(q "SELECT id, status, writes, (SELECT count(*) FROM intervals WHERE run_id = runs.id), \
        substr(error, 1, 100) FROM runs WHERE label = 'eio'")"
    [[ -n $(q "SELECT id FROM runs WHERE label = 'eio' AND status IN ('failed', 'finished')") ]] ||
        bad "the EIO run was not stored"
}

section_shutdown() {
    echo "== shutdown: ext4 shut down (EXT4_IOC_SHUTDOWN via xfs_io) 2 s into a 6 s run"
    local mnt=$WORK/sd rc=0 pid
    ext4_loop "$mnt" 512M
    flbg run --quiet --threads 2 --file-size 16M --duration 6 --target "$mnt" --label shutdown \
        >/dev/null 2>"$WORK/sd.err" &
    pid=$!
    sleep 3
    xfs_io -x -c "shutdown -f" "$mnt"
    wait "$pid" || rc=$?
    echo "  exit $rc: $(lastline "$WORK/sd.err")"
    echo "  stored: $(q "SELECT id, status, writes, (SELECT count(*) FROM intervals WHERE run_id = runs.id), \
        substr(error, 1, 100) FROM runs WHERE label = 'shutdown'")"
}

section_readonly() {
    echo "== readonly: a read-only target, and a read-only database"
    local mnt=$WORK/ro rc=0 before
    mkdir -p "$mnt"
    mount -t tmpfs -o size=16M,ro tmpfs "$mnt"
    MOUNTS+=("$mnt")
    before=$(last_id)
    fl run --quiet --target "$mnt" --label ro >/dev/null 2>"$WORK/ro.err" || rc=$?
    echo "  target ro: exit $rc: $(lastline "$WORK/ro.err"); runs stored: $(($(last_id) - before))"
    [[ $rc == 2 && $(last_id) == "$before" ]] || bad "a read-only target stored something or did not exit 2"
    cp "$DB" "$WORK/ro.sqlite"
    chmod 0444 "$WORK/ro.sqlite"
    rc=0
    "$FSYNCLAB" --db "$WORK/ro.sqlite" list --limit 3 >/dev/null 2>"$WORK/rodb.err" || rc=$?
    echo "  0444 database: list exit $rc"
    [[ $rc == 0 ]] || bad "a read-only database cannot be listed"
}

section_lazy() {
    echo "== lazy: umount -l of the target 2 s into a 5 s run"
    local mnt=$WORK/lazy rc=0 pid
    ext4_loop "$mnt" 512M
    flbg run --quiet --threads 2 --file-size 16M --duration 5 --target "$mnt" --label lazy \
        >/dev/null 2>"$WORK/lazy.err" &
    pid=$!
    sleep 3
    umount -l "$mnt"
    wait "$pid" || rc=$?
    echo "  exit $rc: $(lastline "$WORK/lazy.err")"
    echo "  stored: $(q "SELECT id, status, writes FROM runs WHERE label = 'lazy'")"
    mount "${LOOPS[-1]}" "$mnt"
    echo "  remounted: fsynclab-* left on the filesystem: $(leftover_dirs "$mnt")"
}

section_lock() {
    echo "== lock: another process holds the write lock for 9 s while a run finishes"
    local mnt=$WORK/lock rc=0 t0 lister_rc=0
    ext4_loop "$mnt" 512M
    fl run --quiet --threads 2 --file-size 4M --duration 2 --target "$mnt" --label warm >/dev/null
    (echo "BEGIN IMMEDIATE; UPDATE runs SET label = label WHERE id = 1;"; sleep 9; echo "COMMIT;") |
        sqlite3 "$DB" &
    local holder=$!
    sleep 0.5
    t0=$(now_ms)
    timeout 5 "$FSYNCLAB" --db "$DB" list --limit 2 >/dev/null 2>&1 || lister_rc=$?
    echo "  list behind the lock: exit $lister_rc in $(($(now_ms) - t0)) ms"
    [[ $lister_rc == 0 ]] || bad "list blocked behind a writer"
    fl run --quiet --threads 2 --file-size 4M --duration 1 --target "$mnt" --label locked \
        >/dev/null 2>"$WORK/lock.err" || rc=$?
    wait "$holder"
    echo "  run under the lock: exit $rc; $(grep -c waiting "$WORK/lock.err") waiting message(s); \
stored $(q "SELECT status FROM runs WHERE label = 'locked'")"
    [[ $(q "SELECT status FROM runs WHERE label = 'locked'") == finished ]] || bad "the run under the lock was lost"
}

section_corrupt() {
    echo "== corrupt: pages in the middle of a copy overwritten; a file that is not a database"
    local copy=$WORK/damaged.sqlite sum rc=0
    cp "$DB" "$copy"
    sqlite3 "$copy" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
    local pages
    pages=$(($(stat -c %s "$copy") / 4096))
    dd if=/dev/urandom of="$copy" bs=4096 seek=$((pages / 2)) count=2 conv=notrunc status=none
    sum=$(sha256sum "$copy")
    "$FSYNCLAB" --db "$copy" list >/dev/null 2>"$WORK/corrupt.err" || rc=$?
    echo "  damaged: list exit $rc: $(lastline "$WORK/corrupt.err")"
    [[ $(sha256sum "$copy") == "$sum" ]] || bad "a damaged database was written to"
    head -c 100000 /dev/urandom >"$WORK/noise.sqlite"
    sum=$(sha256sum "$WORK/noise.sqlite")
    rc=0
    "$FSYNCLAB" --db "$WORK/noise.sqlite" run --quiet --target "$WORK" >/dev/null 2>"$WORK/noise.err" || rc=$?
    echo "  not a database: run exit $rc: $(lastline "$WORK/noise.err")"
    [[ $(sha256sum "$WORK/noise.sqlite") == "$sum" ]] || bad "a non-database file was written to"
}

section_options() {
    echo "== options: mkfs/mount option strings aimed at a victim loop device"
    local img=$WORK/victim.img v before rc
    truncate -s 300M "$img"
    mkfs.ext4 -q -F "$img"
    v=$(losetup --find --show "$img")
    LOOPS+=("$v")
    before=$(blkid -p "$v"; sha256sum <"$v")
    # One attack per line, its arguments separated by '|'.
    local attacks=(
        "scratch|create|--fs|btrfs|--size|300M|--mkfs-opts|$v"
        "scratch|create|--fs|xfs|--size|300M|--mkfs-opts=-l logdev=$v"
        "scratch|create|--fs|ext4|--size|300M|--mkfs-opts=-J device=$v"
        "scratch|create|--fs|xfs|--size|300M|--mkfs-opts=-r rtdev=$v"
        "scratch|create|--fs|ext4|--size|300M|--mkfs-opts=-L b $v"
        "scratch|create|--fs|ext4|--size|300M|--mount-opts|journal_path=$v"
        "scratch|create|--fs|xfs|--size|300M|--mount-opts|logdev=$v"
        "matrix|--preset|btrfs-log-commit|--scale|0.01|--fs|btrfs|--mkfs-opts=-L a|--mkfs-opts=-L b $v"
    )
    local a args
    for a in "${attacks[@]}"; do
        IFS='|' read -r -a args <<<"$a"
        rc=0
        XDG_DATA_HOME=$WORK/xdg fl "${args[@]}" >/dev/null 2>"$WORK/opt.err" || rc=$?
        echo "  exit $rc: ${args[*]} -> $(lastline "$WORK/opt.err" | cut -c1-120)"
        [[ $rc == 2 ]] && grep -q "$v" "$WORK/opt.err" || bad "option attack not refused by name: ${args[*]}"
    done
    [[ $(blkid -p "$v"; sha256sum <"$v") == "$before" ]] || bad "the victim device changed"
    echo "  victim blkid and contents unchanged: $([[ $(blkid -p "$v"; sha256sum <"$v") == "$before" ]] && echo yes || echo NO)"
}

section_swap() {
    echo "== swap: an unprivileged user swaps fsynclab-N for a symlink to a victim, every kind"
    local t=$WORK/shared victim=$WORK/victim kind sum
    mkdir -p "$t" "$victim/thread-0"
    chmod 0777 "$t"
    echo precious >"$victim/precious.txt"
    echo x >"$victim/thread-0.dat"
    echo y >"$victim/thread-0/f0000000000"
    sum=$(cd "$victim" && find . -type f -exec sha256sum {} + | sort)
    setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "
        end=\$((SECONDS + 60)); n=0
        while ((SECONDS < end)); do
            for d in '$t'/fsynclab-*; do
                [[ -d \$d && ! -L \$d ]] || continue
                n=\$((n + 1)); mv \"\$d\" '$t'/moved-\$n 2>/dev/null && ln -s '$victim' \"\$d\" 2>/dev/null
            done
        done" &
    local attacker=$!
    for kind in "fileio --set prepare=fill --file-size 8M" "fileio --mode sysbench --file-size 8M" \
        "smallfiles --files 200" "fileserver --clients 2" "grouplog"; do
        # shellcheck disable=SC2086
        fl run --quiet --kind $kind --threads 2 --duration 1 --allow-shared-target --target "$t" \
            --label swap >/dev/null 2>&1 || true
        echo "  $kind: run $(q "SELECT id || ' ' || status FROM runs WHERE label = 'swap' ORDER BY id DESC LIMIT 1"), \
$(q "SELECT count(*) FROM runs WHERE label = 'swap' AND warnings_json LIKE '%renamed away%' OR label = 'swap' AND warnings_json LIKE '%no longer is the directory%'") run(s) saw a swap and said so"
    done
    kill "$attacker" 2>/dev/null || true
    wait "$attacker" 2>/dev/null || true
    if [[ $(cd "$victim" && find . -type f -exec sha256sum {} + | sort) == "$sum" ]]; then
        echo "  victim unchanged after 5 runs with a swapping attacker"
    else
        bad "the victim directory changed"
    fi
    rm -rf "${t:?}"/moved-* "${t:?}"/fsynclab-*
}

SECTIONS=("$@")
((${#SECTIONS[@]})) || SECTIONS=(kill9 term hup timeout enospc inodes eio shutdown readonly lazy lock corrupt options swap)
echo "fsynclab fault campaign: $("$FSYNCLAB" --version) on $(uname -r), $(date -u +%FT%TZ)"
for s in "${SECTIONS[@]}"; do
    "section_$s"
done
((BAD == 0)) && echo "no loss beyond the documented bounds" || echo "LOSSES FOUND (see LOSS lines)"
exit "$BAD"
