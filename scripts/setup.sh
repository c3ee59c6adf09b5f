#!/usr/bin/env bash
# Installs what funcgen needs to build and test, from Debian 12's packages only.
# Idempotent: packages already present are not reinstalled, and nothing runs apt when all are there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  llvm-16-dev libclang-16-dev libclang-cpp16-dev clang-16 llvm-16-tools
  libclang-rt-16-dev libomp-16-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libhwy-dev libopenblas-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
