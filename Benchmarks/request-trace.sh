#!/usr/bin/env bash
# Which source files one request crosses (docs/architecture.md's traces), by code coverage:
# builds `request-trace` with coverage into .build-trace, runs it (it resets the counters once
# the relay is ready, sends one request, and writes them after the reply is delivered), and lists
# every file under Sources/ with a line run in that window. `--list` prints the files too;
# `--functions` also the (mangled) functions of each that ran.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-trace
swift build --enable-code-coverage --scratch-path "$scratch" --product request-trace >&2
bin="$(swift build --enable-code-coverage --scratch-path "$scratch" --show-bin-path)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
llvm_profdata="$(dirname "$(command -v swift)")/llvm-profdata"
llvm_cov="$(dirname "$(command -v swift)")/llvm-cov"
for trace in slack telegram; do
  (cd "$out" && "$bin/request-trace" "$trace" "$out/trace-$trace.profraw") >&2
  "$llvm_profdata" merge -sparse "$out/trace-$trace.profraw" -o "$out/$trace.profdata"
  "$llvm_cov" export -skip-expansions -instr-profile "$out/$trace.profdata" "$bin/request-trace" >"$out/$trace.json"
  python3 - "$out/$trace.json" "$PWD/Sources/" "$trace" "${1:-}" <<'PY'
import json, sys
report, root, name, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
files = []
# A file is crossed when a region of it ran. Counters reset while a task waited inside a loop
# can wrap below zero (2^64 - n): those are not runs.
for data in json.load(open(report))["data"]:
    for f in data["files"]:
        path = f["filename"]
        if not path.startswith(root):
            continue
        ran = any(seg[3] and seg[4] and 0 < seg[2] < 2**63 for seg in f["segments"])
        if ran:
            files.append(path[len(root):])
files.sort()
modules = sorted({f.split("/")[0] for f in files})
print(f"{name}: {len(files)} files in {len(modules)} modules ({', '.join(modules)})")
if mode == "--list":
    for f in files:
        print("  " + f)
if mode == "--functions":
    # Which functions of each crossed file ran: where to look when folding a file into another.
    ran_in = {}
    for data in json.load(open(report))["data"]:
        for fn in data.get("functions", []):
            if fn["count"] and 0 < fn["count"] < 2**63 and fn["filenames"][0].startswith(root):
                ran_in.setdefault(fn["filenames"][0][len(root):], []).append(fn["name"])
    for f in files:
        print("  " + f)
        for n in sorted(set(ran_in.get(f, []))):
            print("      " + n)
PY
done
