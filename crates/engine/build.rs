//! The one choosing point of the CPU kernels' instruction set: `cfg(kernel = "...")`, from
//! the target's features as the build sees them (the native build targets its own CPU,
//! `.cargo/config.toml`; the page's wasm is built with simd128):
//! - `avx512`: x86-64 with AVX-512F (16-lane registers),
//! - `avx2`: x86-64 with AVX2 but not AVX-512F (8-lane registers),
//! - `wasm`: wasm32 with simd128 (4-lane registers),
//! - `portable`: anything else (the reference loops, vectorised by LLVM as it can).
//!
//! `kernels/simd/` holds one file per instruction set, each declared under its `kernel`.

fn main() {
    println!(
        "cargo::rustc-check-cfg=cfg(kernel, values(\"avx512\", \"avx2\", \"wasm\", \"portable\"))"
    );
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let has = |f: &str| features.split(',').any(|x| x == f);
    let kernel = match arch.as_str() {
        "x86_64" if has("avx512f") => "avx512",
        "x86_64" if has("avx2") => "avx2",
        "wasm32" if has("simd128") => "wasm",
        _ => "portable",
    };
    println!("cargo::rustc-cfg=kernel=\"{kernel}\"");
    // `team`: the engine can run a loop on several threads (natively always; in wasm when
    // built with shared memory, `+atomics`: par_team.rs).
    println!("cargo::rustc-check-cfg=cfg(team)");
    if arch != "wasm32" || has("atomics") {
        println!("cargo::rustc-cfg=team");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
