#!/usr/bin/env bash
# scripts/install.sh against a fake release served from 127.0.0.1 (tarballs of
# a stand-in binary for every target, SHA256SUMS): the asset for this machine
# without cargo, then a tampered checksum, a missing asset and an unreachable
# server, each a clear error, and the build fallback only when asked for.
# Run with /bin/sh (dash on Debian), as the one-line install runs it.
set -u
# shellcheck source=tests/scripts/lib.sh
. "$(dirname "$0")/lib.sh"

INSTALL=$ROOT/scripts/install.sh
REL=$T/rel
fake_release "$REL" "$VERSION"
fake_release "$REL" 0.2.0
serve "$REL" "$T/requests"
BASE=$URL
TARGET=$(this_target)

# A cargo that records that it was called and then fails, first on PATH:
# an install that never calls it leaves no record.
SHIM=$T/shim
mkdir -p "$SHIM"
cat >"$SHIM/cargo" <<SH
#!/bin/sh
printf '%s\n' "\$*" >>"$T/cargo-called"
exit 101
SH
chmod +x "$SHIM/cargo"
cargo_called() { [ -e "$T/cargo-called" ]; }
no_cargo() { [ ! -e "$T/cargo-called" ]; }

# inst NAME [env VAR=value ...] -- ARGS: run the installer; stdout, stderr and
# status in $T/NAME.out, $T/NAME.err, $RC; seconds taken in $SECS.
inst() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	rm -f "$T/cargo-called"
	local t0 t1
	t0=$(date +%s.%N)
	RC=0
	env PATH="$SHIM:$PATH" SCRAPER_DOWNLOAD_BASE="$BASE" CARGO_TARGET_DIR="$T/target" "${envs[@]}" \
		sh "$INSTALL" "$@" >"$T/$name.out" 2>"$T/$name.err" </dev/null || RC=$?
	t1=$(date +%s.%N)
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}
err_says() { grep -q -e "$2" "$T/$1.err"; }

# --- 1. the asset for this machine, no cargo, under 10 s
inst right -- --dir "$T/bin"
check "install succeeds (rc $RC): $(cat "$T/right.err")" [ "$RC" -eq 0 ] &&
	check "stdout names version, source and path" [ "$(cat "$T/right.out")" = "scraper $VERSION release-asset $T/bin/scraper" ] &&
	check "installed binary is this machine's ($TARGET)" [ "$("$T/bin/scraper" which-target)" = "$TARGET" ] &&
	check "default version is the crate's" [ "$("$T/bin/scraper" --version)" = "scraper $VERSION" ] &&
	check "fetched the asset from v<V>/" grep -q " GET /v$VERSION/scraper-$VERSION-$TARGET.tar.gz$" "$T/requests" &&
	check "and SHA256SUMS" grep -q " GET /v$VERSION/SHA256SUMS$" "$T/requests" &&
	check "cargo never called" no_cargo &&
	check "under 10 s (took $SECS s)" awk -v s="$SECS" 'BEGIN { exit !(s < 10) }' &&
	ok "installs $TARGET from the fake release, verified, without cargo, in $SECS s"
check "no temporary file left in the folder" [ "$(find "$T/bin" -name '.scraper*' | wc -l)" -eq 0 ] &&
	ok "the folder holds only the installed binary"

inst other -- --version v0.2.0 --dir "$T/bin"
check "--version v0.2.0 (rc $RC)" [ "$RC" -eq 0 ] &&
	check "replaced by 0.2.0" [ "$("$T/bin/scraper" --version)" = "scraper 0.2.0" ] &&
	ok "--version picks the release (a leading v is dropped) and replaces the installed binary"

# The one-line install: the script from a pipe, no checkout next to it.
RC=0
(cd "$T" && PATH="$SHIM:$PATH" SCRAPER_DOWNLOAD_BASE="$BASE" sh -s -- --dir "$T/piped" <"$INSTALL") >"$T/pipe.out" 2>"$T/pipe.err" || RC=$?
check "piped install (rc $RC): $(cat "$T/pipe.err")" [ "$RC" -eq 0 ] &&
	check "piped default version is the crate's (DEFAULT_VERSION kept in step with Cargo.toml)" [ "$("$T/piped/scraper" --version)" = "scraper $VERSION" ] &&
	ok "curl ... | sh -s -- --dir DIR installs the default version"

# --- 2. a tampered tarball: refused, nothing installed, never a reason to build
TAMPERED=$T/tampered
cp -R "$REL" "$TAMPERED"
printf 'extra' >>"$TAMPERED/v$VERSION/scraper-$VERSION-$TARGET.tar.gz"
BASE_OK=$BASE
serve "$TAMPERED"
BASE=$URL
inst tamper -- --dir "$T/tampered-bin" --build-fallback
check "tampered: exit 3 (got $RC)" [ "$RC" -eq 3 ] &&
	check "says checksum mismatch" err_says tamper "checksum mismatch for scraper-$VERSION-$TARGET.tar.gz" &&
	check "nothing installed" [ ! -e "$T/tampered-bin/scraper" ] &&
	check "no build even with --build-fallback" no_cargo &&
	ok "a tarball that does not match SHA256SUMS is refused (exit 3): $(grep -m 1 "error:" "$T/tamper.err")"
