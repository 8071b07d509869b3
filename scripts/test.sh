#!/usr/bin/env bash
# Installs what the tests need (real sshd, Xvfb + FreeRDP shadow server, Chromium, xdotool,
# FreeRDP headers for the addon), builds once, lints, type-checks and runs every test.
# Ends with a line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/system-packages.sh \
  build-essential python3 pkg-config \
  openssh-server openssh-client \
  xvfb x11-utils x11-xserver-utils xdotool \
  freerdp2-dev freerdp2-shadow-x11 freerdp2-x11 winpr-utils \
  chromium imagemagick procps acl

export ELECTRON_SKIP_BINARY_DOWNLOAD=1
npm ci --no-audit --no-fund
npm run build
npm run typecheck
npm run lint

mkdir -p test-results
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json
status=$?
set -e
node scripts/test-summary.mjs test-results/vitest.json
exit $status
