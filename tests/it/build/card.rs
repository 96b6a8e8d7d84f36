//! The dataset card (checked by `huggingface_hub` when Python has it, and by
//! `scripts/check-card.py` against the Parquet files: passes on a real build,
//! fails on cards that differ), a pyarrow, `datasets` and DuckDB read of the
//! files, and `scripts/publish.sh` in dry-run mode.
//!
//! The Python checks fail loudly when python3 or its modules are missing;
//! set `SCRAPER_SKIP_PY=1` to skip them instead.

use std::path::Path;
use std::process::Command;

use scraper::config::Config;
use scraper::dataset::{Tuning, build_with};

use super::{article, opts, run, write_shard};
use crate::support::tool::{Tool, python_imports};

/// Run a Python snippet; a missing Python or module fails unless SCRAPER_SKIP_PY=1 (`false`).
fn python(module: &str, code: &str, args: &[&Path]) -> bool {
    let what = format!("the {module} check");
    if !Tool::Python.need(
        &what,
        || python_imports(module),
        &format!("pip install {module}, as .ci/run does"),
    ) {
        return false;
    }
    let out = Command::new("python3")
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python check failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Column names of a Parquet file, from its own schema.
fn parquet_columns(file: &Path) -> Vec<String> {
    let f = std::fs::File::open(file).unwrap();
    let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    b.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

/// `scripts/check-card.py DIST... --code-license <Cargo.toml's>` (one Python
/// start for them all): `Some((passed, each folder's output lines))`, or
/// `None` when SCRAPER_SKIP_PY=1.
fn check_cards(dists: &[&Path]) -> Option<(bool, Vec<String>)> {
    if !python("huggingface_hub", "import datasets, pyarrow", &[]) {
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-card.py");
    let o = Command::new("python3")
        .arg(&script)
        .args(dists)
        .args(["--code-license", env!("CARGO_PKG_LICENSE")])
        .output()
        .unwrap();
    let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&o.stderr));
    let out = dists
        .iter()
        .map(|d| {
            let prefix = if dists.len() > 1 {
                format!("{}: ", d.display())
            } else {
                String::new()
            };
            let mine: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix(&prefix))
                .collect();
            if mine.is_empty() {
                text.clone()
            } else {
                mine.join("\n")
            }
        })
        .collect();
    Some((o.status.success(), out))
}

/// The card's `dataset_info.features` entries, each as its lines.
fn feature_entries(card: &str) -> Vec<String> {
    let start = card.find("  features:\n").unwrap() + "  features:\n".len();
    let end = start + card[start..].find("  splits:\n").unwrap();
    let mut entries: Vec<String> = Vec::new();
    for line in card[start..end].lines() {
        if line.starts_with("  - name: ") {
            entries.push(String::new());
        }
        let e = entries.last_mut().unwrap();
        e.push_str(line);
        e.push('\n');
    }
    entries
}

/// A copy of `dist` with `card` as its card, `features` in place of the card's own.
fn with_features(dist: &Path, to: &Path, card: &str, features: &[String]) {
    let old = feature_entries(card).concat();
    std::fs::create_dir_all(to.join("data")).unwrap();
    for e in std::fs::read_dir(dist.join("data")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join("data").join(e.file_name())).unwrap();
    }
    std::fs::write(to.join("README.md"), card.replace(&old, &features.concat())).unwrap();
}

