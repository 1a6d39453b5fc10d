#!/usr/bin/env bash
# Installs what the fuzz build needs on Debian 12, beyond tools/install-deps.sh:
# clang and its runtime libraries (libFuzzer, ASan, UBSan). Only the fuzz
# build (meson setup -Dfuzz=true, tools/fuzz.sh) needs them; CI does not.
set -euo pipefail
bash "$(dirname "$0")/install-deps.sh"
packages=(clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
