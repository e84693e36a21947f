#!/usr/bin/env bash
# Build the libFuzzer targets and run each for a bounded time (`make test-fuzz`; docs/hardening.md).
# Prints the executions run and the crashes found per target; exits 1 if any target crashed.
#
#   FUZZ_BUDGET=60      seconds shared by the targets, in equal parts (what `make test` spends)
#   FUZZ_SECONDS=600    time per target instead (libFuzzer's -max_total_time), for a longer run
#   FUZZ_TARGETS="..."  which targets (default: every one in fuzz/Cargo.toml)
#
# Stable Rust only: `-s none` builds without a sanitizer (AddressSanitizer needs nightly's
# -Zsanitizer). The targets are safe Rust, so what they catch is a panic (assert, overflow
# with debug assertions, index out of bounds), a hang (-timeout) and an allocation beyond
# -malloc_limit_mb / -rss_limit_mb. Each target starts from its committed seeds in
# fuzz/corpus/TARGET (read only) and adds what it finds to fuzz/target/corpus/TARGET (kept
# between runs, never committed); a crashing input goes to fuzz/artifacts/TARGET/.
set -u
cd "$(dirname "$0")"
TARGETS=${FUZZ_TARGETS:-$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^rtsched-fuzz$')}
NTARGETS=$(echo $TARGETS | wc -w)
BUDGET=${FUZZ_BUDGET:-60}
SECONDS_PER=${FUZZ_SECONDS:-$(( BUDGET / NTARGETS > 0 ? BUDGET / NTARGETS : 1 ))}
echo "fuzz: $NTARGETS targets, $SECONDS_PER s each"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked || exit 1
start=$(date +%s)
cargo fuzz build -s none --release || exit 1
built=$(date +%s)
echo "fuzz: built in $((built - start)) s"
failed=0
ncrashed=0
printf '%-14s %12s %8s %s\n' target executions crashes log
for t in $TARGETS; do
    mkdir -p "target/corpus/$t" "corpus/$t" "artifacts/$t"
    log="target/fuzz-$t.log"
    # Structured targets read their input through `arbitrary`: let them use long inputs at once
    # (libFuzzer otherwise grows the length limit slowly, and a short run sees one-task sets).
    case $t in generate | simulate) len=(-len_control=0 -max_len=4096) ;; *) len=() ;; esac
    cargo fuzz run -s none --release "$t" "target/corpus/$t" "corpus/$t" -- "${len[@]}" \
        -max_total_time="$SECONDS_PER" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -print_final_stats=1 -close_fd_mask=1 >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    crashes=0
    if [ "$rc" -ne 0 ]; then
        crashes=1
        failed=1
        ncrashed=$((ncrashed + 1))
    fi
    printf '%-14s %12s %8s %s\n' "$t" "${execs:-?}" "$crashes" "fuzz/$log"
    if [ "$rc" -ne 0 ]; then
        # The whole panic message (the targets' assertions print the offending task set) and
        # the crashing input itself, so a crash on a CI machine can be replayed from its log:
        #   echo BASE64 | base64 -d > crash && cargo fuzz run -s none --release TARGET crash
        sed -n '/panicked at/,/^note: run with/p' "$log" | head -60 | sed 's/^/    /'
        grep -m1 -E "ERROR: libFuzzer|SUMMARY" "$log" | sed 's/^/    /'
        unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        if [ -n "$unit" ] && [ -f "$unit" ]; then
            echo "    crashing input ($(wc -c <"$unit") bytes, base64): $unit"
            base64 -w 0 "$unit" | fold -w 100 | sed 's/^/      /'
            echo
        fi
    fi
done
echo "fuzz: $NTARGETS targets, $ncrashed crashed, $(( $(date +%s) - start )) s in all"
exit $failed