/// The card check passes on a real build, and fails, naming the column, on
/// cards whose features differ from the Parquet schema: a type changed, a
/// column left out, one too many, two swapped. Which columns is taken from the
/// card itself, so columns added later change nothing here. Also a split
/// pattern that matches no file, and a card without the code's licence.
#[test]
fn card_check_holds_the_card_to_the_parquet_schema() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let articles: Vec<_> = (1..=12).map(article).collect();
    write_shard(&data, "run-1", &articles);
    let config = Config::default();
    let s = build_with(&config, &opts(&data, &out), &Tuning::default()).unwrap();
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    let license = format!(
        "The code that built this dataset (the `scraper` crawler) has a licence of its own, `{}`",
        env!("CARGO_PKG_LICENSE")
    );
    assert!(card.contains(&license), "{card}");
    assert!(card.contains(&format!("\n`{}`. ", config.dataset.license)));
    let columns = parquet_columns(&s.files[0]);
    let features = feature_entries(&card);
    assert_eq!(features.len(), columns.len(), "{card}");

    // One column's type changed: the first plain `dtype:` one.
    let (i, entry) = features
        .iter()
        .enumerate()
        .find(|(_, e)| e.contains("dtype: "))
        .unwrap();
    let other = if entry.contains("dtype: string") {
        "int64"
    } else {
        "string"
    };
    let mut changed = features.clone();
    changed[i] = format!("  - name: {}\n    dtype: {other}\n", columns[i]);
    let mut last_dropped = features.clone();
    last_dropped.pop();
    let mut extra = features.clone();
    extra.push("  - name: not_in_parquet\n    dtype: string\n".into());
    let mut swapped = features.clone();
    swapped.swap(1, 2);
    let n = columns.len() - 1;
    let code_para = format!("{license}, which covers the code only, not the articles.\n\n");
    assert!(card.contains(&code_para), "{card}");
    let cases = [
        (
            "changed",
            card.clone(),
            changed,
            format!("column {i} `{}`: the card says", columns[i]),
        ),
        (
            "dropped",
            card.clone(),
            last_dropped,
            format!(
                "column {n} `{}` is in the Parquet schema but not in the card",
                columns[n]
            ),
        ),
        (
            "extra",
            card.clone(),
            extra,
            format!(
                "column {} `not_in_parquet` is in the card's features but not in the Parquet schema",
                n + 1
            ),
        ),
        (
            "swapped",
            card.clone(),
            swapped,
            format!(
                "column 1: the card says `{}`, the Parquet schema has `{}`",
                columns[2], columns[1]
            ),
        ),
        (
            "pattern",
            card.replace("path: data/train-*", "path: data/test-*"),
            features.clone(),
            "`data/test-*` matches no Parquet file written".into(),
        ),
        (
            "licence",
            card.replace(&code_para, ""),
            features.clone(),
            "does not state the licence of the code".into(),
        ),
    ];
    let mut dists = vec![out.clone()];
    for (name, text, bad, _) in &cases {
        let to = dir.path().join(name);
        with_features(&out, &to, text, bad);
        dists.push(to);
    }
    let dists: Vec<&Path> = dists.iter().map(|d| d.as_path()).collect();
    let Some((ok, outputs)) = check_cards(&dists) else {
        return;
    };
    assert!(!ok, "some cards are bad: the check must fail");
    assert!(
        outputs[0].starts_with("card ok: 1 Parquet file(s)"),
        "the card check fails on a real build:\n{}",
        outputs[0]
    );
    for ((name, _, _, says), text) in cases.iter().zip(&outputs[1..]) {
        assert!(
            !text.starts_with("card ok"),
            "{name}: the check passed a bad card:\n{text}"
        );
        assert!(
            text.contains(says.as_str()),
            "{name}: {says:?} not in\n{text}"
        );
    }
    // The real build alone passes (exit status 0).
    let (ok, outputs) = check_cards(&[&out]).unwrap();
    assert!(ok, "{outputs:?}");
}

