#!/usr/bin/env bash
# Run the whole test suite.
#
#   ./test.sh                 set up (no JupyterLab), install test tools, run pytest
#   ./test.sh -k wire -x      extra arguments go to pytest
#
# Besides the course's own set-up, the tests use Debian's graphviz (dot), kcat
# (wire-protocol interop with librdkafka) and chromium (browser tests, driven by
# Playwright at /usr/bin/chromium; `playwright install` is never used).
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
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)

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

# ---------------------------------------------------------------- run
say "running pytest $*"
set +e
"$ROOT/.venv/bin/python" -m pytest "$@"
rc=$?
set -e
if [[ "$rc" == "5" ]]; then
    echo "error: pytest collected no tests (exit 5); treating that as a failure" >&2
    exit 1
fi
exit "$rc"
