#!/bin/sh
# scripts/install.sh: install the `scraper` binary from a release, verified.
#
#   scripts/install.sh [--version V] [--dir DIR] [--build-fallback] [--from-source] [--print-version]
#   curl -fsSL https://raw.githubusercontent.com/scraper-dataset/scraper/main/scripts/install.sh | sh -s -- --dir ~/.local/bin
#
# Picks the release asset for this OS and CPU (Rust target triples):
#   Linux x86_64    x86_64-unknown-linux-musl    static: runs on any Linux, no glibc needed
#   Linux aarch64   aarch64-unknown-linux-musl   static
#   macOS x86_64    x86_64-apple-darwin
#   macOS arm64     aarch64-apple-darwin         (also chosen under Rosetta)
# downloads $SCRAPER_DOWNLOAD_BASE/v<V>/scraper-<V>-<target>.tar.gz and
# $SCRAPER_DOWNLOAD_BASE/v<V>/SHA256SUMS, checks the tarball's SHA-256 against
# its line in SHA256SUMS, checks that the `scraper` at the tarball's root runs
# and says `scraper <V>`, and only then installs it as DIR/scraper (replaced
# in one rename, so a running copy is never half-written).
#
# Options:
#   --version V       the release to install (a leading `v` is dropped); default:
#                     the version in the Cargo.toml next to this script, or
#                     DEFAULT_VERSION below when the script is run from a pipe
#   --dir DIR         where `scraper` goes (created if missing); default $HOME/.local/bin
#   --build-fallback  when there is no release asset for this platform or version
#                     (an unsupported OS or CPU, a 404), or the server cannot be
#                     reached, build from source instead of failing (also:
#                     SCRAPER_BUILD_FALLBACK=1). Without it those cases are errors
#                     that say how to build.
#   --from-source     build from source without trying a download
#   --print-version   print the version that would be installed, and exit
# Building from source means `cargo build --release --locked` in the checkout
# this script lives in when its Cargo.toml is version V (into $CARGO_TARGET_DIR
# when set), else `cargo install --locked --git <repository> --tag v<V>`. It
# needs Rust (https://rustup.rs) and takes minutes.
#
# A tarball whose checksum does not match, or that SHA256SUMS does not list,
# is refused and never a reason to build: nothing is installed.
#
# Environment: SCRAPER_DOWNLOAD_BASE (default: the project's GitHub releases
# download URL, below; tests and mirrors point it elsewhere),
# SCRAPER_BUILD_FALLBACK=1, CARGO_TARGET_DIR.
#
# Exit status: 0 installed; 2 bad usage; 3 verification failed (checksum
# mismatch, asset not in SHA256SUMS, no SHA256SUMS, no runnable `scraper <V>`
# in the tarball); 4 no release asset for this platform or version; 5 the
# download failed (server unreachable, timeout, an HTTP error other than 404);
# 6 the build from source failed; 1 anything else.
# On success one line goes to stdout: `scraper <V> <how> <path>`, where <how>
# is `release-asset` or `built`; everything else goes to stderr.
#
# POSIX sh (dash, macOS's bash 3.2); needs curl or wget, tar, and sha256sum,
# shasum or openssl.

set -eu

DEFAULT_VERSION=0.1.0
REPOSITORY=https://github.com/scraper-dataset/scraper
BASE=${SCRAPER_DOWNLOAD_BASE:-$REPOSITORY/releases/download}
BASE=${BASE%/}

EX_VERIFY=3
EX_MISSING=4
EX_DOWNLOAD=5
EX_BUILD=6

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() {
	code=$1
	shift
	printf 'install.sh: error: %s\n' "$*" >&2
	exit "$code"
}

is_on() {
	case "${1-}" in 1 | true | TRUE | True | yes | on) return 0 ;; *) return 1 ;; esac
}

usage() { die 2 "$* (see --help)"; }

