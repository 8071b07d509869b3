#!/usr/bin/env bash
# Installs Wraith's dependencies, builds it, and starts it: the Electron app where an Electron
# runtime is present, otherwise browser mode (`wraith serve`), which prints the URL to open.
# Extra arguments go to `wraith serve` (e.g. --port 8022).
set -euo pipefail
cd "$(dirname "$0")/.."

# Node 20+ and a compiler for native modules (better-sqlite3, node-pty, the RDP addon).
command -v node >/dev/null || { echo "Wraith: Node.js 20 or newer is required (https://nodejs.org or your package manager)." >&2; exit 1; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || { echo "Wraith: Node.js 20 or newer is required; found $(node --version)." >&2; exit 1; }
bash scripts/system-packages.sh build-essential python3 pkg-config freerdp2-dev

export ELECTRON_SKIP_BINARY_DOWNLOAD="${ELECTRON_SKIP_BINARY_DOWNLOAD:-1}"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build --silent

if [ -x node_modules/electron/dist/electron ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec npx electron .
fi
echo "Wraith: no Electron runtime here; starting browser mode."
exec node bin/wraith.js serve "$@"
