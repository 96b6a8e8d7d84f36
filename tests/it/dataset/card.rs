//! The dataset card (checked by `huggingface_hub` when Python has it), a
//! pyarrow read of the files, and `scripts/publish.sh` in dry-run mode.
//!
//! The Python checks fail loudly when python3 or its modules are missing;
//! set `SCRAPER_SKIP_PY=1` to skip them instead.

use std::path::Path;
use std::process::Command;

use scraper::config::Config;
use scraper::dataset::{Tuning, build_with};

use super::{article, opts, run, write_shard};

/// Run a Python snippet; fail loudly when Python or a module is missing unless SCRAPER_SKIP_PY=1.
fn python(module: &str, code: &str, args: &[&Path]) -> bool {
    if std::env::var_os("SCRAPER_SKIP_PY").is_some_and(|v| v == "1") {
        eprintln!("SCRAPER_SKIP_PY=1: skipping the {module} check");
        return false;
    }
    let probe = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        _ => panic!(
            "python3 with `{module}` is needed for this check (pip install {module}), \
             or set SCRAPER_SKIP_PY=1 to skip it"
        ),
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
    for want in [
        "size_categories:\n- \"n<1K\"",
        "path: data/train-*",
        "- name: keywords\n    sequence: string",
        "- name: relevance_score\n    dtype: float64",
        "- name: markdown\n    dtype: large_string",
        "| `markdown` | large_string, nullable |",
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
         assert names[:3] == ['id', 'url', 'domain'], names\n\
         assert d['dataset_info']['splits'][0]['num_examples'] == 20, d\n\
         assert names[-3:] == ['relevance_score', 'markdown', 'extractor_version'], names\n",
        &[&out.join("README.md")],
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
         assert ds.column_names[-3:] == ['relevance_score', 'markdown', 'extractor_version'], ds.column_names\n\
         assert str(ds.features['relevance_score'].dtype) == 'float64', ds.features\n\
         assert ds[0]['markdown'] is None and ds[0]['id'] == 1\n\
         assert ds[1]['markdown'] == '## Heading\\n\\n- *item*', ds[1]\n",
        &[&files, &dir.path().join("hf-cache")],
    );
    python(
        "duckdb",
        "import sys\nimport duckdb\n\
         rows = duckdb.sql(f\"SELECT count(*), count(markdown), count(relevance_score), \
         count(DISTINCT lang) FROM read_parquet('{sys.argv[1]}/*.parquet')\").fetchall()\n\
         assert rows == [(20, 1, 0, 1)], rows\n\
         cols = [c[0] for c in duckdb.sql(f\"DESCRIBE SELECT * FROM read_parquet('{sys.argv[1]}/*.parquet')\").fetchall()]\n\
         assert cols[-3:] == ['relevance_score', 'markdown', 'extractor_version'], cols\n",
        &[&files],
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
    std::fs::write(out.join("data/train-00009-of-00010.parquet.tmp"), b"x").unwrap();
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
        stdout.contains("  data/train-00000-of-00001.parquet ("),
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
    let calls: Vec<&str> = calls.lines().filter(|l| !l.ends_with("--help")).collect();
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
