#!/usr/bin/env bash
# The kernel driver's test: boot a QEMU guest whose kernel has sched_ext and check rtsched's
# BPF scheduler in it (order of job executions against the simulator, misses, the watchdog
# under a SCHED_FIFO hog, a killed loader, clean unloads, the verifier's counts).
#
# Called by `make test-kernel` (part of `make test`). As root with apt it installs what it needs
# (qemu, clang-19, busybox-static, libelf/libbpf headers) and fetches the pinned kernel packages
# into target/scx-guest without touching the system's apt sources: from Debian's
# trixie-backports on a mirror this machine's apt is configured with (the URIs of its sources,
# so a local mirror or proxy works; no host is named here). Elsewhere it says why it
# skips. RTSCHED_GUEST_QUICK=1 only loads the programs through the verifier (a development
# aid), RTSCHED_GUEST_ONLY=BACKEND runs that backend's order check alone, with its intervals
# (with RTSCHED_GUEST_TRACE=1 also the kernel's trace of it, with the scheduler's trace lines;
# RTSCHED_GUEST_FILE=NAME on the guest's NAME.yaml instead of the one the backend implies).
# The guest runs under TCG (no usable KVM here): timing in it means nothing, order does.
# RTSCHED_CARGO_PROFILE (default release) is the Cargo profile the loader is built with
# (`make test` passes its own, so the workspace's crates are compiled once).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
W=$ROOT/target/scx-guest
KVER="7.3.4-1~bpo13+1"      # Debian trixie-backports: CONFIG_SCHED_CLASS_EXT=y, BTF
KABI="7.3.4+deb13-amd64"
DEBS="qemu-system-x86 clang-19 llvm-19 busybox-static libelf-dev libbpf-dev zlib1g-dev pkg-config cpio"
T0=$(date +%s)
skip() { echo "kernel test skipped: $*"; exit 0; }

missing=""
for p in $DEBS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        skip "needs the Debian packages$missing (run as root to install them)"
    fi
    echo "kernel test: installing$missing"
    apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $missing >/dev/null; } \
        || skip "could not install$missing"
fi

# The URIs of this machine's apt sources, in the order configured: those apt has lists for
# (apt-get indextargets), then every URI of sources.list and sources.list.d (one-line .list and
# deb822 .sources files), each once.
apt_mirrors() {
    local SL="" SP=""
    eval "$(apt-config shell SL Dir::Etc::sourcelist/f SP Dir::Etc::sourceparts/d)"
    {
        apt-get indextargets --format '$(REPO_URI)' 2>/dev/null
        cat "$SL" "$SP"/*.list 2>/dev/null | sed -n 's/\[[^]]*\]//; s/^[[:space:]]*deb[[:space:]]\{1,\}\([^[:space:]]\{1,\}\).*/\1/p'
        cat "$SP"/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' | tr ' \t' '\n\n'
    } | sed 's:/*$::' | awk 'NF && !seen[$0]++'
}

