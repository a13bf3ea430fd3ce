#!/bin/sh
# Installs the Debian packages driple needs (as root), or names them (otherwise, or with --check).
PKGS="build-essential pkg-config libcjson-dev libgraphviz-dev libncurses-dev libopenblas-dev tmux graphviz"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && { echo "deps: all installed"; exit 0; }
if [ "$1" = "--check" ] || [ "$(id -u)" != 0 ]; then
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: install them with: sudo apt-get install -y$missing   (or run 'make deps' as root)" >&2
    exit 1
fi
apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $missing
