//! The browser's storage for models by link: the Origin Private File System (OPFS), a
//! folder a model (`models/<key>/`), its files written as they arrive through synchronous
//! access handles (a dedicated worker's fast path), and `meta.json`, which says the model and
//! whether every file arrived whole and checked. A kept model is read from there with no
//! network: its files are byte sources over the handles, read a slice at a time.

use decoding_engine::formats::source::{ByteSource, ModelFile};
use decoding_page::protocol::{Event, ModelEvent, StoredModel};
use decoding_page::remote::RemoteModel;
use js_sys::Reflect;
use serde::{Deserialize, Serialize};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DedicatedWorkerGlobalScope, FileSystemDirectoryHandle, FileSystemFileHandle,
    FileSystemGetDirectoryOptions, FileSystemGetFileOptions, FileSystemReadWriteOptions,
    FileSystemRemoveOptions, FileSystemSyncAccessHandle, StorageEstimate,
};

/// A kept model's record: the model, whether every file is whole and checked, and each
/// file's state (whole, its length, its ETag: what a resume in a later session needs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    pub model: RemoteModel,
    pub complete: bool,
    #[serde(default)]
    pub files: Vec<FileState>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FileState {
    pub name: String,
    /// Arrived whole and checked.
    pub done: bool,
    pub size: Option<u64>,
    pub etag: Option<String>,
}

impl Meta {
    /// A file's state (a new one when none is kept).
    pub fn state(&self, name: &str) -> FileState {
        self.files
            .iter()
            .find(|f| f.name == name)
            .cloned()
            .unwrap_or_default()
    }

    pub fn set(&mut self, name: &str, done: bool, size: Option<u64>, etag: Option<String>) {
        self.files.retain(|f| f.name != name);
        self.files.push(FileState {
            name: name.to_string(),
            done,
            size,
            etag,
        });
    }
}

const META: &str = "meta.json";

