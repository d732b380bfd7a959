#!/bin/sh
# sluice installer: downloads sluice and sluice-agent for this machine, checks their SHA-256 against
# the release's checksums.txt, and installs them into ~/.local/bin. No root needed.
#
#   curl -fsSL https://github.com/sluice-dev/sluice/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- --agent       # and run sluice as your own service
#
# Options:
#   --agent          also run `sluice-agent install` (systemd user unit / launchd LaunchAgent)
#   --prefix DIR     install into DIR/bin instead of ~/.local/bin
#   --version V      install release V (e.g. 1.2.3) instead of the latest
#   --uninstall      remove the service and both binaries (configuration and data are kept)
#   --help
# Environment:
#   SLUICE_INSTALL_BASE   the URL of the release files (a mirror, a local test server); with
#                         --version, the installed binary must report that version
#
# Nothing is installed unless every file's SHA-256 matches its line in checksums.txt and each
# binary, once in place, reports that same hash as its build_id. Running it again is harmless.
set -eu

REPO_URL="https://github.com/sluice-dev/sluice"
PROGRAMS="sluice sluice-agent"

say() { printf 'sluice install: %s\n' "$*" >&2; }
die() {
  printf 'sluice install: error: %s\n' "$*" >&2
  exit 1
}
usage() {
  cat >&2 <<'EOF'
usage: install.sh [--agent] [--prefix DIR] [--version V] [--uninstall]
  curl -fsSL https://github.com/sluice-dev/sluice/releases/latest/download/install.sh | sh -s -- [options]

  --agent          also run `sluice-agent install` (systemd user unit / launchd LaunchAgent)
  --prefix DIR     install into DIR/bin instead of ~/.local/bin
  --version V      install release V (e.g. 1.2.3) instead of the latest
  --uninstall      remove the service and both binaries (configuration and data are kept)
SLUICE_INSTALL_BASE=URL downloads the release files from URL instead (a mirror, a test server).
EOF
}