grep -v "$TARGET" "$REL/v$VERSION/SHA256SUMS" >"$TAMPERED/v$VERSION/SHA256SUMS"
cp "$REL/v$VERSION/scraper-$VERSION-$TARGET.tar.gz" "$TAMPERED/v$VERSION/"
inst unlisted -- --dir "$T/tampered-bin"
check "unlisted: exit 3 (got $RC)" [ "$RC" -eq 3 ] && check "says not listed" err_says unlisted "does not list" &&
	check "nothing installed" [ ! -e "$T/tampered-bin/scraper" ] &&
	ok "an asset SHA256SUMS does not list is refused"

# --- 3. no asset for this platform or version
rm "$TAMPERED/v$VERSION/scraper-$VERSION-$TARGET.tar.gz"
cp "$REL/v$VERSION/SHA256SUMS" "$TAMPERED/v$VERSION/SHA256SUMS"
inst missing -- --dir "$T/missing-bin"
check "missing: exit 4 (got $RC)" [ "$RC" -eq 4 ] &&
	check "says which asset is missing" err_says missing "no release asset scraper-$VERSION-$TARGET.tar.gz" &&
	check "says how to build instead" err_says missing "run again with --build-fallback" &&
	check "no build unless asked" no_cargo &&
	ok "a missing asset is a clear error (exit 4) and builds nothing: $(grep -m 1 "error:" "$T/missing.err")"
inst noversion -- --version 9.9.9 --dir "$T/missing-bin"
check "unknown version: exit 4 (got $RC)" [ "$RC" -eq 4 ] && check "names the version" err_says noversion "scraper-9.9.9-$TARGET" &&
	ok "a version that was never released is a missing asset too"
inst fallback -- --dir "$T/missing-bin" --build-fallback
check "fallback asked: cargo called" cargo_called &&
	check "with cargo build --release --locked" grep -q "^build --release --locked --manifest-path $ROOT/Cargo.toml --target-dir $T/target$" "$T/cargo-called" &&
	check "says it builds" err_says fallback "falling back to a build from source" &&
	check "the shim's failure is exit 6 (got $RC)" [ "$RC" -eq 6 ] &&
	ok "--build-fallback builds from source with cargo build --release --locked when no asset exists"

# A cargo that builds: the fallback installs what it built and says so.
cat >"$SHIM/cargo" <<SH
#!/bin/sh
printf '%s\n' "\$*" >>"$T/cargo-called"
while [ \$# -gt 0 ]; do case "\$1" in --target-dir) dir=\$2; shift 2 ;; *) shift ;; esac; done
mkdir -p "\$dir/release"
printf '#!/bin/sh\necho "scraper $VERSION"\n' >"\$dir/release/scraper"
chmod +x "\$dir/release/scraper"
SH
inst built env SCRAPER_BUILD_FALLBACK=1 -- --dir "$T/missing-bin"
check "built (rc $RC): $(cat "$T/built.err")" [ "$RC" -eq 0 ] &&
	check "stdout says built" [ "$(cat "$T/built.out")" = "scraper $VERSION built $T/missing-bin/scraper" ] &&
	check "installed" [ "$("$T/missing-bin/scraper" --version)" = "scraper $VERSION" ] &&
	ok "SCRAPER_BUILD_FALLBACK=1 does the same as --build-fallback and installs the build"

# --- 4. an unreachable server
BASE=http://127.0.0.1:$(closed_port)
inst down -- --dir "$T/down-bin"
check "unreachable: exit 5 (got $RC)" [ "$RC" -eq 5 ] &&
	check "says it cannot download" err_says down "cannot download $BASE/v$VERSION/" &&
	check "says how to build instead" err_says down "run again with --build-fallback" &&
	check "nothing installed" [ ! -e "$T/down-bin/scraper" ] &&
	check "no build unless asked" no_cargo &&
	check "fails fast (took $SECS s)" awk -v s="$SECS" 'BEGIN { exit !(s < 10) }' &&
	ok "an unreachable server is a clear error (exit 5): $(grep -m 1 "error:" "$T/down.err" | cut -c1-160)"
inst downfb -- --dir "$T/down-bin" --build-fallback
check "unreachable with fallback (rc $RC)" [ "$RC" -eq 0 ] && check "built" cargo_called &&
	ok "with --build-fallback an unreachable server falls back to building"

# --- 5. bad usage
BASE=$BASE_OK
inst bad -- --version '1.0; touch /tmp/pwned'
check "bad version: exit 2 (got $RC)" [ "$RC" -eq 2 ] && check "nothing ran" [ ! -e /tmp/pwned ] &&
	inst bad2 -- --frobnicate && check "unknown option: exit 2" [ "$RC" -eq 2 ] &&
	ok "a malformed version or an unknown option is a usage error (exit 2)"

summary