#[test]
fn card_and_files_load_in_python() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let mut articles: Vec<_> = (1..=20).map(article).collect();
    articles[1].markdown = Some("## Heading\n\n- *item*".into());
    write_shard(&data, "run-1", &articles);
    let mut config = Config::default();
    config.dataset.pretty_name = "AI news: a test \"card\"".into();
    let s = build_with(&config, &opts(&data, &out), &Tuning::default()).unwrap();
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    // The columns as the written Parquet file has them (not a list kept here).
    let columns = parquet_columns(&s.files[0]);
    for want in [
        "size_categories:\n- \"n<1K\"",
        "path: data/train-*",
        "- name: keywords\n    sequence: string",
        "- name: relevance_score\n    dtype: float64",
        "- name: markdown\n    dtype: large_string",
        "| `markdown` | large_string, nullable |",
        "| `accessible_for_free` | bool, nullable | whether the article is free to read",
        "## Articles by language\n\n| language | articles |\n|---|---:|\n| en | 15 |\n| unknown | 5 |\n",
        "It covers 1 crawl runs, from `run-1` to `run-1`",
        "| run-1 | 20 |",
        "revision=\"",
    ] {
        assert!(card.contains(want), "{want} not in card:\n{card}");
    }
    python(
        "huggingface_hub",
        "import sys\nfrom huggingface_hub import DatasetCard\n\
         c = DatasetCard.load(sys.argv[1])\nd = c.data.to_dict()\n\
         assert d['license'] == 'other', d\nassert d['language'] == ['en'], d\n\
         assert d['pretty_name'] == 'AI news: a test \"card\"', d\n\
         assert d['configs'][0]['data_files'][0]['path'] == 'data/train-*', d\n\
         names = [f['name'] for f in d['dataset_info']['features']]\n\
         assert names == sys.argv[2].split(','), (names, sys.argv[2])\n\
         assert d['dataset_info']['splits'][0]['num_examples'] == 20, d\n",
        &[&out.join("README.md"), Path::new(&columns.join(","))],
    );
    python(
        "pyarrow",
        "import sys\nimport pyarrow.parquet as pq\nt = pq.read_table(sys.argv[1])\n\
         assert t.num_rows == 20\nassert str(t.schema.field('text').type) == 'large_string'\n\
         assert str(t.schema.field('fetched_at').type) == 'timestamp[us, tz=UTC]'\n\
         assert str(t.schema.field('date').type) == 'date32[day]'\n\
         assert t.column('id').to_pylist() == list(range(1, 21))\n",
        &[&s.files[0]],
    );
    // Consumers' readers see every column, the new ones included.
    let files = out.join("data");
    python(
        "datasets",
        "import sys, os\nfrom datasets import load_dataset\n\
         files = sorted(os.path.join(sys.argv[1], f) for f in os.listdir(sys.argv[1]))\n\
         ds = load_dataset('parquet', data_files=files, split='train', cache_dir=sys.argv[2])\n\
         assert ds.num_rows == 20, ds\n\
         assert ds.column_names == sys.argv[3].split(','), ds.column_names\n\
         assert str(ds.features['relevance_score'].dtype) == 'float64', ds.features\n\
         assert ds[0]['markdown'] is None and ds[0]['id'] == 1\n\
         assert ds[1]['markdown'] == '## Heading\\n\\n- *item*', ds[1]\n\
         import pyarrow.parquet as pq\nfrom datasets import Features\n\
         hub = load_dataset(sys.argv[4], split='train', cache_dir=sys.argv[2])\n\
         want = Features.from_arrow_schema(pq.read_schema(files[0]))\n\
         assert hub.num_rows == 20 and hub.features == want, (hub.features, want)\n",
        &[
            &files,
            &dir.path().join("hf-cache"),
            Path::new(&columns.join(",")),
            // The folder as the Hub serves it: `load_dataset` reads the
            // card's configs and features, and gets the files' own schema.
            &out,
        ],
    );
    python(
        "duckdb",
        "import sys\nimport duckdb\n\
         rows = duckdb.sql(f\"SELECT count(*), count(markdown), count(relevance_score), \
         count(DISTINCT lang) FROM read_parquet('{sys.argv[1]}/*.parquet')\").fetchall()\n\
         assert rows == [(20, 1, 0, 1)], rows\n\
         cols = [c[0] for c in duckdb.sql(f\"DESCRIBE SELECT * FROM read_parquet('{sys.argv[1]}/*.parquet')\").fetchall()]\n\
         assert cols == sys.argv[2].split(','), cols\n",
        &[&files, Path::new(&columns.join(","))],
    );
    // `dataset_size` is the bytes the rows take in Arrow, as `datasets`
    // counts them: pyarrow's `nbytes` of the table read back.
    let size: u64 = card
        .lines()
        .find_map(|l| l.trim().strip_prefix("dataset_size: "))
        .and_then(|v| v.parse().ok())
        .expect("dataset_size in the card");
    python(
        "pyarrow",
        &format!(
            "import sys\nimport pyarrow.parquet as pq\nn = pq.read_table(sys.argv[1]).nbytes\n\
             assert abs(n - {size}) <= n * 0.02, (n, {size})\n"
        ),
        &[&s.files[0]],
    );
}

#[test]
fn publish_dry_run_lists_the_upload() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    write_shard(&data, "run-1", &[article(1)]);
    run(&data, &out, &Tuning::default());
    std::fs::write(out.join("data/train-0000000000000009.parquet.tmp"), b"x").unwrap();
    let config = dir.path().join("config.yml");
    std::fs::write(
        &config,
        "keywords: {}\ndataset:\n  pretty_name: x\n  hub_repo: \"me/ai-news\" # the repo\n",
    )
    .unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/publish.sh");
    let o = Command::new("bash")
        .arg(&script)
        .env("DRY_RUN", "1")
        .env("DIST", &out)
        .env("SCRAPER_CONFIG", &config)
        .env_remove("HF_REPO")
        .env_remove("HF_TOKEN")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("datasets/me/ai-news"), "{stdout}");
    assert!(stdout.contains("  README.md ("), "{stdout}");
    assert!(
        stdout.contains("  data/train-8000000000000001.parquet ("),
        "{stdout}"
    );
    assert!(!stdout.contains(".tmp ("), "{stdout}");
    assert!(stdout.contains("  build.json ("), "{stdout}");
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(
        stdout.contains(&format!(
            "hf repos tag create me/ai-news {today} --repo-type dataset"
        )),
        "{stdout}"
    );
    // No repo anywhere: a clear failure, not an upload.
    let o = Command::new("bash")
        .arg(&script)
        .env("DRY_RUN", "1")
        .env("DIST", &out)
        .env("SCRAPER_CONFIG", dir.path().join("missing.yml"))
        .env_remove("HF_REPO")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no repo"));
}

