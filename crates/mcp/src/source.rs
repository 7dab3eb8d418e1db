//! Skills taken from an MCP server that serves the skills extension
//! (`io.modelcontextprotocol/skills`), as a [`SkillSource`]: [`McpSource`]. The entries of
//! `skills/list` build the records (a scan reads each skill's frontmatter from its entry,
//! fetching nothing); a file is fetched when it is read, and verified against its entry's
//! size and digest, a `SKILL.md` also against the entry's frontmatter (compared as YAML 1.2
//! core-schema values). Only files the entry lists are read. The last good entries are held
//! in memory: a server that goes away leaves its skills listed, and reads fail with a clear
//! error until it answers again. The server is reached as [`McpServer`] says: a program the
//! host starts (stdio), or streamable HTTP.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use base64::Engine as _;
use rmcp::model::{ReadResourceRequestParams, ResourceContents, Skill, SkillResources};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use skills_model::RemoteOrigin;
use skills_storage::{ReadError, SkillSource, SourceNotifier};

use crate::connect::{McpServer, SourceError};

/// One skill as the server's entry describes it.
#[derive(Debug, Clone)]
struct Held {
    /// The entry as listed.
    entry: Skill,
    /// Its files by path relative to the skill folder: URI, digest, size.
    files: BTreeMap<String, (String, String, u64)>,
}

/// What the source holds: the last good entries by skill folder, the client while the
/// server answers, and the index's notifier.
#[derive(Default)]
struct State {
    skills: BTreeMap<String, Held>,
    client: Option<Arc<RunningService<RoleClient, Follower>>>,
    notifier: Option<SourceNotifier>,
}

/// A skill source over one MCP server.
pub struct McpSource {
    server: McpServer,
    runtime: tokio::runtime::Runtime,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for McpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSource")
            .field("label", &self.server.label)
            .finish_non_exhaustive()
    }
}

/// The client's handler: a `resources/list_changed` from the server lists its skills again
/// and tells the index.
#[derive(Clone)]
struct Follower {
    state: Weak<Mutex<State>>,
}

impl ClientHandler for Follower {
    async fn on_resource_list_changed(&self, context: NotificationContext<RoleClient>) {
        let Some(state) = self.state.upgrade() else {
            return;
        };
        if let Ok(listed) = context.peer.list_all_skills().await {
            let notifier = {
                let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                state.skills = held(listed);
                state.notifier.clone()
            };
            if let Some(n) = notifier {
                n.changed();
            }
        }
    }
}

/// The skill folder of an entry: its URI without the scheme and `/SKILL.md`.
fn folder_of(uri: &str) -> Option<String> {
    let rest = uri.split_once("://")?.1;
    let dir = rest.strip_suffix("/SKILL.md")?;
    (!dir.is_empty()
        && !dir
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == ".."))
    .then(|| dir.to_owned())
}

/// The entries worth holding, by folder: valid, with a manifest (a `"dynamic"` skill cannot
/// be verified and is declined), each logged when left out.
fn held(listed: Vec<Skill>) -> BTreeMap<String, Held> {
    let mut out = BTreeMap::new();
    for entry in listed {
        let reason = match (&entry.validate(), &entry.resources, folder_of(&entry.uri)) {
            (Err(e), _, _) => Some(e.to_string()),
            (_, SkillResources::Dynamic, _) => {
                Some("its resources are \"dynamic\": nothing to verify".into())
            }
            (_, _, None) => Some("its URI names no skill folder".into()),
            _ => None,
        };
        if let Some(reason) = reason {
            tracing::warn!(uri = %entry.uri, %reason, "an MCP server's skill is not taken");
            continue;
        }
        let Some(dir) = folder_of(&entry.uri) else {
            continue;
        };
        let SkillResources::Files(resources) = &entry.resources else {
            continue;
        };
        let prefix = format!(
            "{}/",
            entry.uri.trim_end_matches("SKILL.md").trim_end_matches('/')
        );
        let files = resources
            .iter()
            .filter_map(|r| {
                let rel = r.uri.strip_prefix(&prefix)?;
                Some((rel.to_owned(), (r.uri.clone(), r.digest.clone(), r.size)))
            })
            .collect();
        out.insert(dir, Held { entry, files });
    }
    out
}

