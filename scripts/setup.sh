#!/usr/bin/env bash
# Installs what nb_tools needs on a fresh machine: Python packages (from PyPI), the
# JupyterLab extension's build (node + npm registry), and, with --browser, Debian's
# chromium for the browser tests. Safe to run again.
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
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
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

python3 -m pip install -q --upgrade pip
python3 -m pip install -q -e ".[dev]"
