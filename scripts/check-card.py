#!/usr/bin/env python3
"""Check a built dataset folder (`scraper build`'s dist/) the way the Hub and
`datasets` read it, offline, before it is published:

  python3 scripts/check-card.py DIST... [--code-license MIT]

- the card (README.md) parses as a dataset card with huggingface_hub
  (`DatasetCard.load`, `DatasetCardData`), and its `dataset_info` and
  `configs` parse with `datasets` (`DatasetInfosDict.from_dataset_card_data`,
  `MetadataConfigs.from_dataset_card_data`), as the Hub's dataset viewer and
  `load_dataset` read them;
- the Hub's own vocabularies where the card uses one: `size_categories`
  bucket, ISO 639-1 `language` codes, a `license` id;
- `dataset_info.features` match every Parquet file's schema column by column
  and type by type (the Parquet side converted by `datasets` itself,
  `Features.from_arrow_schema`, so a column added to the schema needs nothing
  here);
- every split's `data_files` patterns match exactly the Parquet files written
  (each file in one split), and each split's `num_examples` is its files' rows;
- the card states the dataset's licence and, apart from it, the licence of
  the code that built it (`--code-license`: that licence must be named).

Prints one line per problem (prefixed with the folder when given several)
and exits 1 when there is any; 0 and `card ok` otherwise. Needs huggingface_hub, datasets and pyarrow. No network.
"""

import argparse
import fnmatch
import os
import re
import sys

SIZE_CATEGORIES = {
    "n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M",
    "100M<n<1B", "1B<n<10B", "10B<n<100B", "100B<n<1T", "n>1T",
}


def parquet_files(dist):
    out = []
    for top, _, names in os.walk(dist):
        for n in names:
            if n.endswith(".parquet"):
                out.append(os.path.relpath(os.path.join(top, n), dist).replace(os.sep, "/"))
    return sorted(out)


def check_features(info_features, files, dist, problems):
    import pyarrow.parquet as pq
    from datasets import Features

    for f in files:
        schema = pq.read_schema(os.path.join(dist, f))
        want = Features.from_arrow_schema(schema)
        card_cols, file_cols = list(info_features), list(want)
        for i in range(max(len(card_cols), len(file_cols))):
            c = card_cols[i] if i < len(card_cols) else None
            p = file_cols[i] if i < len(file_cols) else None
            if c is None:
                problems.append(f"{f}: column {i} `{p}` is in the Parquet schema but not in the card's features")
                continue
            if p is None:
                problems.append(f"{f}: column {i} `{c}` is in the card's features but not in the Parquet schema")
                continue
            if c != p:
                problems.append(f"{f}: column {i}: the card says `{c}`, the Parquet schema has `{p}`")
                continue
            if info_features[c] != want[p]:
                problems.append(
                    f"{f}: column {i} `{c}`: the card says {info_features[c]!r}, "
                    f"the Parquet schema has {want[p]!r} (Arrow {schema.field(p).type})"
                )


def check_files(configs, info, files, dist, problems):
    import pyarrow.parquet as pq

    taken = {}
    for name, config in configs.items():
        for entry in config.get("data_files", []):
            split, paths = entry["split"], entry["path"]
            for pattern in [paths] if isinstance(paths, str) else paths:
                matched = [f for f in files if fnmatch.fnmatchcase(f, pattern)]
                if not matched:
                    problems.append(f"config {name}, split {split}: `{pattern}` matches no Parquet file written")
                for f in matched:
                    if f in taken and taken[f] != split:
                        problems.append(f"{f} is in two splits: {taken[f]} and {split}")
                    taken[f] = split
    for f in files:
        if f not in taken:
            problems.append(f"{f} is in no split's data_files")
    splits = info.splits or {}
    for split in sorted(set(taken.values()) | set(splits)):
        rows = sum(pq.read_metadata(os.path.join(dist, f)).num_rows for f, s in taken.items() if s == split)
        if split not in splits:
            problems.append(f"split {split} has files but no entry in dataset_info.splits")
        elif splits[split].num_examples != rows:
            problems.append(f"split {split}: dataset_info says {splits[split].num_examples} examples, its files hold {rows} rows")


def check_licences(card, data, code_license, problems):
    licence = data.get("license")
    if not licence or not isinstance(licence, str) or not re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", licence):
        problems.append(f"license must be a Hub licence id (e.g. cc-by-4.0, other), got {licence!r}")
    m = re.search(r"^## Licen[cs]e\n(.*?)(?=^## |\Z)", card.text, re.M | re.S)
    if not m:
        problems.append("the card has no `## License` section")
        return
    section = m.group(1)
    paras = [p for p in re.split(r"\n\s*\n", section) if p.strip()]
    data_para = [p for p in paras if licence and f"`{licence}`" in p]
    code_para = [p for p in paras if re.search(r"\bcode\b", p)]
    if not data_para:
        problems.append(f"the License section does not state the dataset's licence `{licence}`")
    if not code_para:
        problems.append("the License section does not state the licence of the code, apart from the dataset's")
    elif code_license and f"`{code_license}`" not in code_para[0]:
        problems.append(f"the code's licence `{code_license}` is not the one the card names: {code_para[0].strip()!r}")
    if data_para and code_para and data_para[0] == code_para[0]:
        problems.append("the dataset's and the code's licences share one statement; state them apart")


def check(dist, code_license):
    """The problems of one dataset folder, and a one-line summary."""
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    problems = []
    readme = os.path.join(dist, "README.md")
    try:
        card = DatasetCard.load(readme)
        data = card.data.to_dict()
        DatasetCardData(**data)
        infos = DatasetInfosDict.from_dataset_card_data(card.data)
        configs = MetadataConfigs.from_dataset_card_data(card.data)
    except Exception as e:  # what the Hub would refuse to read
        return [f"{readme}: not a valid dataset card: {type(e).__name__}: {e}"], ""
    for c in data.get("size_categories") or []:
        if c not in SIZE_CATEGORIES:
            problems.append(f"size_categories: {c!r} is not one of the Hub's buckets")
    for lang in data.get("language") or []:
        if not (isinstance(lang, str) and re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]+)*", lang)):
            problems.append(f"language: {lang!r} is not an ISO 639-1 code")
    files = parquet_files(dist)
    if not files:
        problems.append(f"no Parquet file under {dist}")
    if len(infos) != 1 or not configs:
        problems.append(f"expected one dataset_info and its configs, got {list(infos)} and {list(configs)}")
    else:
        info = next(iter(infos.values()))
        if info.features is None:
            problems.append("dataset_info has no features")
        else:
            check_features(info.features, files, dist, problems)
        check_files(configs, info, files, dist, problems)
    check_licences(card, data, code_license, problems)
    columns = len(info.features or {}) if len(infos) == 1 else 0
    return problems, f"card ok: {len(files)} Parquet file(s), {columns} columns"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dist", nargs="+", help="dataset folders (several: one line per problem, each prefixed with its folder)")
    ap.add_argument("--code-license", help="the licence the card must name for the code (Cargo.toml's)")
    args = ap.parse_args()
    failed = False
    for dist in args.dist:
        problems, ok = check(dist, args.code_license)
        prefix = f"{dist}: " if len(args.dist) > 1 else ""
        for p in problems:
            print(prefix + p)
        if not problems:
            print(prefix + ok)
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
