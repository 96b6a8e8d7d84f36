#!/usr/bin/env bash
# Upload the built dataset (dist/: README.md card, build.json, data/*.parquet)
# to the Hugging Face Hub with the Hub's own command-line tool, then tag the
# new revision with the build date, so consumers can pin it
# (`load_dataset(repo, revision="2026-12-01")`):
#
#   hf upload <repo> <dist> . --repo-type dataset
#   hf repos tag create <repo> <build date> --repo-type dataset
#
# The tag is the `revision` in dist/build.json (the build's UTC date); when a
# build of the same day was already published, the next free of `<date>.2`,
# `<date>.3`, ... is used.
#
# Settings (environment):
#   HF_TOKEN   access token with write access (required unless DRY_RUN=1)
#   HF_REPO    dataset repo id, e.g. user/ai-news; default: `dataset.hub_repo`
#              in $SCRAPER_CONFIG (default config.yml)
#   DIST       folder to upload (default dist)
#   DRY_RUN=1  list what would be uploaded and the command, upload nothing
#
# Bash 3.2 compatible (macOS /bin/bash).
set -euo pipefail

dist="${DIST:-dist}"
config="${SCRAPER_CONFIG:-config.yml}"
dry_run="${DRY_RUN:-0}"

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

if [ "$dry_run" = "1" ]; then
  echo "publish: dry run; would upload to https://huggingface.co/datasets/$repo:"
  (cd "$dist" && find . -type f ! -name '*.tmp' | LC_ALL=C sort | while IFS= read -r f; do
    size=$(wc -c <"$f" | tr -d ' ')
    printf '  %s (%s bytes)\n' "${f#./}" "$size"
  done)
  echo "publish: command: hf upload $repo $dist . --repo-type dataset --exclude '*.tmp'"
  echo "publish: would tag the new revision $revision (or $revision.2, ... when taken)"
  echo "publish: command: hf repos tag create $repo $revision --repo-type dataset"
  exit 0
fi

[ -n "${HF_TOKEN:-}" ] || die "HF_TOKEN is not set (a token with write access to $repo)"
export HF_TOKEN
if command -v hf >/dev/null 2>&1; then
  hf_cmd=hf
elif command -v huggingface-cli >/dev/null 2>&1; then
  hf_cmd=huggingface-cli
else
  die "the Hub CLI is missing: pip install -U huggingface_hub"
fi

echo "publish: uploading $dist to datasets/$repo"
"$hf_cmd" upload "$repo" "$dist" . --repo-type dataset --exclude '*.tmp' \
  --commit-message "Dataset build $revision ($(date -u +%Y-%m-%dT%H:%M:%SZ))"

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
