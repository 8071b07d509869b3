#!/usr/bin/env bash
# Installs Debian/Ubuntu packages that are missing. Usage: system-packages.sh PKG...
# Fails naming what could not be installed; never skips silently.
set -euo pipefail
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "Wraith: these packages are needed and this is not a Debian/Ubuntu system: ${missing[*]}" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "Wraith: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "Wraith: installing ${missing[*]}"
$SUDO apt-get update -qq || true
if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  for p in "${missing[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "Wraith: could not install package: $p" >&2
  done
  exit 1
fi
