#!/usr/bin/env bash
# Upload what changed in the built dataset (dist/: README.md card,
# build.json, data/*.parquet, index/) to the Hugging Face Hub with the Hub's
# own command-line tool, then tag the new revision with the build date, so
# consumers can pin it (`load_dataset(repo, revision="2026-12-01")`).
#
# Only files whose bytes changed go: dist/manifest.sha256 lists every file's
# SHA-256; the manifest of the last publish (fetched from the Hub, or
# $PREVIOUS_MANIFEST, or the copy kept in dist/.published/) says what the Hub
# holds already. The changed files and the new manifest are uploaded in one
# commit that also deletes the files no longer built:
#
#   hf upload <repo> <staging> . --repo-type dataset [--delete <gone file>]...
#   hf repos tag create <repo> <build date> --repo-type dataset
#
# The commit message and the script's output give the day's changes from
# build.json (rows added, updated, withdrawn) and the bytes uploaded.
#
# The tag is the `revision` in dist/build.json (the build's UTC date); when a
# build of the same day was already published, the next free of `<date>.2`,
# `<date>.3`, ... is used.
#
#   scripts/publish.sh fetch
# fetches the last publish's manifest and index/ (the near-duplicate index
# and the published ids, which `scraper build` reads from dist/index/) into
# dist before a build; nothing when the repo has none yet.
#
# Settings (environment):
#   HF_TOKEN   access token with write access (required unless DRY_RUN=1)
#   HF_REPO    dataset repo id, e.g. user/ai-news; default: `dataset.hub_repo`
#              in $SCRAPER_CONFIG (default config.yml)
#   DIST       folder to upload (default dist)
#   PREVIOUS_MANIFEST  the last publish's manifest.sha256 (default: fetched)
#   DRY_RUN=1  list what would be uploaded and the command, upload nothing
#
# Bash 3.2 compatible (macOS /bin/bash).
set -euo pipefail

dist="${DIST:-dist}"
config="${SCRAPER_CONFIG:-config.yml}"
dry_run="${DRY_RUN:-0}"
mode="${1:-publish}"

die() {
  echo "publish: $*" >&2
  exit 1
}