agent=0
prefix=""
version=""
uninstall=0
while [ $# -gt 0 ]; do
  case "$1" in
    --agent) agent=1 ;;
    --uninstall) uninstall=1 ;;
    --prefix)
      [ $# -ge 2 ] || die "--prefix needs a directory"
      prefix=$2
      shift
      ;;
    --prefix=*) prefix=${1#--prefix=} ;;
    --version)
      [ $# -ge 2 ] || die "--version needs a version, e.g. --version 1.2.3"
      version=$2
      shift
      ;;
    --version=*) version=${1#--version=} ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
  shift
done
version=${version#v}

if [ -n "$prefix" ]; then
  case "$prefix" in
    /*) ;;
    *) prefix="$(pwd)/$prefix" ;;
  esac
  bindir="$prefix/bin"
else
  [ -n "${HOME:-}" ] || die "HOME is not set: use --prefix DIR"
  bindir="$HOME/.local/bin"
fi

# --- uninstall: the service first (the agent knows how), then the binaries ----------------------
if [ "$uninstall" = 1 ]; then
  found=0
  if [ -x "$bindir/sluice-agent" ]; then
    found=1
    "$bindir/sluice-agent" uninstall >&2 || say "warning: sluice-agent uninstall failed; removing the binaries anyway"
  fi
  for p in $PROGRAMS; do
    if [ -e "$bindir/$p" ]; then
      found=1
      rm -f "$bindir/$p"
      say "removed $bindir/$p"
    fi
  done
  if [ "$found" = 0 ]; then
    say "sluice is not installed in $bindir: nothing to remove"
  else
    say "your configuration and data (~/.config/sluice, or \$SLUICE_HOME) are kept; delete that directory to remove them"
  fi
  exit 0
fi

# --- which binary this machine needs ------------------------------------------------------------
os=$(uname -s)
arch=$(uname -m)
case "$arch" in
  x86_64 | amd64) arch=x86_64 ;;
  arm64 | aarch64) arch=aarch64 ;;
esac
case "$os" in
  Darwin)
    # A shell under Rosetta reports x86_64 on Apple silicon: the native binary is the right one.
    if [ "$arch" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
      arch=aarch64
    fi
    case "$arch" in
      x86_64 | aarch64) triple="$arch-apple-darwin" ;;
      *) die "no sluice binary for macOS on $arch (shipped: x86_64, arm64)" ;;
    esac
    ;;
  Linux)
    case "$arch" in
      x86_64) triple="x86_64-unknown-linux-gnu" ;;
      aarch64) die "no sluice binary is shipped for Linux on aarch64 (arm64). Run sluice from source (the first line of the README) or use the container image, which is built for linux/arm64" ;;
      *) die "no sluice binary for Linux on $arch (shipped: x86_64)" ;;
    esac
    if ldd --version 2>&1 | grep -qi musl; then
      die "this Linux uses musl libc; the sluice binary needs glibc. Run sluice from source or use the container image"
    fi
    ;;
  *) die "no sluice binary for $os (shipped: Linux x86_64, macOS x86_64 and arm64)" ;;
esac

# --- tools --------------------------------------------------------------------------------------
if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL --connect-timeout 15 --retry 2 -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q -T 15 -O "$2" "$1"; }
else
  die "neither curl nor wget is installed"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
  die "neither sha256sum nor shasum is installed: cannot check the download"
fi

if [ -n "${SLUICE_INSTALL_BASE:-}" ]; then
  base=${SLUICE_INSTALL_BASE%/}
elif [ -n "$version" ]; then
  base="$REPO_URL/releases/download/v$version"
else
  base="$REPO_URL/releases/latest/download"
fi
# The checksums come from the same place as the binaries: only TLS keeps a network from swapping both.
case "$base" in
  https://*) ;;
  http://127.0.0.1[:/]* | http://localhost[:/]* | http://\[::1\][:/]*) ;;
  *) die "refusing to download from $base: use an https:// URL" ;;
esac

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t sluice-install)
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

say "downloading sluice for $triple from $base"
fetch "$base/checksums.txt" "$tmp/checksums.txt" ||
  die "cannot download $base/checksums.txt (is the address right? set SLUICE_INSTALL_BASE or --version); nothing was installed"

# --- verify every download before installing anything -------------------------------------------
for p in $PROGRAMS; do
  file="$p-$triple"
  expected=$(awk -v f="$file" '$2 == f || $2 == "*" f { print $1; n++ } END { if (n != 1) exit 1 }' "$tmp/checksums.txt") ||
    die "checksums.txt has no line (or more than one) for $file; refusing to install. Nothing was installed"
  case "$expected" in
    *[!0-9a-f]*) die "checksums.txt line for $file is not a SHA-256: $expected; nothing was installed" ;;
  esac
  [ ${#expected} -eq 64 ] || die "checksums.txt line for $file is not a SHA-256: $expected; nothing was installed"
  fetch "$base/$file" "$tmp/$file" || die "cannot download $base/$file; nothing was installed"
  actual=$(sha256 "$tmp/$file")
  [ "$actual" = "$expected" ] ||
    die "checksum mismatch for $file: checksums.txt says $expected, the download is $actual. Refusing to install; nothing was installed"
  printf '%s\n' "$expected" >"$tmp/$p.sha256"
done
say "SHA-256 of both binaries matches checksums.txt"

# --- stage beside the destination, check what each binary reports, then move into place ---------
mkdir -p "$bindir" || die "cannot create $bindir"
staged=""
unstage() { for f in $staged; do rm -f "$f"; done; }
changed=0
for p in $PROGRAMS; do
  file="$p-$triple"
  expected=$(cat "$tmp/$p.sha256")
  if [ -f "$bindir/$p" ] && [ "$(sha256 "$bindir/$p")" = "$expected" ]; then
    continue
  fi
  new="$bindir/.$p.new.$$"
  if ! { cp "$tmp/$file" "$new" && chmod 755 "$new"; }; then
    unstage
    die "cannot write to $bindir"
  fi
  staged="$staged $new"
  info=$("$new" version 2>&1) || {
    unstage
    die "$file does not run on this machine: $info"
  }
  reported=$(printf '%s\n' "$info" | sed -n 's/.*"build_id": *"sha256:\([0-9a-f]*\)".*/\1/p')
  if [ "$reported" != "$expected" ]; then
    unstage
    die "$file reports build_id sha256:$reported, checksums.txt says $expected; nothing was installed"
  fi
  if [ -n "$version" ]; then
    got=$(printf '%s\n' "$info" | sed -n 's/.*"version": *"\([^"]*\)".*/\1/p')
    if [ "$got" != "$version" ]; then
      unstage
      die "$base holds sluice $got, not $version; nothing was installed"
    fi
  fi
  changed=1
done
for p in $PROGRAMS; do
  new="$bindir/.$p.new.$$"
  if [ -f "$new" ]; then mv -f "$new" "$bindir/$p"; fi
done
installed_version=$("$bindir/sluice" version | sed -n 's/.*"version": *"\([^"]*\)".*/\1/p')
if [ "$changed" = 1 ]; then
  say "installed sluice $installed_version into $bindir (sluice, sluice-agent); each reports the build_id in checksums.txt"
else
  say "sluice $installed_version is already installed in $bindir and matches checksums.txt"
fi

# --- the service: on --agent, and after an upgrade of an installed service ----------------------
service_file=""
case "$os" in
  Linux) service_file="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user/sluice-agent.service" ;;
  Darwin) service_file="$HOME/Library/LaunchAgents/dev.sluice.agent.plist" ;;
esac
if [ "$agent" = 1 ] || { [ "$changed" = 1 ] && [ -f "$service_file" ]; }; then
  "$bindir/sluice-agent" install >&2 ||
    die "the binaries are installed, but the service is not: see above. You can run it in the foreground: $bindir/sluice-agent run"
fi

case ":$PATH:" in
  *":$bindir:"*) ;;
  *) say "$bindir is not on your PATH; add it: export PATH=\"$bindir:\$PATH\"" ;;
esac
if [ "$agent" = 1 ]; then
  say "done: sluice runs as your service (sluice-agent status). Point your tools at http://127.0.0.1:8080"
else
  say "done: start it with \`sluice serve\`, or as a service with \`sluice-agent install\`"
fi