# The checkout this script sits in (empty when run from a pipe or elsewhere).
source_dir() {
	case "$0" in */*) ;; *) return 0 ;; esac
	d=$(cd "$(dirname "$0")/.." 2>/dev/null && pwd -P) || return 0
	if [ -f "$d/Cargo.toml" ] && grep -q '^name = "scraper"' "$d/Cargo.toml"; then
		printf '%s\n' "$d"
	fi
}

# The [package] version of a Cargo.toml.
crate_version() {
	awk '/^\[/ { pkg = ($0 == "[package]") } pkg && /^version *=/ { gsub(/[" ]/, ""); sub(/^version=/, ""); print; exit }' "$1"
}

valid_version() {
	case "$1" in
	"" | *[!0-9A-Za-z.+-]* | [!0-9]*) return 1 ;;
	*.*.*) return 0 ;;
	*) return 1 ;;
	esac
}

# The release target of this machine, or nothing when there is none.
target_triple() {
	os=$(uname -s 2>/dev/null || echo unknown)
	arch=$(uname -m 2>/dev/null || echo unknown)
	case "$arch" in
	x86_64 | amd64) arch=x86_64 ;;
	aarch64 | arm64) arch=aarch64 ;;
	*) return 0 ;;
	esac
	case "$os" in
	Linux) printf '%s-unknown-linux-musl\n' "$arch" ;;
	Darwin)
		# An x86_64 shell under Rosetta on Apple silicon: the native binary is better.
		if [ "$arch" = x86_64 ] && [ "$(sysctl -in sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
			arch=aarch64
		fi
		printf '%s-apple-darwin\n' "$arch"
		;;
	esac
}

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | cut -d' ' -f1
	elif command -v openssl >/dev/null 2>&1; then
		openssl dgst -sha256 -r "$1" | cut -d' ' -f1
	else
		die 1 "no sha256sum, shasum or openssl to check the download with"
	fi
}

# fetch URL FILE: sets FETCHED to ok, missing (404/410) or failed, and
# FETCH_ERR to what went wrong.
fetch() {
	FETCHED=failed
	FETCH_ERR=
	if command -v curl >/dev/null 2>&1; then
		if code=$(curl --silent --show-error --location --retry 2 --connect-timeout 10 --max-time 600 \
			--output "$2" --write-out '%{http_code}' "$1" 2>"$TMP/fetch.err"); then
			case "$code" in
			200) FETCHED=ok ;;
			404 | 410) FETCHED=missing FETCH_ERR="HTTP $code" ;;
			*) FETCH_ERR="HTTP $code" ;;
			esac
		else
			FETCH_ERR=$(tr '\n' ' ' <"$TMP/fetch.err")
		fi
	elif command -v wget >/dev/null 2>&1; then
		if wget --quiet --server-response --tries=3 --timeout=10 -O "$2" "$1" 2>"$TMP/fetch.err"; then
			FETCHED=ok
		else
			code=$(awk '$1 ~ /^HTTP\// { c = $2 } END { print c }' "$TMP/fetch.err")
			case "$code" in
			404 | 410) FETCHED=missing FETCH_ERR="HTTP $code" ;;
			"") FETCH_ERR="wget: cannot connect" ;;
			*) FETCH_ERR="HTTP $code" ;;
			esac
		fi
	else
		die 1 "neither curl nor wget is installed"
	fi
}

# put FILE: install FILE as $DIR/scraper in one rename.
put() {
	mkdir -p "$DIR" || die 1 "cannot create $DIR"
	if ! { cp "$1" "$DIR/.scraper.new.$$" && chmod 755 "$DIR/.scraper.new.$$" &&
		mv -f "$DIR/.scraper.new.$$" "$DIR/scraper"; }; then
		rm -f "$DIR/.scraper.new.$$"
		die 1 "cannot write $DIR/scraper"
	fi
}

# says_version FILE: FILE runs and prints `scraper $VERSION`.
says_version() {
	got=$("$1" --version 2>/dev/null | head -n 1) || got=
	[ "$got" = "scraper $VERSION" ]
}

# The download path; returns 0 when installed, else sets WHY and returns 1
# for the cases --build-fallback covers (the rest exit here).
from_release() {
	if [ -z "$TARGET" ]; then
		WHY="no release asset for this platform ($(uname -s 2>/dev/null) $(uname -m 2>/dev/null))"
		WHY_CODE=$EX_MISSING
		return 1
	fi
	asset=scraper-$VERSION-$TARGET.tar.gz
	url=$BASE/v$VERSION/$asset
	say "downloading $url"
	fetch "$url" "$TMP/$asset"
	case "$FETCHED" in
	missing)
		WHY="no release asset $asset at $url ($FETCH_ERR)"
		WHY_CODE=$EX_MISSING
		return 1
		;;
	failed)
		WHY="cannot download $url: $FETCH_ERR"
		WHY_CODE=$EX_DOWNLOAD
		return 1
		;;
	esac
	fetch "$BASE/v$VERSION/SHA256SUMS" "$TMP/SHA256SUMS"
	case "$FETCHED" in
	missing) die "$EX_VERIFY" "release v$VERSION has no SHA256SUMS ($BASE/v$VERSION/SHA256SUMS: $FETCH_ERR): refusing an unverified binary; nothing installed" ;;
	failed)
		WHY="cannot download $BASE/v$VERSION/SHA256SUMS: $FETCH_ERR"
		WHY_CODE=$EX_DOWNLOAD
		return 1
		;;
	esac
	want=$(awk -v n="$asset" '$2 == n || $2 == "*" n { print tolower($1) }' "$TMP/SHA256SUMS")
	case "$want" in
	"") die "$EX_VERIFY" "SHA256SUMS of v$VERSION does not list $asset: refusing an unverified binary; nothing installed" ;;
	*[!0-9a-f]* | *"
"*) die "$EX_VERIFY" "SHA256SUMS of v$VERSION has a malformed line for $asset; nothing installed" ;;
	esac
	got=$(sha256 "$TMP/$asset")
	if [ "$got" != "$want" ]; then
		die "$EX_VERIFY" "checksum mismatch for $asset: SHA256SUMS says $want, the download is $got. The file was changed or damaged on the way; nothing installed"
	fi
	say "SHA-256 verified: $got"
	mkdir "$TMP/x"
	tar -xzf "$TMP/$asset" -C "$TMP/x" scraper 2>/dev/null ||
		die "$EX_VERIFY" "$asset has no \`scraper\` at its root; nothing installed"
	if [ -h "$TMP/x/scraper" ] || [ ! -f "$TMP/x/scraper" ]; then
		die "$EX_VERIFY" "the \`scraper\` in $asset is not a regular file; nothing installed"
	fi
	chmod 755 "$TMP/x/scraper"
	says_version "$TMP/x/scraper" ||
		die "$EX_VERIFY" "the binary in $asset does not run here or is not scraper $VERSION (it says: ${got:-nothing}); nothing installed"
	put "$TMP/x/scraper"
	printf 'scraper %s release-asset %s\n' "$VERSION" "$DIR/scraper"
}

from_source() {
	command -v cargo >/dev/null 2>&1 ||
		die "$EX_BUILD" "cargo not found: install Rust (https://rustup.rs) to build from source"
	src=$(source_dir)
	if [ -n "$src" ] && [ "$(crate_version "$src/Cargo.toml")" = "$VERSION" ]; then
		target_dir=${CARGO_TARGET_DIR:-$src/target}
		say "building from source: cargo build --release --locked in $src (takes minutes)"
		cargo build --release --locked --manifest-path "$src/Cargo.toml" --target-dir "$target_dir" >&2 ||
			die "$EX_BUILD" "cargo build --release --locked failed; nothing installed"
		bin=$target_dir/release/scraper
	else
		say "building from source: cargo install --locked --git $REPOSITORY --tag v$VERSION (takes minutes)"
		cargo install --locked --quiet --git "$REPOSITORY" --tag "v$VERSION" --root "$TMP/root" scraper >&2 ||
			die "$EX_BUILD" "cargo install of scraper v$VERSION failed; nothing installed"
		bin=$TMP/root/bin/scraper
	fi
	says_version "$bin" || die "$EX_BUILD" "the build did not give scraper $VERSION; nothing installed"
	put "$bin"
	printf 'scraper %s built %s\n' "$VERSION" "$DIR/scraper"
}

main() {
	VERSION=
	DIR=${HOME:-.}/.local/bin
	fallback=
	only_source=
	print_version=
	if is_on "${SCRAPER_BUILD_FALLBACK-}"; then fallback=1; fi
	while [ $# -gt 0 ]; do
		case "$1" in
		--version) [ $# -ge 2 ] || usage "--version needs a value"; VERSION=$2; shift 2 ;;
		--version=*) VERSION=${1#*=}; shift ;;
		--dir) [ $# -ge 2 ] || usage "--dir needs a value"; DIR=$2; shift 2 ;;
		--dir=*) DIR=${1#*=}; shift ;;
		--build-fallback) fallback=1; shift ;;
		--from-source) only_source=1; shift ;;
		--print-version) print_version=1; shift ;;
		-h | --help)
			awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" 2>/dev/null ||
				echo "usage: install.sh [--version V] [--dir DIR] [--build-fallback] [--from-source]"
			exit 0
			;;
		*) usage "unknown argument: $1" ;;
		esac
	done
	if [ -z "$VERSION" ]; then
		src=$(source_dir)
		if [ -n "$src" ]; then VERSION=$(crate_version "$src/Cargo.toml"); else VERSION=$DEFAULT_VERSION; fi
	fi
	VERSION=${VERSION#v}
	valid_version "$VERSION" || usage "--version must look like 1.2.3, got: $VERSION"
	if [ -n "$print_version" ]; then
		printf '%s\n' "$VERSION"
		return
	fi
	[ -n "$DIR" ] || usage "--dir must not be empty"
	TARGET=$(target_triple)
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/scraper-install.XXXXXX") || die 1 "cannot make a temporary folder"
	trap 'rm -rf "$TMP"' EXIT
	trap 'exit 130' INT TERM
	if [ -n "$only_source" ]; then
		from_source
		return
	fi
	if from_release; then return; fi
	if [ -z "$fallback" ]; then
		die "$WHY_CODE" "$WHY. Nothing installed. To build from source instead (needs Rust, takes minutes), run again with --build-fallback"
	fi
	say "$WHY: falling back to a build from source (--build-fallback)"
	from_source
}

main "$@"
