//! `bundle`: the built page and chosen models in one folder, each model checked by the engine
//! before anything is written; `bundle.json` lists their files with sizes and sha256 (checked
//! here against sha2 and the stories260K README's table).

use super::*;

fn page_dir(root: &std::path::Path, release: &str) -> PathBuf {
    let dist = root.join("dist");
    std::fs::create_dir_all(dist.join("models/fixtures")).unwrap();
    std::fs::write(
        dist.join("index.html"),
        format!("<html><head><meta name=\"decoding-release\" content=\"{release}\" /></head><body></body></html>"),
    )
    .unwrap();
    std::fs::write(dist.join("sw.js"), "// the service worker").unwrap();
    std::fs::write(dist.join("models/fixtures/big.gguf"), "a test file").unwrap();
    dist
}

/// `bundle --dist DIST --out OUT` with `more` arguments.
fn run(dist: &std::path::Path, out: &std::path::Path, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "bundle",
        "--dist",
        dist.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(more);
    cli(&args)
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("de-bundle-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_bundle_holds_the_page_and_the_checked_models() {
    let root = temp("ok");
    let dist = page_dir(&root, "0123456789abcdef");
    let out = root.join("usb");
    let model = model_path("stories260K.bin");
    let tok = model_path("tok512.bin");
    let o = run(
        &dist,
        &out,
        &["--add", &format!("{},{}", model.display(), tok.display())],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("python3 -m http.server"),
        "{}",
        stdout(&o)
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains(r#"<meta name="decoding-bundle" content="bundle.json" />"#),
        "{html}"
    );
    assert!(out.join("sw.js").exists());
    assert!(
        !out.join("models/fixtures").exists(),
        "the tests' fixtures stay out"
    );
    let list: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bundle.json")).unwrap()).unwrap();
    let files = list[0]["files"].as_array().unwrap();
    assert_eq!(list[0]["name"], "stories260K");
    // The tokenizer first (the smaller), as the page downloads them; the README's sizes and
    // sha256.
    assert_eq!(files[0]["url"], "/models/bundle/1-stories260K/tok512.bin");
    assert_eq!(files[0]["size"], 6_227);
    assert_eq!(
        files[0]["sha256"],
        "037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312"
    );
    assert_eq!(
        files[1]["url"],
        "/models/bundle/1-stories260K/stories260K.bin"
    );
    assert_eq!(
        files[1]["sha256"],
        "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696"
    );
    assert_eq!(
        std::fs::read(out.join("models/bundle/1-stories260K/stories260K.bin")).unwrap(),
        std::fs::read(&model).unwrap()
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_bundle_refuses_what_the_page_could_not_run_and_writes_nothing() {
    let root = temp("bad");
    let dist = page_dir(&root, "0123456789abcdef");
    let out = root.join("usb");
    let model = model_path("stories260K.bin");
    // A checkpoint without its tokenizer.
    let o = run(&dist, &out, &["--add", model.to_str().unwrap()]);
    assert_user_error(&o, "give its tokenizer too");
    assert!(!out.exists(), "nothing written");
    // A page that was never built (its release unstamped).
    let unbuilt = page_dir(&temp("dev"), "dev");
    let o = run(&unbuilt, &out, &[]);
    assert_user_error(&o, "not a built page");
    // A folder inside the page's own (it would copy itself into itself).
    let o = run(&dist, &dist.join("usb"), &[]);
    assert_user_error(&o, "is inside the page's folder");
    // A folder that holds something already.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("x"), "x").unwrap();
    let o = run(&dist, &out, &[]);
    assert_user_error(&o, "is not empty");
    let _ = std::fs::remove_dir_all(&root);
}
