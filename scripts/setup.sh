#!/usr/bin/env bash
# Create .venv with the pinned site/test dependencies and install parallelsel editable.
# Also installs the Debian packages the build and browser tests need when they are missing
# (fonts-noto-cjk for Chinese chart text, chromium for the browser tests).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
fc-list 2>/dev/null | grep -qi "Noto Sans CJK" || need+=(fonts-noto-cjk)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if ((${#need[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  elif [[ " ${need[*]} " == *" fonts-noto-cjk "* ]]; then
    # Chart text is Chinese: without a CJK font the build would draw empty boxes.
    echo "setup: please install these Debian packages first: sudo apt-get install ${need[*]}" >&2
    exit 1
  else
    # Only the browser tests need Chromium; the site builds without it.
    echo "setup: note: the browser tests need Chromium: sudo apt-get install chromium" >&2
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -c requirements/constraints.txt -e ".[docs,test]"
# Matplotlib caches its font list on first import: rebuild it so a CJK font installed after that is seen.
rm -rf "${MPLCONFIGDIR:-$HOME/.cache/matplotlib}"/fontlist-*.json
.venv/bin/python - <<'PY'
from matplotlib import font_manager
names = {f.name for f in font_manager.fontManager.ttflist}
assert any("CJK" in n for n in names), "no CJK font visible to matplotlib: install fonts-noto-cjk"
PY
# Pyodide for the calculator page (docs/matrix/calculator.md), self-hosted: npm puts it in node_modules/ (not
# committed) and the build (hooks/calculator_assets.py) copies it into site/. Without npm the site still builds and
# the page says the calculator is not part of this build.
if command -v npm >/dev/null 2>&1; then
  npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
  test -f node_modules/pyodide/pyodide.asm.wasm || { echo "setup: npm ci did not install pyodide" >&2; exit 1; }
else
  echo "setup: note: npm not found: the calculator page is built without Pyodide (sudo apt-get install npm)" >&2
fi
echo "setup: .venv ready"