impl McpSource {
    /// Starts the server (or reaches it over HTTP), lists its skills, and holds them.
    pub fn connect(server: McpServer) -> Result<Arc<McpSource>, SourceError> {
        let fail = |reason: String| SourceError::new(&server.label, reason);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("skills-mcp-source")
            .enable_all()
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let source = Arc::new(McpSource {
            server: server.clone(),
            runtime,
            state: Arc::new(Mutex::new(State::default())),
        });
        source.reconnect().map_err(fail)?;
        Ok(source)
    }

    /// Starts the server again or opens a new HTTP session (when it is not answering) and
    /// lists its skills; the entries held stay as they were when that fails.
    fn reconnect(&self) -> Result<(), String> {
        let follower = Follower {
            state: Arc::downgrade(&self.state),
        };
        let server = self.server.clone();
        let within = server.answer_within;
        let (client, listed) = self.runtime.block_on(async move {
            let answer = async move {
                let client = crate::connect::open(&server, follower).await?;
                let listed = client
                    .list_all_skills()
                    .await
                    .map_err(|e| format!("skills/list failed: {e}"))?;
                Ok::<_, String>((client, listed))
            };
            tokio::time::timeout(within, answer)
                .await
                .map_err(|_| not_answering_within(within))?
        })?;
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.skills = held(listed);
        state.client = Some(Arc::new(client));
        Ok(())
    }

    /// The client, starting the server again when it has gone.
    fn client(&self) -> Result<Arc<RunningService<RoleClient, Follower>>, ReadError> {
        let live = {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.client.clone().filter(|c| !c.is_closed())
        };
        if let Some(client) = live {
            return Ok(client);
        }
        self.reconnect().map_err(|reason| {
            ReadError::Io(std::io::Error::other(format!(
                "the MCP server {} is not answering ({reason}); its skills stay listed from its last entries",
                self.server.label
            )))
        })?;
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.client.clone().ok_or(ReadError::NotFound)
    }

    /// The held skill and the file a source path names.
    fn find(&self, path: &str) -> Option<(Held, String)> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.skills.iter().find_map(|(dir, held)| {
            let rel = path.strip_prefix(dir.as_str())?.strip_prefix('/')?;
            Some((held.clone(), rel.to_owned()))
        })
    }
}

/// Why a server counts as not answering.
fn not_answering_within(within: std::time::Duration) -> String {
    format!("it did not answer within {} ms", within.as_millis())
}

/// A verification failure, as a read error that names the file and the server.
fn failed(label: &str, uri: &str, why: String) -> ReadError {
    ReadError::Io(std::io::Error::other(format!(
        "{uri} from the MCP server {label} failed verification: {why}"
    )))
}

/// The frontmatter an entry states, as one JSON object.
fn entry_frontmatter(entry: &Skill) -> serde_json::Map<String, serde_json::Value> {
    let mut map = entry.frontmatter.extra.clone();
    map.insert("name".into(), entry.frontmatter.name.clone().into());
    map.insert(
        "description".into(),
        entry.frontmatter.description.clone().into(),
    );
    map
}

