#!/usr/bin/env bash
# Checks that the commands a make target needs are installed, and installs the missing ones
# where that is safe to do unasked: as root, with apt (a container, a CI machine). Anywhere
# else it stops with the one command that installs them, and installs nothing.
#
#   mk/tools.sh [--install] WHAT TOOL...
#
# WHAT names the target for the messages ("make test"). Each TOOL is
# COMMAND:DEBIAN-PACKAGE:HOMEBREW-FORMULA; a COMMAND with a '/' is a file pattern (Debian
# keeps initdb off PATH), also looked for by its base name on PATH; a formula of "-" marks a
# tool that only Linux has (not required on macOS, where the tests that need it fail).
# --install (make deps) installs through sudo when not root, as asked.
#
# NODE_MIN, when set, is the oldest Node.js the target accepts (clients/typescript's
# package.json "engines"); an older node is reported with where to get a newer one.
set -euo pipefail

install=0
if [ "${1:-}" = --install ]; then
  install=1
  shift
fi
what=$1
shift

have() {
  local c=$1
  command -v "$c" >/dev/null 2>&1 && return 0
  case $c in
  */*) compgen -G "$c" >/dev/null || command -v "${c##*/}" >/dev/null 2>&1 ;;
  *) return 1 ;;
  esac
}

darwin=0
[ "$(uname -s)" = Darwin ] && darwin=1

missing=() pkgs=() brews=()
for t in "$@"; do
  IFS=: read -r cmd pkg brew <<<"$t"
  [ "$darwin" = 1 ] && [ "$brew" = - ] && continue
  have "$cmd" && continue
  missing+=("${cmd##*/}")
  [[ " ${pkgs[*]} " == *" $pkg "* ]] || pkgs+=("$pkg")
  [[ " ${brews[*]} " == *" $brew "* ]] || brews+=("$brew")
done

# node_too_old prints why the node on PATH is older than NODE_MIN; silent when it is not.
node_too_old() {
  [ -n "${NODE_MIN:-}" ] && command -v node >/dev/null 2>&1 || return 1
  local have want
  have=$(node -p 'process.versions.node' 2>/dev/null) || return 1
  want=$NODE_MIN
  # sort -V puts the older first: when that is not want, node is older.
  [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" = "$want" ] && return 1
  echo "$what needs Node.js $want or later (clients/typescript/package.json \"engines\"); this machine has $have."
  echo "Install a newer one from https://nodejs.org/en/download (Debian 12 and Ubuntu 24.04 package Node.js 18;"
  echo "NodeSource's nodejs package or nvm give 20 or later), then run $what again."
}

root=0
[ "$(id -u)" = 0 ] && root=1
apt=0
command -v apt-get >/dev/null 2>&1 && [ "$darwin" = 0 ] && apt=1

if [ "${#missing[@]}" -eq 0 ]; then
  if node_too_old; then exit 1; fi
  exit 0
fi

if [ "$apt" = 1 ] && { [ "$root" = 1 ] || [ "$install" = 1 ]; }; then
  sudo=""
  [ "$root" = 1 ] || sudo="sudo "
  echo "$what: this machine lacks ${missing[*]}; installing them: ${sudo}apt-get install -y --no-install-recommends ${pkgs[*]}"
  ${sudo}apt-get update -qq
  # A distribution whose nodejs is older than NODE_MIN (Debian 12: 18) cannot help: install
  # the rest, and say where a newer Node.js comes from rather than install an old one.
  if [[ " ${pkgs[*]} " == *" nodejs "* ]] && [ -n "${NODE_MIN:-}" ]; then
    cand=$(apt-cache policy nodejs | sed -n 's/^ *Candidate: *\([0-9.]*\).*/\1/p')
    if [ -z "$cand" ] || [ "$(printf '%s\n%s\n' "$NODE_MIN" "$cand" | sort -V | head -1)" != "$NODE_MIN" ]; then
      echo "$what: apt offers Node.js ${cand:-none}, older than the $NODE_MIN it needs: not installing nodejs and npm from apt"
      keep=()
      for p in "${pkgs[@]}"; do [ "$p" = nodejs ] || [ "$p" = npm ] || keep+=("$p"); done
      pkgs=("${keep[@]}")
    fi
  fi
  if [ "${#pkgs[@]}" -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive ${sudo}apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  fi
  still=()
  for t in "$@"; do
    IFS=: read -r cmd _ _ <<<"$t"
    have "$cmd" || still+=("${cmd##*/}")
  done
  if [ "${#still[@]}" -gt 0 ]; then
    echo "$what: still missing after apt-get install: ${still[*]}"
    if [[ " ${still[*]} " == *" node "* ]] && [ -n "${NODE_MIN:-}" ]; then
      echo "Install Node.js $NODE_MIN or later from https://nodejs.org/en/download (NodeSource's nodejs package or nvm), then run $what again."
    fi
    exit 1
  fi
  echo "$what: installed ${pkgs[*]}"
  if node_too_old; then exit 1; fi
  exit 0
fi

echo "$what needs ${missing[*]}, which this machine lacks. Install them with:"
echo
if [ "$darwin" = 1 ]; then
  echo "    brew install ${brews[*]}"
  echo
  echo "(see README.md, \"Set up\", for what macOS needs besides)"
elif [ "$apt" = 1 ]; then
  echo "    sudo apt-get install -y --no-install-recommends ${pkgs[*]}"
  echo
  echo "(as root, $what installs them itself; make deps runs this command)"
else
  echo "    apt-get install -y --no-install-recommends ${pkgs[*]}"
  echo
  echo "(the Debian package names; this machine has no apt-get: install the same tools from its packages)"
fi
exit 1
