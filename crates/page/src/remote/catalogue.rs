//! The page's list of real small models to load by name (`model=stories15M`), each with its
//! files' sizes and sha256 (the hub's Git LFS oids, as its file pages and commits show them;
//! llama2.c's `tokenizer.bin` hashed from a clone of github.com/karpathy/llama2.c at
//! c02865d), its licence and its source.

use super::{RemoteFile, RemoteModel};

/// A file of a listed model: a path on the hub (`<repo>/resolve/main/<path>`) or an
/// absolute URL.
#[derive(Debug, PartialEq, Eq)]
pub struct ListedFile {
    pub repo: &'static str,
    pub path: &'static str,
    pub size: u64,
    pub sha256: &'static str,
}

/// A model of the list.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its name in a link (`model=`).
    pub key: &'static str,
    /// Its name in messages and in the browser's storage, the same in every language; the
    /// page shows its label instead ([`Entry::label_id`]).
    pub name: &'static str,
    pub licence: &'static str,
    /// What it is, in a few words.
    pub about: &'static str,
    pub files: &'static [ListedFile],
}

/// llama2.c's 32,000-token Llama 2 tokenizer, which the TinyStories 15M/42M/110M models use.
const LLAMA2C_TOKENIZER: ListedFile = ListedFile {
    repo: "",
    path: "https://raw.githubusercontent.com/karpathy/llama2.c/master/tokenizer.bin",
    size: 433_869,
    sha256: "50a52ef822ee9e83de5ce9d0be0a025a773d019437f58b5ff9dcafb063ece361",
};

pub const ENTRIES: &[Entry] = &[
    Entry {
        key: "stories260K",
        name: "stories260K",
        licence: "MIT",
        about: "Karpathy's tinyllamas, llama2.c checkpoint, 260K parameters, 512-token vocabulary",
        files: &[
            ListedFile {
                repo: "karpathy/tinyllamas",
                path: "stories260K/tok512.bin",
                size: 6_227,
                sha256: "037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312",
            },
            ListedFile {
                repo: "karpathy/tinyllamas",
                path: "stories260K/stories260K.bin",
                size: 1_056_540,
                sha256: "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696",
            },
        ],
    },
    Entry {
        key: "stories15M",
        name: "stories15M",
        licence: "MIT",
        about: "Karpathy's tinyllamas, llama2.c checkpoint, 15M parameters, Llama 2's 32,000-token vocabulary",
        files: &[
            LLAMA2C_TOKENIZER,
            ListedFile {
                repo: "karpathy/tinyllamas",
                path: "stories15M.bin",
                size: 60_816_028,
                sha256: "cd590644d963867a2b6e5a1107f51fad663c41d79c149fbecbbb1f95fa81f49a",
            },
        ],
    },
    Entry {
        key: "stories110M",
        name: "stories110M",
        licence: "MIT",
        about: "Karpathy's tinyllamas, llama2.c checkpoint, 110M parameters, Llama 2's 32,000-token vocabulary",
        files: &[
            LLAMA2C_TOKENIZER,
            ListedFile {
                repo: "karpathy/tinyllamas",
                path: "stories110M.bin",
                size: 438_381_596,
                sha256: "515267168726a1ed1317a64a408492e6af3b67c1f71c5bd98c01d9d721803a24",
            },
        ],
    },
    Entry {
        key: "SmolLM2-135M-Instruct",
        name: "SmolLM2-135M-Instruct (GGUF, Q4_K_M)",
        licence: "Apache-2.0",
        about: "Hugging Face's SmolLM2, 135M parameters, chat template; bartowski's GGUF",
        files: &[ListedFile {
            repo: "bartowski/SmolLM2-135M-Instruct-GGUF",
            path: "SmolLM2-135M-Instruct-Q4_K_M.gguf",
            size: 105_454_432,
            sha256: "2e8040ceae7815abe0dcb3540b9995eaa1fa0d2ca9e797d0a635ae4433c68c2d",
        }],
    },
    Entry {
        key: "Qwen2.5-0.5B-Instruct",
        name: "Qwen2.5-0.5B-Instruct (GGUF, Q8_0)",
        licence: "Apache-2.0",
        about: "Qwen's 0.5B chat model, 151,936-token vocabulary; Qwen's own GGUF",
        files: &[ListedFile {
            repo: "Qwen/Qwen2.5-0.5B-Instruct-GGUF",
            path: "qwen2.5-0.5b-instruct-q8_0.gguf",
            size: 675_710_816,
            sha256: "ca59ca7f13d0e15a8cfa77bd17e65d24f6844b554a7b6c12e07a5f89ff76844e",
        }],
    },
];

/// The entry a link names (its key, in any case).
pub fn by_key(key: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.key.eq_ignore_ascii_case(key))
}

/// The keys, for messages.
pub fn keys() -> Vec<&'static str> {
    ENTRIES.iter().map(|e| e.key).collect()
}

/// The message id of the label of the model a link names, where it is a listed one.
pub fn label_id(link: &str) -> Option<String> {
    by_key(link).map(Entry::label_id)
}

impl Entry {
    /// The id of its label in the page's words (`listed-<key>`, `.` written `_`: Fluent's
    /// ids have no dots), which says what it is in the page's language.
    pub fn label_id(&self) -> String {
        format!("listed-{}", self.key.replace('.', "_"))
    }

    /// Its files' bytes together.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// The model to download, hub paths made against `hub`.
    pub fn model(&self, hub: &str) -> RemoteModel {
        RemoteModel {
            link: self.key.to_string(),
            key: super::safe_name(self.key),
            name: self.name.to_string(),
            files: self
                .files
                .iter()
                .map(|f| {
                    let url = if f.repo.is_empty() {
                        f.path.to_string()
                    } else {
                        format!("{hub}/{}/resolve/main/{}", f.repo, f.path)
                    };
                    RemoteFile {
                        name: super::file_name(&url),
                        url,
                        size: Some(f.size),
                        sha256: Some(f.sha256.to_string()),
                    }
                })
                .collect(),
        }
    }
}
