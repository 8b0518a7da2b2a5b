#!/bin/sh
# What the test suite needs besides Node and node_modules, checked before `npm test` builds:
#   chromium  /usr/bin/chromium, the browser the Swagger UI and live page tests drive (tests/blackbox/swagger.test.ts, page.test.ts)
#   git       the fixtures are git repositories (tests/helpers/fixture-repo.ts)
#   python3   the Codex configuration is parsed with Python's tomllib (tests/blackbox/launcher.test.ts)
#   setpriv   (util-linux) the harness's parent-death guard on agents (tests/blackbox/harness-orphans.test.ts)
#   unshare   (util-linux) the executor's bash masks protected files in namespaces (tests/unit/executor/bash-floor*.test.ts)
#   nats-server  the NATS broker (JetStream) the federation tests start, kill and restart on loopback ports (tests/blackbox/board-federation.test.ts)
# All present: returns at once, no apt call. Something missing: installs it from Debian's packages
# as root, or through `sudo -n` when that works without a password; otherwise stops at once and
# names the command to run.
set -eu

missing=''
[ -x /usr/bin/chromium ] || missing="$missing chromium"
command -v git >/dev/null 2>&1 || missing="$missing git"
command -v python3 >/dev/null 2>&1 || missing="$missing python3"
command -v setpriv >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 || missing="$missing util-linux"
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing="$missing nats-server"
[ -z "$missing" ] && exit 0
missing=${missing# }

say() { printf 'test prerequisites: %s\n' "$*" >&2; }

install_command="apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing"
if ! command -v apt-get >/dev/null 2>&1; then
  say "missing: $missing. This is not a Debian-like system (no apt-get): install them so that" \
    "/usr/bin/chromium, git, python3 and nats-server exist, then run npm test again."
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  as_root=''
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
  as_root='sudo -n'
else
  say "missing: $missing. Install them as root, then run npm test again:"
  say "  sudo sh -c '$install_command'"
  exit 1
fi

say "missing: $missing; installing from Debian's packages (apt-get)..."
started=$(date +%s)
# Another apt-get (a colleague's test run, unattended upgrades) may hold the lock: wait for it.
$as_root apt-get update -qq -o DPkg::Lock::Timeout=300
# shellcheck disable=SC2086 # $missing is a list of package names
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 $missing >/dev/null
say "installed $missing in $(( $(date +%s) - started )) s"

[ -x /usr/bin/chromium ] || { say 'apt-get finished but /usr/bin/chromium is still missing'; exit 1; }
command -v git >/dev/null 2>&1 || { say 'apt-get finished but git is still missing'; exit 1; }
command -v python3 >/dev/null 2>&1 || { say 'apt-get finished but python3 is still missing'; exit 1; }
command -v setpriv >/dev/null 2>&1 || { say 'apt-get finished but setpriv (util-linux) is still missing'; exit 1; }
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || { say 'apt-get finished but nats-server is still missing'; exit 1; }
exit 0
