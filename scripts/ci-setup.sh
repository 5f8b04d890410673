#!/usr/bin/env bash
# System tools the test suite uses, installed on a fresh Debian/Ubuntu machine (as root, or
# with sudo): strace (kills at exact write syscalls), git, and a Docker engine for the
# `vb session` sandbox tests: docker.io with what dockerd needs (containerd, runc, iptables)
# and debootstrap, with which the tests' `sandbox_image` fixture builds the sandbox's base
# image itself (`ensure_image`: no registry needed). Idempotent: installs only what is missing,
# and starts dockerd (detached, no systemd) only when `docker info` fails.
#
# Knobs: DOCKERD_ARGS (extra dockerd flags, e.g. "--iptables=false" or "--storage-driver=vfs"),
#        DOCKERD_LOG (default /var/log/dockerd.log), DOCKERD_WAIT (seconds, default 60).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"  # dockerd, iptables, debootstrap for a non-root caller
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/dockerd.log}
DOCKERD_WAIT=${DOCKERD_WAIT:-60}
DOCKERD_ARGS=${DOCKERD_ARGS:-}

need=()
command -v strace >/dev/null || need+=(strace)
command -v git >/dev/null || need+=(git)
command -v dockerd >/dev/null || need+=(docker.io)
command -v containerd >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
command -v iptables >/dev/null || need+=(iptables)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
    echo "ci-setup: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # --no-install-recommends: no apparmor etc.; docker.io's attempt to start its service is
    # refused without systemd, which is harmless: dockerd is started below.
    $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
strace -V | head -1

# ---------------------------------------------------------------- the Docker engine
docker_ok() { timeout 10 $SUDO docker info >/dev/null 2>&1; }
log_from=1  # the dockerd log's first line written by this start
show_dockerd_log() {
    echo "ci-setup: ---- errors and last lines of $DOCKERD_LOG (this start) ----" >&2
    { $SUDO tail -n "+$log_from" "$DOCKERD_LOG" | grep -E 'level=(error|fatal)|failed to start' \
        | tail -10
      $SUDO tail -n "+$log_from" "$DOCKERD_LOG" | tail -5; } >&2 || true
}
if ! docker_ok; then
    started=""
    # (no log yet on a fresh machine: 0 lines, not a failed pipeline under pipefail)
    log_from=$(( $( { $SUDO cat "$DOCKERD_LOG" 2>/dev/null || true; } | wc -l) + 1 ))
    if [ -s /var/run/docker.pid ] && $SUDO kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
        echo "ci-setup: dockerd pid $(cat /var/run/docker.pid) runs but does not answer yet; waiting"
    else
        echo "ci-setup: starting dockerd ${DOCKERD_ARGS} (log: $DOCKERD_LOG)"
        # setsid + nohup: detached from this script, it outlives the CI step that started it.
        # shellcheck disable=SC2086
        $SUDO sh -c "exec setsid nohup dockerd $DOCKERD_ARGS >>'$DOCKERD_LOG' 2>&1 </dev/null" &
        [ -n "$SUDO" ] || started=$!  # as root, $! is dockerd itself (sh and setsid exec it)
    fi
    deadline=$(( $(date +%s) + DOCKERD_WAIT ))
    until docker_ok; do
        if [ -n "$started" ] && ! kill -0 "$started" 2>/dev/null; then
            show_dockerd_log
            echo "ci-setup: ERROR: dockerd exited during start-up (see $DOCKERD_LOG)" >&2
            exit 1
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            show_dockerd_log
            echo "ci-setup: ERROR: dockerd did not answer 'docker info' within ${DOCKERD_WAIT}s" \
                "(see $DOCKERD_LOG; try DOCKERD_ARGS='--iptables=false' or '--storage-driver=vfs')" >&2
            exit 1
        fi
        sleep 0.5
    done
fi
$SUDO docker info --format 'docker {{.ServerVersion}}, storage {{.Driver}}, cgroup v{{.CgroupVersion}}'
