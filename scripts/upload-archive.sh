#!/usr/bin/env bash
# Upload WARC archives (crawl.archive: data/warc/<run-id>.warc.gz) to the
# `raw/` folder of the dataset repository on the Hugging Face Hub, with the
# Hub's own command-line tool, one file per run:
#
#   hf upload <repo> data/warc/<run-id>.warc.gz raw/<run-id>.warc.gz --repo-type dataset
#
# The archives never go into git history: they weigh about ten times the
# records. `scraper reextract` reads them back from data/warc/ (download them
# with `hf download <repo> --repo-type dataset --include 'raw/*' --local-dir .`
# and move raw/*.warc.gz into data/warc/).
#
# Usage: scripts/upload-archive.sh FILE.warc.gz...
# Settings (environment):
#   HF_TOKEN   access token with write access (required unless DRY_RUN=1)
#   HF_REPO    dataset repo id, e.g. user/ai-news; default: `dataset.hub_repo`
#              in $SCRAPER_CONFIG (default config.yml)
#   DRY_RUN=1  print what would be uploaded, upload nothing
#
# Bash 3.2 compatible (macOS /bin/bash).
set -euo pipefail

config="${SCRAPER_CONFIG:-config.yml}"

die() {
  echo "upload-archive: $*" >&2
  exit 1
}

[ $# -gt 0 ] || die "usage: $0 FILE.warc.gz..."
repo="${HF_REPO:-}"
if [ -z "$repo" ] && [ -f "$config" ]; then
  # The `hub_repo:` value inside the top-level `dataset:` block (as publish.sh reads it).
  repo="$(awk '
    /^[^[:space:]#]/ { in_dataset = ($0 ~ /^dataset:/) }
    in_dataset && /^[[:space:]]+hub_repo:/ {
      sub(/^[[:space:]]+hub_repo:[[:space:]]*/, ""); sub(/[[:space:]]+#.*$/, "")
      gsub(/^["'\'']|["'\'']$/, ""); print; exit
    }' "$config")"
fi
case "$repo" in
  */*) ;;
  *) die "no repo: set HF_REPO or dataset.hub_repo in $config (owner/name)" ;;
esac

for f in "$@"; do
  [ -f "$f" ] || die "$f not found"
  case "$f" in *.warc.gz) ;; *) die "$f is not a .warc.gz file" ;; esac
done

if [ "${DRY_RUN:-0}" = "1" ]; then
  for f in "$@"; do
    echo "upload-archive: would upload $f ($(wc -c <"$f" | tr -d ' ') bytes) to datasets/$repo as raw/$(basename "$f")"
  done
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
for f in "$@"; do
  name=$(basename "$f")
  echo "upload-archive: $f -> datasets/$repo raw/$name"
  "$hf_cmd" upload "$repo" "$f" "raw/$name" --repo-type dataset \
    --commit-message "Raw archive $name"
done
