#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| decoding_worker::fuzz::ggml_blocks(data));