/// The real (not dry-run) path against a stand-in `hf` on PATH that records
/// its calls and refuses a tag that exists: the upload, then the build date
/// as the tag, or the next free `<date>.N`.
#[test]
fn publish_uploads_then_tags_the_build_date() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    write_shard(&data, "run-1", &[article(1)]);
    run(&data, &out, &Tuning::default());
    let build: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("build.json")).unwrap()).unwrap();
    let date = build["revision"].as_str().unwrap().to_string();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.path().join("hf.log");
    // Tags already on the Hub: the build date itself.
    let fake = format!(
        "#!/bin/sh\necho \"$*\" >> '{log}'\n\
         if [ \"$1 $2 $3\" = 'repos tag create' ] && [ \"$5\" = '{date}' ]; then \
         echo 'tag exists' >&2; exit 1; fi\nexit 0\n",
        log = log.display()
    );
    let hf = bin.join("hf");
    std::fs::write(&hf, fake).unwrap();
    Command::new("chmod").arg("+x").arg(&hf).status().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/publish.sh");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .arg(&script)
        .env("PATH", path)
        .env("DIST", &out)
        .env("HF_REPO", "me/ai-news")
        .env("HF_TOKEN", "x")
        .env_remove("DRY_RUN")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let calls = std::fs::read_to_string(&log).unwrap();
    // The last publish's manifest is asked for first (this stand-in has none).
    let calls: Vec<&str> = calls
        .lines()
        .filter(|l| !l.ends_with("--help") && !l.starts_with("download "))
        .collect();
    assert!(calls[0].starts_with("upload me/ai-news "), "{calls:?}");
    assert_eq!(
        &calls[1..],
        [
            format!(
                "repos tag create me/ai-news {date} --repo-type dataset -m Dataset build {date}"
            ),
            format!(
                "repos tag create me/ai-news {date}.2 --repo-type dataset -m Dataset build {date}.2"
            ),
        ]
    );
    assert!(
        stdout.contains(&format!("revision=\"{date}.2\"")),
        "{stdout}"
    );
}

/// A publish after a day that only adds rows sends the files whose bytes
/// changed (the last data file, the card, build.json, the index) and not the
/// others, compared with the manifest of the last publish.
#[test]
fn publish_sends_only_the_files_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (data, out) = (dir.path().join("data"), dir.path().join("dist"));
    let cuts = Tuning {
        file_rows: 8,
        row_group_rows: 4,
        ..Tuning::default()
    };
    write_shard(&data, "run-1", &(1..=60).map(article).collect::<Vec<_>>());
    let first = build_with(&Config::default(), &opts(&data, &out), &cuts).unwrap();
    assert!(first.files.len() >= 3, "{:?}", first.files);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/publish.sh");
    let publish = |previous: Option<&Path>| {
        let mut c = Command::new("bash");
        c.arg(&script)
            .env("DRY_RUN", "1")
            .env("DIST", &out)
            .env("HF_REPO", "me/ai-news")
            .env_remove("HF_TOKEN");
        match previous {
            Some(p) => c.env("PREVIOUS_MANIFEST", p),
            None => c.env("PREVIOUS_MANIFEST", "/dev/null"),
        };
        let o = c.output().unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        stdout
    };
    let all = publish(None);
    assert!(
        all.contains(&format!("data/{} (", file_name(&first.files[0]))),
        "{all}"
    );
    let previous = dir.path().join("published.sha256");
    std::fs::copy(out.join("manifest.sha256"), &previous).unwrap();
    // Nothing new: only the manifest goes.
    let same = publish(Some(&previous));
    assert!(same.contains("publish: 0 of "), "{same}");
    // One more day of rows, with higher ids.
    write_shard(&data, "run-2", &(61..=63).map(article).collect::<Vec<_>>());
    let second = build_with(&Config::default(), &opts(&data, &out), &cuts).unwrap();
    let day = publish(Some(&previous));
    let listed = |f: &Path| day.contains(&format!("  data/{} (", file_name(f)));
    let sent = second.files.iter().filter(|f| listed(f)).count();
    assert!(sent >= 1 && sent < second.files.len(), "{day}");
    assert!(!listed(&second.files[0]), "{day}");
    assert!(
        day.contains("  README.md (") && day.contains("  index/ids.bin ("),
        "{day}"
    );
    assert!(day.contains("+3 rows, 0 updated, 0 withdrawn"), "{day}");
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}
