#!/usr/bin/env bash
# Bake throughput of `isoterra bake --queue` with 1, 2 and 4 worker
# processes (one thread each) on a world on a PostgreSQL server, next to a
# local bake of the same world in a file with 1 and 2 threads, in one run.
#
#   bench/pg_queue_bake.sh postgres://USER@HOST/DB [REGION]
#
# Each queue run bakes a fresh world (nothing skipped). Prints one line per
# run: wall seconds, chunks/s over the wall time, the CPU seconds of all
# workers together (user + system, from /proc of the waited children via
# bash's `times`), and the machine's load. Needs a release build
# (cargo build --release).
set -euo pipefail
url=${1:?usage: bench/pg_queue_bake.sh postgres://USER@HOST/DB [REGION]}
region=${2:--512,-64,-512,512,64,512}
bin=${ISOTERRA_BIN:-target/release/isoterra}
sep='?'
case "$url" in *\?*) sep='&' ;; esac
tag="qbench-$$"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CPU seconds of the waited children so far (user + system): the second
# line of `times`, run in this shell (not a subshell) into a file.
cpu_of_children() {
    times >"$tmp/times"
    tail -n 1 "$tmp/times" | awk '{
        split($1, u, /m|s/); split($2, s, /m|s/);
        printf "%.2f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}

file="$tmp/w.isoterra"
"$bin" new "$file" --kind voxel --seed 11 >/dev/null
chunks=$("$bin" bake "$file" --region "$region" --threads 1 --json -q | tee "$tmp/file1.json" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["baked"])')
for threads in 1 2; do
    rm -f "$file"
    "$bin" new "$file" --kind voxel --seed 11 >/dev/null
    cpu_of_children >"$tmp/before"
    start=$(date +%s.%N)
    "$bin" bake "$file" --region "$region" --threads "$threads" -q >/dev/null
    end=$(date +%s.%N)
    cpu_of_children >"$tmp/after"
    before=$(cat "$tmp/before") after=$(cat "$tmp/after")
    python3 -c "
w=$end-$start; print(f'file   {$threads} thread(s):        {w:6.2f} s wall  {$chunks/w:7.1f} chunks/s  cpu {$after-$before:6.2f} s  load {open(\"/proc/loadavg\").read().split()[0]}')"
done
for workers in 1 2 4; do
    world="$url${sep}world=$tag-$workers"
    "$bin" new "$world" --kind voxel --seed 11 >/dev/null
    cpu_of_children >"$tmp/before"
    start=$(date +%s.%N)
    for _ in $(seq "$workers"); do
        "$bin" bake "$world" --region "$region" --queue --threads 1 -q >/dev/null &
    done
    wait
    end=$(date +%s.%N)
    cpu_of_children >"$tmp/after"
    before=$(cat "$tmp/before") after=$(cat "$tmp/after")
    hash_file=$("$bin" info "$file" --hash | tail -n 1)
    hash_pg=$("$bin" info "$world" --hash | tail -n 1)
    same=$([ "$hash_file" = "$hash_pg" ] && echo "hash = file bake" || echo "HASH DIFFERS")
    python3 -c "
w=$end-$start; print(f'queue  {$workers} worker(s), 1 thread: {w:6.2f} s wall  {$chunks/w:7.1f} chunks/s  cpu {$after-$before:6.2f} s  load {open(\"/proc/loadavg\").read().split()[0]}  ($same)')"
done
echo "region $region: $chunks chunks; $(nproc) cores"
