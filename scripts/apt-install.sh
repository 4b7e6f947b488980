#!/usr/bin/env bash
# Install the Debian packages named as arguments that are not installed yet (root or sudo).
set -euo pipefail
# installed means "install ok installed": a package removed with its configuration kept is listed by dpkg -s too
missing=$(for p in "$@"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || echo "$p"; done)
[ -z "$missing" ] && exit 0
sudo_=""; [ "$(id -u)" = 0 ] || sudo_="sudo"
echo "installing Debian packages: $missing" >&2
# make setup runs its steps side by side: one apt-get at a time (apt-get fails on a held lock instead of waiting)
exec 9<"$0"
flock 9
$sudo_ apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq $missing >/dev/null
