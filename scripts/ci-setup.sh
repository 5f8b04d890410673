#!/usr/bin/env bash
# System tools the test suite uses, installed on a fresh Debian/Ubuntu machine (as root, or
# with sudo): strace (kills at exact write syscalls) and git. Idempotent: installs only what
# is missing.
set -euo pipefail
need=()
command -v strace >/dev/null || need+=(strace)
command -v git >/dev/null || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
strace -V | head -1
