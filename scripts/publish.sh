#!/usr/bin/env bash
# Upload the built dataset (dist/: README.md card + data/*.parquet) to the
# Hugging Face Hub with the Hub's own command-line tool:
#
#   hf upload <repo> <dist> . --repo-type dataset
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

if [ "$dry_run" = "1" ]; then
  echo "publish: dry run; would upload to https://huggingface.co/datasets/$repo:"
  (cd "$dist" && find . -type f ! -name '*.tmp' | LC_ALL=C sort | while IFS= read -r f; do
    size=$(wc -c <"$f" | tr -d ' ')
    printf '  %s (%s bytes)\n' "${f#./}" "$size"
  done)
  echo "publish: command: hf upload $repo $dist . --repo-type dataset --exclude '*.tmp'"
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
  --commit-message "Dataset build $(date -u +%Y-%m-%dT%H:%M:%SZ)"