impl SkillSource for McpSource {
    fn skill_dirs(&self) -> Vec<String> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.skills.keys().cloned().collect()
    }

    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let label = &self.server.label;
        // The client first: a server started again lists its skills again, and a file is
        // verified against the entry it now states.
        let client = self.client()?;
        let (held, rel) = self.find(path).ok_or(ReadError::NotFound)?;
        let Some((uri, digest, size)) = held.files.get(&rel).cloned() else {
            let shown = format!("{}/{rel}", held.entry.uri.trim_end_matches("/SKILL.md"));
            return Err(failed(
                label,
                &shown,
                "the entry held does not list it".into(),
            ));
        };
        if size > limit {
            return Err(ReadError::TooLarge { size, limit });
        }
        let within = self.server.answer_within;
        let fetch = |client: Arc<RunningService<RoleClient, Follower>>| {
            let request = client.read_resource(ReadResourceRequestParams::new(uri.clone()));
            match self
                .runtime
                .block_on(async { tokio::time::timeout(within, request).await })
            {
                Ok(read) => read,
                // A server that stopped answering is dropped (a program is stopped) and
                // reached again at the next read.
                Err(_) => {
                    self.state
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .client = None;
                    Err(rmcp::ServiceError::McpError(
                        rmcp::ErrorData::internal_error(not_answering_within(within), None),
                    ))
                }
            }
        };
        let read = match fetch(client) {
            Ok(read) => read,
            Err(rmcp::ServiceError::McpError(e)) => {
                return Err(ReadError::Io(std::io::Error::other(format!(
                    "{uri} from the MCP server {label}: {}",
                    e.message
                ))))
            }
            // The transport is gone: the server is started again, once.
            Err(_) => {
                self.state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .client = None;
                fetch(self.client()?).map_err(|e| {
                    ReadError::Io(std::io::Error::other(format!(
                        "{uri} from the MCP server {label}: {e}"
                    )))
                })?
            }
        };
        let bytes = match read.contents.into_iter().next() {
            Some(ResourceContents::TextResourceContents { text, .. }) => text.into_bytes(),
            Some(ResourceContents::BlobResourceContents { blob, .. }) => {
                base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(|e| failed(label, &uri, e.to_string()))?
            }
            _ => return Err(failed(label, &uri, "no contents".into())),
        };
        rmcp::model::SkillResource::new(uri.clone(), digest, size)
            .verify(&bytes)
            .map_err(|e| failed(label, &uri, e.to_string()))?;
        if rel == "SKILL.md" {
            let read = skills_parser::core_frontmatter(&bytes)
                .map_err(|e| failed(label, &uri, e.to_string()))?;
            if read != entry_frontmatter(&held.entry) {
                return Err(failed(
                    label,
                    &uri,
                    "its frontmatter differs from the entry's".into(),
                ));
            }
        }
        Ok(bytes)
    }

    fn read_prefix(&self, path: &str, max: u64, buf: &mut Vec<u8>) -> Result<u64, ReadError> {
        // A scan reads a skill's frontmatter: from its entry, fetching nothing.
        let (held, rel) = self.find(path).ok_or(ReadError::NotFound)?;
        if rel != "SKILL.md" {
            let bytes = self.read(path, u64::MAX)?;
            let size = bytes.len() as u64;
            buf.extend_from_slice(
                &bytes[..bytes.len().min(usize::try_from(max).unwrap_or(usize::MAX))],
            );
            return Ok(size);
        }
        let json = serde_json::to_string(&entry_frontmatter(&held.entry)).unwrap_or_default();
        let text = format!("---\n{json}\n---\n");
        let size = text.len() as u64;
        buf.extend_from_slice(
            &text.as_bytes()[..text.len().min(usize::try_from(max).unwrap_or(usize::MAX))],
        );
        Ok(size)
    }

    fn files(&self, skill_dir: &str) -> Vec<(String, u64)> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state
            .skills
            .get(skill_dir)
            .map(|h| {
                h.files
                    .iter()
                    .filter(|(rel, _)| rel.as_str() != "SKILL.md")
                    .map(|(rel, (_, _, size))| (rel.clone(), *size))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn is_dir(&self, path: &str) -> bool {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.skills.iter().any(|(dir, h)| {
            path.strip_prefix(dir.as_str())
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|sub| h.files.keys().any(|f| f.starts_with(&format!("{sub}/"))))
        })
    }

    fn held_files(&self, skill_dir: &str) -> Option<Vec<skills_storage::HeldFile>> {
        // The entry as listed now: a session that loads the skill holds it, and its reads
        // of that skill are checked against it, whatever the server lists later.
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let held = state.skills.get(skill_dir)?;
        Some(
            held.files
                .iter()
                .map(|(rel, (_, digest, size))| skills_storage::HeldFile {
                    path: rel.clone(),
                    digest: digest.to_ascii_lowercase(),
                    size: *size,
                })
                .collect(),
        )
    }

    fn remote_origin(&self) -> Option<RemoteOrigin> {
        Some(RemoteOrigin::mcp(&self.server.label))
    }

    fn location(&self) -> Option<String> {
        Some(format!("mcp:{}", self.server.label))
    }

    fn set_notifier(&self, notifier: SourceNotifier) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .notifier = Some(notifier);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that never answers its handshake is not a source: connecting gives up
    /// after the server's answering limit, with that reason, and never hangs.
    #[cfg(unix)]
    #[test]
    fn regression_a_server_that_never_answers_is_given_up_on() {
        let server = McpServer::stdio("mute", vec!["sleep".into(), "600".into()])
            .answering_within(std::time::Duration::from_millis(200));
        let error = McpSource::connect(server)
            .expect_err("a mute server")
            .to_string();
        assert!(error.contains("the MCP server mute"), "{error}");
        assert!(error.contains("did not answer within 200 ms"), "{error}");
    }
}
