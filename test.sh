#!/usr/bin/env bash
# Run the whole test suite.
#
#   ./test.sh                 set up (no JupyterLab), install test tools, run pytest
#   ./test.sh -k wire -x      extra arguments go to pytest
#   MINIKAFKA_TEST_WORKERS=4 ./test.sh   pytest-xdist workers (default 2; 0 runs in this process)
#
# Besides the course's own set-up, the tests use Debian's graphviz (dot), kcat
# (wire-protocol interop with librdkafka) and chromium (browser tests, driven by
# Playwright at /usr/bin/chromium; `playwright install` is never used), and Maven, which
# fetches Apache Kafka's jars and Spark's Kafka connector for the tests marked real_kafka.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

say()  { printf '\033[1m==> %s\033[0m\n' "$*"; }
warn() { printf '\033[33mwarning:\033[0m %s\n' "$*" >&2; }

./setup.sh --no-launch

# ---------------------------------------------------------------- test tools
# command name -> Debian package
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
command -v mvn >/dev/null 2>&1 || missing+=(maven)   # fetches Kafka's jars (real_kafka tests)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)   # runs Java sources (ConfigDefs.java, tests/java)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)   # the autograder's sandbox
command -v npm >/dev/null 2>&1 || missing+=(npm)   # minikafka lite build (Pyodide, viz.js); node runs its Python
# The Docker lab cluster and the grader's docker sandbox (tests marked docker), run with Podman.
command -v podman >/dev/null 2>&1 || missing+=(podman)
[[ -x /usr/sbin/runc ]] || missing+=(runc)
[[ -x /usr/lib/cni/dnsname ]] || missing+=(golang-github-containernetworking-plugin-dnsname)   # containers find each other by name
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)   # the images' Debian base

if (( ${#missing[@]} )); then
    sudo=()
    if [[ "$(id -u)" != "0" ]] && command -v sudo >/dev/null 2>&1; then
        if [[ -t 0 ]]; then sudo=(sudo); else sudo=(sudo -n); fi
    fi
    installed=0
    if command -v apt-get >/dev/null 2>&1 && { [[ "$(id -u)" == "0" ]] || (( ${#sudo[@]} )); }; then
        say "installing test tools: ${missing[*]}"
        if ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
            && ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
            installed=1
        fi
    fi
    if [[ "$installed" == "0" ]]; then
        msg="could not install ${missing[*]} (needs apt-get and admin rights); the tests that use them will be skipped"
        if [[ "${CI:-}" == "true" ]]; then
            echo "error: $msg" >&2
            exit 1
        fi
        warn "$msg"
    fi
fi

# configurable-http-proxy (npm), JupyterHub's proxy, for the class-on-JupyterHub test
# (tests/test_grading_hub.py); JupyterHub itself comes with the [grading] extra.
if [[ ! -x .cache/npm/node_modules/.bin/configurable-http-proxy ]] && command -v npm >/dev/null 2>&1; then
    say "installing configurable-http-proxy into .cache/npm (once)"
    mkdir -p .cache/npm
    if ! npm install --prefix .cache/npm --no-audit --no-fund configurable-http-proxy@5; then
        [[ "${CI:-}" == "true" ]] && { echo "error: could not install configurable-http-proxy" >&2; exit 1; }
        warn "no configurable-http-proxy: the JupyterHub class test will be skipped"
    fi
fi

# ---------------------------------------------------------------- real Apache Kafka
# The real_kafka tests start Kafka's three nodes themselves from these jars (cached in
# .cache/, fetched from Maven Central the first time).
say "fetching Apache Kafka's jars and Spark's Kafka connector (once)"
if ! "$ROOT/.venv/bin/minikafka" kafka fetch; then
    if [[ "${CI:-}" == "true" ]]; then
        echo "error: could not fetch Kafka's jars or Spark's connector; the real_kafka tests need them" >&2
        exit 1
    fi
    warn "no Kafka jars: the real_kafka tests will fail; run ./test.sh -m 'not real_kafka' offline"
fi

# ---------------------------------------------------------------- Docker images (Podman)
# The tests marked docker run docker/compose.yaml under Podman: runc (crun refuses hybrid
# cgroups), cgroupfs, no raised default ulimits. The images are built here once per machine
# and rebuilt only when their inputs change (docker/build-images).
if command -v podman >/dev/null 2>&1 && [[ "$(id -u)" == "0" ]]; then
    conf=/etc/containers/containers.conf
    if [[ ! -e "$conf" ]]; then
        printf '%s\n' '[containers]' 'default_ulimits = []' '' '[engine]' 'runtime = "runc"' \
            'cgroup_manager = "cgroupfs"' 'events_logger = "file"' > "$conf"
    fi
    say "building the Docker images (once)"
    if ! "$ROOT/.venv/bin/python" -m pip install -q "podman-compose==1.5.0" \
            || ! "$ROOT/docker/build-images"; then
        [[ "${CI:-}" == "true" ]] && { echo "error: could not build the Docker images" >&2; exit 1; }
        warn "no Docker images: the tests marked docker will fail; run ./test.sh -m 'not docker'"
    fi
fi

# ---------------------------------------------------------------- run
say "running pytest $*"
set +e
# Two workers; the native Kafka tests form two groups, each on one worker with a cluster of its own (tests/conftest.py).
# The 30 slowest tests are listed at the end: where the suite's time goes.
"$ROOT/.venv/bin/python" -m pytest -n "${MINIKAFKA_TEST_WORKERS:-2}" --dist loadgroup \
    --durations=30 "$@"
rc=$?
set -e
if [[ "$rc" == "5" ]]; then
    echo "error: pytest collected no tests (exit 5); treating that as a failure" >&2
    exit 1
fi
exit "$rc"