# The `hub_repo:` value inside the top-level `dataset:` block of the config.
repo_from_config() {
  [ -f "$config" ] || return 0
  awk '
    /^[^[:space:]#]/ { in_dataset = ($0 ~ /^dataset:/) }
    in_dataset && /^[[:space:]]+hub_repo:/ {
      sub(/^[[:space:]]+hub_repo:[[:space:]]*/, "")
      sub(/[[:space:]]+#.*$/, "")
      gsub(/^["'\'']|["'\'']$/, "")
      print
      exit
    }
  ' "$config"
}

repo="${HF_REPO:-}"
if [ -z "$repo" ]; then
  repo="$(repo_from_config)"
fi
[ -n "$repo" ] || die "no repo: set HF_REPO or dataset.hub_repo in $config"
case "$repo" in
  */*) ;;
  *) die "repo '$repo' should look like owner/name" ;;
esac

hf_cli() {
  if command -v hf >/dev/null 2>&1; then
    echo hf
  elif command -v huggingface-cli >/dev/null 2>&1; then
    echo huggingface-cli
  else
    die "the Hub CLI is missing: pip install -U huggingface_hub"
  fi
}

if [ "$mode" = fetch ]; then
  mkdir -p "$dist"
  hf_cmd="$(hf_cli)"
  if "$hf_cmd" download "$repo" manifest.sha256 --include 'index/*' --repo-type dataset \
    --local-dir "$dist" >/dev/null 2>&1 && [ -f "$dist/manifest.sha256" ]; then
    mkdir -p "$dist/.published"
    mv "$dist/manifest.sha256" "$dist/.published/manifest.sha256"
    echo "publish: fetched the last publish's manifest and index/ of datasets/$repo into $dist"
  else
    echo "publish: datasets/$repo has no manifest yet: the next publish uploads every file"
  fi
  exit 0
fi
[ "$mode" = publish ] || die "unknown command '$mode' (publish or fetch)"

[ -d "$dist" ] || die "$dist not found: run \`scraper build\` first"
[ -f "$dist/README.md" ] || die "$dist/README.md (the dataset card) is missing: run \`scraper build\`"
# Parquet files only: never a half-written .tmp from a crashed build.
parquet_count=0
for f in "$dist"/data/train-*.parquet; do
  [ -f "$f" ] && parquet_count=$((parquet_count + 1))
done
[ "$parquet_count" -gt 0 ] || die "no $dist/data/train-*.parquet: run \`scraper build\`"
[ -f "$dist/build.json" ] || die "$dist/build.json is missing: run \`scraper build\`"
# The build date, from the `"revision": "yyyy-mm-dd",` line of build.json.
revision="$(sed -n 's/^ *"revision": *"\([0-9-]*\)",*$/\1/p' "$dist/build.json" | head -n 1)"
case "$revision" in
  [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ;;
  *) die "no build date (\"revision\") in $dist/build.json: run \`scraper build\`" ;;
esac

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# The manifest of this build: "<sha256>  <size>  <path>" per file, sorted.
(cd "$dist" && find . -type f ! -name '*.tmp' ! -name manifest.sha256 ! -path './.published/*' |
  LC_ALL=C sort | while IFS= read -r f; do
  printf '%s  %s  %s\n' "$(sha256 "$f")" "$(wc -c <"$f" | tr -d ' ')" "${f#./}"
done) >"$dist/manifest.sha256"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
previous="${PREVIOUS_MANIFEST:-}"
if [ -z "$previous" ] && [ "$dry_run" != "1" ] && [ -n "${HF_TOKEN:-}" ]; then
  "$(hf_cli)" download "$repo" manifest.sha256 --repo-type dataset --local-dir "$work/prev" \
    >/dev/null 2>&1 && previous="$work/prev/manifest.sha256"
fi
if [ -z "$previous" ] && [ -f "$dist/.published/manifest.sha256" ]; then
  previous="$dist/.published/manifest.sha256"
fi
[ -n "$previous" ] && [ -f "$previous" ] || previous=/dev/null

# Changed (or new) files, and files the last publish had that this build lacks.
# (FILENAME, not NR == FNR: the first file may be empty.)
awk 'FILENAME == ARGV[1] { old[$3] = $1; next } old[$3] != $1 { print $3 }' "$previous" "$dist/manifest.sha256" >"$work/changed"
awk 'FILENAME == ARGV[1] { now[$3] = 1; next } !($3 in now) { print $3 }' "$dist/manifest.sha256" "$previous" >"$work/gone"
echo manifest.sha256 >>"$work/changed"
files_total=$(wc -l <"$dist/manifest.sha256" | tr -d ' ')
files_changed=$(($(wc -l <"$work/changed" | tr -d ' ') - 1))
bytes_total=$(awk '{ s += $2 } END { print s + 0 }' "$dist/manifest.sha256")
bytes_changed=$(awk 'FILENAME == ARGV[1] { c[$1] = 1; next } ($3 in c) { s += $2 } END { print s + 0 }' "$work/changed" "$dist/manifest.sha256")
gone_count=$(wc -l <"$work/gone" | tr -d ' ')

# The day's changes, from build.json's "changes" block (zeros on a first build).
change() {
  sed -n "s/^ *\"$1\": *\([0-9]*\),*$/\1/p" "$dist/build.json" | head -n 1
}
added="$(change added)"
updated="$(change updated)"
withdrawn="$(change withdrawn)"
summary="+${added:-0} rows, ${updated:-0} updated, ${withdrawn:-0} withdrawn"
echo "publish: $files_changed of $files_total files changed ($bytes_changed of $bytes_total bytes), $gone_count to delete; $summary"

# The upload: changed files (hard links, else copies) and the new manifest.
stage="$work/stage"
while IFS= read -r f; do
  mkdir -p "$stage/$(dirname "$f")"
  ln "$dist/$f" "$stage/$f" 2>/dev/null || cp "$dist/$f" "$stage/$f"
done <"$work/changed"
set -- --repo-type dataset
while IFS= read -r f; do
  set -- "$@" --delete "$f"
done <"$work/gone"

if [ "$dry_run" = "1" ]; then
  echo "publish: dry run; would upload to https://huggingface.co/datasets/$repo:"
  while IFS= read -r f; do
    printf '  %s (%s bytes)\n' "$f" "$(wc -c <"$dist/$f" | tr -d ' ')"
  done <"$work/changed"
  while IFS= read -r f; do
    printf '  delete %s\n' "$f"
  done <"$work/gone"
  echo "publish: command: hf upload $repo <the files above> . $*"
  echo "publish: would tag the new revision $revision (or $revision.2, ... when taken)"
  echo "publish: command: hf repos tag create $repo $revision --repo-type dataset"
  exit 0
fi

[ -n "${HF_TOKEN:-}" ] || die "HF_TOKEN is not set (a token with write access to $repo)"
export HF_TOKEN
hf_cmd="$(hf_cli)"

echo "publish: uploading $files_changed changed files ($bytes_changed bytes) to datasets/$repo"
"$hf_cmd" upload "$repo" "$stage" . "$@" \
  --commit-message "Dataset build $revision: $summary ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
mkdir -p "$dist/.published"
cp "$dist/manifest.sha256" "$dist/.published/manifest.sha256"

# Tag what was just uploaded (the head of main). The tag command moved between
# huggingface_hub versions: `hf repos tag create` (current), `hf repo tag
# create`, `huggingface-cli tag`.
create_tag() {
  if [ "$hf_cmd" = hf ] && hf repos tag create --help >/dev/null 2>&1; then
    hf repos tag create "$repo" "$1" --repo-type dataset -m "Dataset build $1"
  elif [ "$hf_cmd" = hf ]; then
    hf repo tag create "$repo" "$1" --repo-type dataset -m "Dataset build $1"
  else
    huggingface-cli tag "$repo" "$1" --repo-type dataset -m "Dataset build $1"
  fi
}
tag="$revision"
n=1
until create_tag "$tag"; do
  n=$((n + 1))
  [ "$n" -le 9 ] || die "could not tag the upload as $revision (nor $revision.2 to .9); it is published untagged"
  tag="$revision.$n"
  echo "publish: trying the tag $tag"
done
echo "publish: tagged datasets/$repo as $tag: load_dataset(\"$repo\", revision=\"$tag\")"
