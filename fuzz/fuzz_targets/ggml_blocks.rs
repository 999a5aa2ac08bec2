#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| decoding_web::fuzz::ggml_blocks(data));
