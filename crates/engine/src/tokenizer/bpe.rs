//! GGUF's GPT-2 style vocabularies (`tokenizer.ggml.model = gpt2`: SmolLM2, Llama 3.2,
//! Qwen2.5): byte-level BPE with the file's merges, built as a `tokenizers` BPE model behind
//! the pre-tokenizer its `tokenizer.ggml.pre` names.
//!
//! What each name means is llama.cpp's (`src/llama-vocab.cpp`, llama-cpp-python 0.3.36's
//! copy): `llama_vocab::impl::load` maps the name to a pre-tokenizer type (and its
//! `ignore_merges` and `add_bos` defaults), `llm_tokenizer_bpe` maps the type to the regular
//! expressions that split the text, applied in turn, every piece between two matches kept
//! as a piece of its own (`unicode_regex_split`; `tokenizers`' `Split` with `Isolated`).
//! Then each piece's bytes are written in GPT-2's byte alphabet and merged by rank. Special
//! tokens (token type CONTROL or USER_DEFINED) are matched in the text before that.
//! The ids are checked against llama.cpp's own tokenizer on the same files
//! (`crates/engine/tests/gguf_arch.rs`).

use super::{Tokenizer, TokenizerError};
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, PreTokenizerWrapper, SplitDelimiterBehavior};

/// GPT-2's split (`LLAMA_VOCAB_PRE_TYPE_GPT2`).
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";
/// Llama 3's (`LLAMA3`: the tokenizer.json's `(?i:…)` contractions spelled out, as
/// llama.cpp adapts them), digits in runs of up to three.
const LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen2's (`QWEN2`): Llama 3's with every digit a piece of its own.
const QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// How a named pre-tokenizer splits text, and llama.cpp's defaults for it.
struct Pre {
    regexes: &'static [&'static str],
    /// A piece that is a whole token is taken as it is, without merges (Llama 3).
    ignore_merges: bool,
    /// Whether a prompt starts with BOS unless `tokenizer.ggml.add_bos_token` says.
    add_bos: bool,
}

/// The `tokenizer.ggml.pre` names read, with the llama.cpp pre-tokenizer type each maps to.
pub const PRE_TOKENIZERS: [(&str, &str); 9] = [
    ("gpt-2", "GPT2"),
    ("phi-2", "GPT2"),
    ("smollm", "SMOLLM"),
    ("starcoder", "SMOLLM"),
    ("llama-bpe", "LLAMA3"),
    ("llama3", "LLAMA3"),
    ("llama-v3", "LLAMA3"),
    ("qwen2", "QWEN2"),
    ("deepseek-r1-qwen", "QWEN2"),
];

fn pre(name: &str) -> Option<Pre> {
    let ty = PRE_TOKENIZERS.iter().find(|(n, _)| *n == name)?.1;
    let (regexes, ignore_merges, add_bos): (&'static [&'static str], bool, bool) = match ty {
        "GPT2" => (&[GPT2], false, false),
        // SmolLM's tokenizer.json: `Digits(individual_digits)`, then GPT-2's split.
        "SMOLLM" => (&[r"\p{N}", GPT2], false, false),
        "LLAMA3" => (&[LLAMA3], true, true),
        _ => (&[QWEN2], false, false),
    };
    Some(Pre {
        regexes,
        ignore_merges,
        add_bos,
    })
}

/// A GGUF file's BPE vocabulary as read from its metadata.
#[derive(Debug, Clone)]
pub struct GgufBpe {
    /// `tokenizer.ggml.tokens`: each id's piece in GPT-2's byte alphabet ("Ġthe").
    pub tokens: Vec<String>,
    /// `tokenizer.ggml.merges`: "left right", by rank.
    pub merges: Vec<String>,
    /// `tokenizer.ggml.token_type` (1 normal, 3 control, 4 user-defined …); may be empty.
    pub types: Vec<i32>,
    /// `tokenizer.ggml.pre`.
    pub pre: String,
    pub bos: u32,
    pub eos: u32,
    /// `tokenizer.ggml.add_bos_token`, where the file says.
    pub add_bos: Option<bool>,
}

