#!/usr/bin/env bash
# Set up the Kafka course and open it in JupyterLab.
#
#   ./setup.sh               install what is missing, then open the first lesson
#   ./setup.sh --no-launch   install only (also: MINIKAFKA_NO_LAUNCH=1, or CI=true)
#   ./setup.sh --real-kafka  also fetch Apache Kafka's jars and Spark's Kafka connector from
#                            Maven Central (installs Maven if needed), for `minikafka kafka up`
#
# Safe to run again: system packages are installed only when missing, and the
# Python environment (.venv/) is reinstalled only when pyproject.toml changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

VENV="$ROOT/.venv"
STAMP="$VENV/.minikafka-install-stamp"
LAUNCH=1
REAL_KAFKA=0
[[ "${MINIKAFKA_NO_LAUNCH:-0}" == "1" ]] && LAUNCH=0
[[ "${CI:-}" == "true" ]] && LAUNCH=0

usage() {
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

for arg in "$@"; do
    case "$arg" in
        --no-launch) LAUNCH=0 ;;
        --real-kafka) REAL_KAFKA=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "setup.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    esac
done

say()  { printf '\033[1m==> %s\033[0m\n' "$*"; }
warn() { printf '\033[33mwarning:\033[0m %s\n' "$*" >&2; }
die()  { printf '\033[31merror:\033[0m %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- system packages
# apt_install PKG... : install Debian/Ubuntu packages, as root or through sudo.
# Returns non-zero (with a message) when that is not possible; callers decide
# whether that is fatal.
APT_UPDATED=0
SUDO=()
set_sudo() {
    SUDO=()
    [[ "$(id -u)" == "0" ]] && return 0
    command -v sudo >/dev/null 2>&1 || return 1
    # Without a terminal sudo cannot ask for a password: fail fast instead of hanging.
    if [[ -t 0 ]]; then SUDO=(sudo); else SUDO=(sudo -n); fi
}

apt_update_once() {
    [[ "$APT_UPDATED" == "1" ]] && return 0
    command -v apt-get >/dev/null 2>&1 || return 1
    set_sudo || return 1
    say "apt-get update"
    ${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
    APT_UPDATED=1
}

apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        warn "apt-get is not available on this system; please install these yourself: $*"
        warn "(macOS: brew install graphviz openjdk@17 ; other Linux: your package manager)"
        return 1
    fi
    if ! set_sudo; then
        warn "not root and sudo is missing; ask an administrator to install: $*"
        return 1
    fi
    if ! apt_update_once; then
        warn "apt-get update failed (no admin rights?); cannot install: $*"
        return 1
    fi
    say "apt-get install $*"
    local log
    log="$(mktemp)"
    if ! ${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends "$@" >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        rm -f "$log"
        warn "could not install: $*"
        return 1
    fi
    rm -f "$log"
}

# Java major version of `java` on PATH, or 0.
java_major() {
    command -v java >/dev/null 2>&1 || { echo 0; return; }
    local v
    v="$(java -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n1)"
    echo "${v:-0}"
}

# First Debian package name among the arguments that apt can install.
apt_candidate() {
    local p
    for p in "$@"; do
        if apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
            echo "$p"; return 0
        fi
    done
    return 1
}

# graphviz: the `dot` program draws every cluster picture in the lessons.
if ! command -v dot >/dev/null 2>&1; then
    apt_install graphviz || warn "cluster pictures need Graphviz's 'dot'; lessons will show text instead"
fi

# bubblewrap: the sandbox `python -m grading autograde` runs each submission in (instructors).
if ! command -v bwrap >/dev/null 2>&1; then
    apt_install bubblewrap || warn "autograding needs bubblewrap (or Docker) for its sandbox; lessons and labs work without it"
fi

# Java 17+: PySpark 4 runs on the JVM (labs only; lessons work without it).
if (( $(java_major) < 17 )); then
    if command -v apt-get >/dev/null 2>&1; then
        jre="$(apt_candidate openjdk-17-jre-headless openjdk-21-jre-headless default-jre-headless || true)"
        if [[ -z "$jre" ]] && apt_update_once; then
            # Package lists may be empty or stale on a new machine: look again after updating.
            jre="$(apt_candidate openjdk-17-jre-headless openjdk-21-jre-headless default-jre-headless || true)"
        fi
        if [[ -n "$jre" ]]; then
            apt_install "$jre" || warn "the Spark labs need Java 17 or newer"
        else
            warn "no Java 17+ package found; the Spark labs need Java 17 or newer"
        fi
    else
        warn "the Spark labs need Java 17 or newer (java not found); lessons work without it"
    fi
fi

# ---------------------------------------------------------------- python environment
find_python() {
    local c
    for c in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
        [[ -n "$c" ]] || continue
        command -v "$c" >/dev/null 2>&1 || continue
        if "$c" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
            command -v "$c"; return 0
        fi
    done
    return 1
}

venv_ok() {
    [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c \
        'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null
}

if ! venv_ok; then
    PY="$(find_python)" || die "Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)"
    say "creating .venv with $PY ($("$PY" -c 'import platform; print(platform.python_version())'))"
    rm -rf "$VENV"
    if ! "$PY" -m venv "$VENV"; then
        rm -rf "$VENV"
        apt_install python3-venv || true
        "$PY" -m venv "$VENV" || die "could not create a virtual environment (Debian/Ubuntu: apt install python3-venv)"
    fi
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
fi

# Checks run after each install; a failing check leaves no stamp, so the next run retries.
post_install_checks() {
    # Widgets: ipywidgets 8 ships its JupyterLab extension as a prebuilt labextension.
    if ! "$VENV/bin/jupyter" labextension list 2>&1 | grep -q '@jupyter-widgets/jupyterlab-manager'; then
        die "JupyterLab does not list @jupyter-widgets/jupyterlab-manager; widgets would not render. Try: rm -rf .venv && ./setup.sh"
    fi
    "$VENV/bin/python" - <<'EOF' || die "the Kafka compression codecs or crc32c are not working"
from kafka import codec
from kafka.record import util
missing = [n for n, ok in [("gzip", codec.has_gzip()), ("snappy", codec.has_snappy()),
                           ("lz4", codec.has_lz4()), ("zstd", codec.has_zstd())] if not ok]
if missing:
    raise SystemExit(f"missing codecs: {missing}")
if util.crc32c_c is None:
    raise SystemExit("C crc32c is missing: kafka-python would be ~4000x slower")
EOF
}

# The stamp records what was installed: pyproject.toml and the venv's Python.
want_stamp="$("$VENV/bin/python" -c 'import hashlib, sys
print(hashlib.sha256(open("pyproject.toml", "rb").read() + sys.version.encode()).hexdigest())')"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want_stamp" ]] \
        && "$VENV/bin/python" -c 'import minikafka' 2>/dev/null; then
    say "Python packages up to date (.venv)"
else
    say "installing minikafka and its dependencies into .venv (a few minutes the first time)"
    rm -f "$STAMP"
    pip_opts=(--disable-pip-version-check)
    [[ -t 1 ]] || pip_opts+=(--progress-bar off)
    # pipefail: the pipeline fails when pip fails; grep only hides the "already satisfied" noise.
    if ! "$VENV/bin/python" -m pip install "${pip_opts[@]}" -e ".[dev]" \
            | { grep -v '^Requirement already satisfied' || true; }; then
        die "pip install -e '.[dev]' failed (see above)"
    fi
    post_install_checks
    echo "$want_stamp" > "$STAMP"
fi
# The course's JupyterLab settings (no news pop-up): a file copy, so on every run.
"$VENV/bin/python" -m minikafka.course.jupyter_settings >/dev/null \
    || warn "could not install the course's JupyterLab settings (JupyterLab may ask about news)"
say "ready: .venv is set up"

# ---------------------------------------------------------------- real Apache Kafka (optional)
# Kafka's jars (for `minikafka kafka up`) and Spark's Kafka connector (format("kafka")),
# fetched once into .cache/ by Maven; a second run fetches nothing.
if [[ "$REAL_KAFKA" == "1" ]]; then
    command -v mvn >/dev/null 2>&1 || apt_install maven \
        || die "Maven is needed to fetch Apache Kafka's jars (Debian/Ubuntu: apt install maven; macOS: brew install maven)"
    say "fetching Apache Kafka's jars and Spark's Kafka connector from Maven Central (once)"
    "$VENV/bin/minikafka" kafka fetch \
        || die "could not fetch from Maven Central (see above); the course works without it"
    echo "Start real Kafka with: .venv/bin/minikafka kafka up   (labs/README.md)"
fi

# ---------------------------------------------------------------- launch
target=()
if [[ -f lessons/00-why-kafka.ipynb ]]; then
    target=(lessons/00-why-kafka.ipynb)
elif [[ -d lessons ]]; then
    target=(lessons)
fi
lab_opts=(--ServerApp.ip=127.0.0.1 --ServerApp.root_dir="$ROOT")
[[ "$(id -u)" == "0" ]] && lab_opts+=(--allow-root)  # containers and CI machines run as root
if [[ "$LAUNCH" == "0" ]]; then
    # The same command the launch below runs, so it works as root too.
    echo "Not opening JupyterLab (--no-launch). To start it later:"
    echo "  .venv/bin/jupyter lab ${lab_opts[*]} ${target[*]}"
    exit 0
fi

say "opening JupyterLab${target:+ at ${target[0]}} (stop it with Ctrl-C)"
exec "$VENV/bin/jupyter" lab "${lab_opts[@]}" ${target[@]+"${target[@]}"}