# The pinned kernel and its vmlinux.h, through a private apt configuration (this machine's
# apt.conf, so its proxy settings too, with a sources list of its own).
if [ ! -s "$W/vmlinuz" ] || [ ! -s "$W/include/vmlinux.h" ]; then
    echo "kernel test: fetching linux $KVER"
    A="$W/apt"; rm -rf "$A"; mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$W/include"
    O="-o Dir::Etc::sourcelist=$A/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$A/lists -o Dir::Cache=$A/cache -o Debug::NoLocking=1"
    MIRRORS=$(apt_mirrors)
    [ -n "$MIRRORS" ] || skip "this machine's apt has no sources configured to fetch the kernel from"
    found=""
    for M in $MIRRORS; do
        echo "deb $M trixie-backports main" > "$A/sources.list"
        if apt-get -q $O update >/dev/null 2>&1; then found=$M; break; fi
    done
    [ -n "$found" ] || skip "none of this machine's apt sources ($(echo $MIRRORS)) serves trixie-backports, where linux $KVER is"
    echo "kernel test: linux $KVER from trixie-backports at $found (this machine's apt sources)"
    (cd "$A" && apt-get -q $O download "linux-binary-$KABI=$KVER" "linux-bpf-dev=$KVER" >/dev/null 2>&1) || skip "cannot download linux $KVER"
    for d in "$A"/*.deb; do dpkg -x "$d" "$A/x"; done
    cp "$A/x/usr/lib/modules/$KABI/vmlinuz" "$W/vmlinuz"
    cp "$A/x/usr/include/x86_64-linux-gnu/linux/bpf/vmlinux.h" "$W/include/vmlinux.h"
    rm -rf "$A"
fi

echo "kernel test: building the scheduler and the guest's programs"
export RTSCHED_VMLINUX_H="$W/include/vmlinux.h"
# The trace aid needs the scheduler's trace lines compiled in (and out again next time).
if [ -n "${RTSCHED_GUEST_TRACE:-}" ]; then export RTSCHED_BPF_TRACE=1; else unset RTSCHED_BPF_TRACE; fi
PROFILE=${RTSCHED_CARGO_PROFILE:-release}
BIN=$ROOT/target/$PROFILE
(cd "$ROOT" && cargo build -q --profile "$PROFILE" -p rtsched-scx --bins)
# Host-side tests: the object's maps and layouts agree with the Rust side, refusals are clear.
(cd "$ROOT" && cargo test -q --profile "$PROFILE" -p rtsched-scx 2>&1 | grep -E "^test result|FAILED|panicked" ) || { echo "kernel test: host-side tests FAILED"; exit 1; }

# The initramfs: busybox, our programs and the shared libraries they need, the task sets.
R="$W/root"; rm -rf "$R"; mkdir -p "$R"/{bin,sbin,proc,sys,dev,tmp,t,etc}
cp /bin/busybox "$R/bin/busybox"
for a in $("$R/bin/busybox" --list); do [ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"; done
for b in rtsched-scx rtsched-scx-check; do
    cp "$BIN/$b" "$R/bin/"
    for l in $(ldd "$BIN/$b" | grep -o '/[^ ]*'); do mkdir -p "$R$(dirname "$l")"; cp -L "$l" "$R$l"; done
done
cp "$ROOT"/crates/scx/guest/*.yaml "$R/t/"
cp "$ROOT/crates/scx/guest/init" "$R/init"; chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initrd.cpio.gz"

boot() {
    timeout 480 qemu-system-x86_64 -accel tcg,thread=${RTSCHED_TCG_THREAD:-single} -cpu max -smp 2 -m 1G -nographic -no-reboot \
        -kernel "$W/vmlinuz" -initrd "$W/initrd.cpio.gz" \
        -append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init${RTSCHED_GUEST_QUICK:+ rtsched_quick}${RTSCHED_GUEST_TRACE:+ rtsched_trace}${RTSCHED_GUEST_ONLY:+ rtsched_only=$RTSCHED_GUEST_ONLY}${RTSCHED_GUEST_FILE:+ rtsched_file=$RTSCHED_GUEST_FILE}" > "$1" 2>&1 || true
}
LOG="$W/console.log"
boot "$LOG"
# A panicked guest still makes qemu exit 0: judge by the guest's end marker, and retry a boot
# that did not finish once (single-threaded TCG, the default, has not been seen to panic;
# RTSCHED_TCG_THREAD=multi times far better but panics now and then while the kernel patches
# its static keys at a scheduler's load or unload: that is what a retry is for).
for n in 1 2; do
    grep -q "^GUEST-END" "$LOG" && break
    echo "kernel test: no end marker (panic: $(grep -c 'Kernel panic' "$LOG" || true)); booting again"
    cp "$LOG" "$W/console.$n.log"
    boot "$LOG"
    [ "${RTSCHED_TCG_THREAD:-single}" = multi ] || break
done
tr -d '\r' < "$LOG" | grep -E "^(CHECK|NOTE|verified|sim |real |stats )" || true
pass=$(tr -d '\r' < "$LOG" | grep -cE "^CHECK .* ok( |$)" || true)
fail=$(tr -d '\r' < "$LOG" | grep -cE "^CHECK .* FAIL" || true)
ended=$(tr -d '\r' < "$LOG" | grep -c "^GUEST-END" || true)
echo "kernel test: $pass passed, $fail failed in the guest, $(( $(date +%s) - T0 )) s (console: $LOG)"
if [ "$ended" = 0 ]; then echo "kernel test: FAILED: the guest did not finish (see $LOG)"; exit 1; fi
if [ "$fail" != 0 ] || [ "$pass" = 0 ]; then exit 1; fi