/// llama.cpp's token types of the tokens matched in the text before the split.
const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;

impl Tokenizer {
    /// From a GGUF file's GPT-2 style vocabulary. A pre-tokenizer not in
    /// [`PRE_TOKENIZERS`], a merge that is not two tokens of the vocabulary, a repeated
    /// token: each refused by name.
    pub fn from_gguf_bpe(v: GgufBpe) -> Result<Tokenizer, TokenizerError> {
        let pre = pre(&v.pre).ok_or_else(|| TokenizerError::UnknownPreTokenizer(v.pre.clone()))?;
        let n = v.tokens.len();
        if n > crate::config::MAX_COUNT {
            return Err(TokenizerError::TooManyTokens(n));
        }
        let mut vocab = Vocab::with_capacity(n);
        for (id, t) in v.tokens.iter().enumerate() {
            if let Some(first) = vocab.insert(t.clone(), id as u32) {
                return Err(TokenizerError::DuplicatePiece {
                    id,
                    first: first as usize,
                    piece: t.clone(),
                });
            }
        }
        let merges = merge_pairs(&v.merges, &vocab)?;
        let model = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .ignore_merges(pre.ignore_merges)
            .build()
            .map_err(|e| TokenizerError::Bpe(e.to_string()))?;
        let mut hf = tokenizers::Tokenizer::new(model);
        hf.with_pre_tokenizer(Some(pre_tokenizer(&pre)?));
        hf.with_decoder(Some(tokenizers::decoders::byte_level::ByteLevel::default()));
        let added = |ty: i32| {
            v.tokens
                .iter()
                .zip(&v.types)
                .filter(move |(_, &t)| t == ty)
                .map(move |(s, _)| AddedToken::from(s.clone(), ty == CONTROL))
        };
        hf.add_special_tokens(added(CONTROL))
            .and_then(|_| hf.add_tokens(added(USER_DEFINED)))
            .map_err(|e| TokenizerError::Bpe(e.to_string()))?;
        let mut t = Tokenizer::from_hf(hf, true, Some((v.bos, v.eos)))?;
        t.add_bos = v.add_bos.unwrap_or(pre.add_bos);
        t.kind = Some(format!(
            "byte-level BPE vocabulary, {:?} split{}",
            v.pre,
            if t.add_bos { "" } else { ", no BOS" }
        ));
        Ok(t)
    }
}

/// Each merge split at its first space after the first character, as llama.cpp splits it
/// (`word.find(' ', 1)`), both halves tokens of the vocabulary.
fn merge_pairs(merges: &[String], vocab: &Vocab) -> Result<Vec<(String, String)>, TokenizerError> {
    merges
        .iter()
        .enumerate()
        .map(|(rank, m)| {
            let at = m
                .char_indices()
                .skip(1)
                .find(|&(_, c)| c == ' ')
                .map(|(i, _)| i);
            match at.map(|i| (&m[..i], &m[i + 1..])) {
                Some((a, b)) if vocab.contains_key(a) && vocab.contains_key(b) => {
                    Ok((a.to_string(), b.to_string()))
                }
                _ => Err(TokenizerError::BadMerge {
                    rank,
                    merge: m.chars().take(64).collect(),
                }),
            }
        })
        .collect()
}

/// The named split, then GPT-2's byte alphabet (no split of its own).
fn pre_tokenizer(pre: &Pre) -> Result<PreTokenizerWrapper, TokenizerError> {
    let mut steps: Vec<PreTokenizerWrapper> = Vec::with_capacity(pre.regexes.len() + 1);
    for r in pre.regexes {
        let split = Split::new(
            SplitPattern::Regex(r.to_string()),
            SplitDelimiterBehavior::Isolated,
            false,
        )
        .map_err(|e| TokenizerError::Bpe(e.to_string()))?;
        steps.push(split.into());
    }
    steps.push(ByteLevel::new(false, false, false).into());
    Ok(Sequence::new(steps).into())
}