pub fn js_text(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            Reflect::get(&e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

/// The storage's `models` folder.
pub struct Store {
    models: FileSystemDirectoryHandle,
}

impl Store {
    pub async fn open(scope: &DedicatedWorkerGlobalScope) -> Result<Store, String> {
        let storage = scope.navigator().storage();
        let root: FileSystemDirectoryHandle = JsFuture::from(storage.get_directory())
            .await
            .map_err(|e| format!("the browser's storage is not available ({})", js_text(e)))?
            .unchecked_into();
        Ok(Store {
            models: dir(&root, "models", true).await?,
        })
    }

    /// A model's folder (made when `create`).
    pub async fn folder(
        &self,
        key: &str,
        create: bool,
    ) -> Result<FileSystemDirectoryHandle, String> {
        dir(&self.models, key, create).await
    }

    pub async fn remove(&self, key: &str) -> Result<(), String> {
        let o = FileSystemRemoveOptions::new();
        o.set_recursive(true);
        JsFuture::from(self.models.remove_entry_with_options(key, &o))
            .await
            .map(|_| ())
            .map_err(js_text)
    }

    /// Every kept model, with its bytes so far.
    pub async fn list(&self) -> Result<Vec<StoredModel>, String> {
        let mut out = Vec::new();
        let it = self.models.values();
        loop {
            let next = JsFuture::from(it.next().map_err(js_text)?)
                .await
                .map_err(js_text)?;
            if Reflect::get(&next, &"done".into())
                .ok()
                .and_then(|d| d.as_bool())
                .unwrap_or(true)
            {
                break;
            }
            let Ok(value) = Reflect::get(&next, &"value".into()) else {
                continue;
            };
            let Ok(folder) = value.dyn_into::<FileSystemDirectoryHandle>() else {
                continue;
            };
            let Some(meta) = read_meta(&folder).await else {
                continue;
            };
            let mut bytes = 0;
            for f in &meta.model.files {
                bytes += file_size(&folder, &f.name).await.unwrap_or(0);
            }
            out.push(StoredModel {
                key: folder.name(),
                name: meta.model.name.clone(),
                link: meta.model.link.clone(),
                bytes,
                complete: meta.complete,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

async fn dir(
    parent: &FileSystemDirectoryHandle,
    name: &str,
    create: bool,
) -> Result<FileSystemDirectoryHandle, String> {
    let o = FileSystemGetDirectoryOptions::new();
    o.set_create(create);
    Ok(
        JsFuture::from(parent.get_directory_handle_with_options(name, &o))
            .await
            .map_err(|e| format!("{name}: {}", js_text(e)))?
            .unchecked_into(),
    )
}

async fn file(
    folder: &FileSystemDirectoryHandle,
    name: &str,
    create: bool,
) -> Result<FileSystemFileHandle, String> {
    let o = FileSystemGetFileOptions::new();
    o.set_create(create);
    Ok(
        JsFuture::from(folder.get_file_handle_with_options(name, &o))
            .await
            .map_err(|e| format!("{name}: {}", js_text(e)))?
            .unchecked_into(),
    )
}

pub async fn file_size(folder: &FileSystemDirectoryHandle, name: &str) -> Option<u64> {
    let h = file(folder, name, false).await.ok()?;
    let f: web_sys::File = JsFuture::from(h.get_file()).await.ok()?.unchecked_into();
    Some(f.size() as u64)
}

/// A synchronous access handle on a file of the folder (made when `create`).
pub async fn handle(
    folder: &FileSystemDirectoryHandle,
    name: &str,
    create: bool,
) -> Result<FileSystemSyncAccessHandle, String> {
    let h = file(folder, name, create).await?;
    Ok(JsFuture::from(h.create_sync_access_handle())
        .await
        .map_err(|e| {
            format!(
                "{name} cannot be opened in the browser's storage ({})",
                js_text(e)
            )
        })?
        .unchecked_into())
}

pub async fn read_meta(folder: &FileSystemDirectoryHandle) -> Option<Meta> {
    let h = handle(folder, META, false).await.ok()?;
    let len = h.get_size().ok()? as usize;
    let mut buf = vec![0; len.min(1 << 20)];
    let got = read_at(&h, 0, &mut buf);
    h.close();
    buf.truncate(got.ok()?);
    serde_json::from_slice(&buf).ok()
}

pub async fn write_meta(folder: &FileSystemDirectoryHandle, meta: &Meta) -> Result<(), String> {
    let text = serde_json::to_vec(meta).map_err(|e| e.to_string())?;
    let h = handle(folder, META, true).await?;
    let r = h
        .truncate_with_f64(0.0)
        .and_then(|_| write_at(&h, 0, &text).map(|_| ()))
        .and_then(|_| h.flush());
    h.close();
    r.map_err(js_text)
}

pub fn read_at(h: &FileSystemSyncAccessHandle, at: u64, buf: &mut [u8]) -> Result<usize, JsValue> {
    let o = FileSystemReadWriteOptions::new();
    o.set_at(at as f64);
    h.read_with_u8_array_and_options(buf, &o)
        .map(|n| n as usize)
}

pub fn write_at(h: &FileSystemSyncAccessHandle, at: u64, buf: &[u8]) -> Result<usize, JsValue> {
    let o = FileSystemReadWriteOptions::new();
    o.set_at(at as f64);
    h.write_with_u8_array_and_options(buf, &o)
        .map(|n| n as usize)
}

/// The storage's usage and quota (`navigator.storage.estimate()`), where the browser says.
pub async fn estimate(scope: &DedicatedWorkerGlobalScope) -> (Option<u64>, Option<u64>) {
    let Ok(p) = scope.navigator().storage().estimate() else {
        return (None, None);
    };
    let Ok(e) = JsFuture::from(p).await else {
        return (None, None);
    };
    let e: StorageEstimate = e.unchecked_into();
    (
        e.get_usage().map(|u| u as u64),
        e.get_quota().map(|q| q as u64),
    )
}

/// A kept file, read a slice at a time through its handle (closed when dropped); its reads'
/// progress posted as a picked file's is.
pub struct KeptFile {
    handle: FileSystemSyncAccessHandle,
    len: u64,
    name: String,
    read: u64,
    posted: u64,
    post: Rc<dyn Fn(&Event)>,
}

impl ByteSource for KeptFile {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let n =
            read_at(&self.handle, offset, buf).map_err(|e| std::io::Error::other(js_text(e)))?;
        self.read = self.read.max(offset + n as u64);
        if self.read - self.posted >= (self.len / 64).max(1) || self.read == self.len {
            self.posted = self.read;
            (self.post)(&Event::Model(ModelEvent::Progress {
                file: self.name.clone(),
                loaded: self.read,
                total: Some(self.len),
            }));
        }
        Ok(n)
    }
}

impl Drop for KeptFile {
    fn drop(&mut self) {
        self.handle.close();
    }
}

/// The files of the model kept whole under `key`, opened for reading; None when it is not
/// kept, not whole, or cannot be opened.
pub async fn open_kept(
    store: &Store,
    key: &str,
    post: Rc<dyn Fn(&Event)>,
) -> Option<(String, Vec<ModelFile>)> {
    let folder = store.folder(key, false).await.ok()?;
    let meta = read_meta(&folder).await.filter(|m| m.complete)?;
    let mut files = Vec::new();
    for f in &meta.model.files {
        let handle = handle(&folder, &f.name, false).await.ok()?;
        let len = handle.get_size().ok()? as u64;
        files.push(ModelFile::new(
            f.name.clone(),
            Box::new(KeptFile {
                handle,
                len,
                name: f.name.clone(),
                read: 0,
                posted: 0,
                post: post.clone(),
            }),
        ));
    }
    Some((meta.model.name, files))
}
