//! Models by link: a `model=` value resolved (`decoding_page::remote`), its files taken from
//! the browser's storage when it keeps them whole, else downloaded (the host's glue) with
//! the engine's header check run on the first bytes of the weights, then loaded as a dropped
//! file is. A failure keeps the current model; with none yet (a shared link opening), the
//! page's own model is loaded and the failure said.

use super::base::{err, Core, Host};
use decoding_engine::backend::choose::BackendChoice;
use decoding_engine::budget::Budget;
use decoding_engine::formats::source::{ModelFile, ModelSource};
use decoding_page::protocol::*;
use decoding_page::remote::{hub, ModelLink, Resolved};

/// The first bytes of a file still arriving, with its whole length: what the header check
/// reads while the rest downloads (a read past them is an error, never zeros).
pub struct Arriving {
    pub head: Vec<u8>,
    pub len: u64,
}

impl decoding_engine::formats::source::ByteSource for Arriving {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let have = self.head.len() as u64;
        if offset >= self.len {
            return Ok(0);
        }
        if offset + buf.len().min((self.len - offset) as usize) as u64 > have {
            return Err(std::io::Error::other(format!(
                "bytes past {have} have not arrived yet"
            )));
        }
        let n = buf.len().min((have - offset) as usize);
        buf[..n].copy_from_slice(&self.head[offset as usize..offset as usize + n]);
        Ok(n)
    }
}

/// The engine's checks of a model's files from their headers (`ModelSource::check`), as the
/// download runs them before the bulk has arrived.
pub(super) fn header_check(files: &mut [ModelFile]) -> Result<(), String> {
    let source = ModelSource::identify(files).map_err(|e| e.to_string())?;
    source
        .check(files, Budget::default())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

impl Core {
    pub(super) async fn load_remote(
        &mut self,
        link: &str,
        hub_base: &str,
        choice: BackendChoice,
        fallback: &[String],
        host: &dyn Host,
    ) -> Vec<Event> {
        let (name, files) = match remote_files(link, hub_base, host).await {
            Ok(got) => got,
            Err(e) => return self.failed(e, choice, fallback, host).await,
        };
        let mut events = self.load(files, choice, host).await;
        match events.first_mut() {
            Some(Event::Model(ModelEvent::Loaded { info })) => {
                info.link = Some(link.trim().to_string());
                info.name = name.clone();
                if let Some(m) = self.model.as_mut() {
                    m.name = name;
                }
                if !self.prompt.is_empty() {
                    events.extend(self.set_prompt(self.prompt.clone(), false, host).await);
                }
            }
            Some(Event::Model(ModelEvent::Error { message })) if self.model.is_none() => {
                let message = message.clone();
                return self.failed(message, choice, fallback, host).await;
            }
            _ => {}
        }
        events.extend(stored_event(host).await);
        events
    }

    /// A model by link could not be had: said, and with no model yet the page's own loaded.
    async fn failed(
        &mut self,
        e: String,
        choice: BackendChoice,
        fallback: &[String],
        host: &dyn Host,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        if self.model.is_none() && !fallback.is_empty() {
            events = self.load_urls(fallback, choice, host).await;
            events.push(err(format!("{e}; the page's own model is loaded instead")));
        } else {
            events.push(err(format!("{e}; the current model is kept")));
        }
        events.extend(stored_event(host).await);
        events
    }

    pub(super) async fn stored_request(&mut self, r: ModelRequest, host: &dyn Host) -> Vec<Event> {
        if let ModelRequest::DeleteStored { key } = r {
            if let Err(e) = host.delete_stored(&key).await {
                return vec![err(format!("could not delete {key}: {e}"))];
            }
        }
        match host.list_stored().await {
            Ok(e) => vec![Event::Model(e)],
            Err(e) => vec![err(format!("the browser's storage could not be read: {e}"))],
        }
    }
}

/// The name and files of the model `link` names: kept whole in the browser's storage,
/// else downloaded.
async fn remote_files(
    link: &str,
    hub_base: &str,
    host: &dyn Host,
) -> Result<(String, Vec<ModelFile>), String> {
    let resolved = ModelLink::parse(link)?.resolve(link.trim(), hub_base);
    let key = match &resolved {
        Resolved::Files(m) => &m.key,
        Resolved::Repo { key, .. } => key,
    };
    if let Some(kept) = host.stored(key).await {
        return Ok(kept);
    }
    let model = match resolved {
        Resolved::Files(m) => m,
        Resolved::Repo { repo, listing, key } => {
            let json = host.fetch_small(&listing, hub::MAX_LISTING).await?;
            hub::choose(&repo, &key, hub_base, &json)?
        }
    };
    let files = host.download(&model, &header_check).await?;
    Ok((model.name, files))
}

/// The storage's list, as an event (nothing where the browser has no storage).
async fn stored_event(host: &dyn Host) -> Option<Event> {
    host.list_stored().await.ok().map(Event::Model)
}
