//! Our entries in a settings document, as plain JSON values (pure: no files). The
//! format-preserving write is [`super::settings_file`]'s.
//!
//! A hook is recognised as ours when its program is a file named `vl` (or `vl.exe`) and its
//! words are `hook <platform> <event>`, in either form. Ours is replaced in place (a moved
//! binary is re-pointed, a shell form becomes an exec form); missing ones are appended;
//! everything else is kept. Uninstall removes every hook whose command is ours (any event, any
//! path to `vl`), then the groups and event lists that only held ours, then an emptied `hooks`
//! object, and our status line (restoring the user's own, kept aside by install).

use serde_json::{Value, json};

pub use super::claude_form::HookForm;
use crate::hook::{is_ours, is_vl_program};

pub const CLAUDE_PLUGIN_HOOKS: &str = include_str!("../../../plugin/hooks/hooks.json");
pub const CURSOR_PLUGIN_HOOKS: &str = include_str!("../../../plugin/cursor/hooks.json");

/// Whether a `statusLine` value is ours.
fn is_our_statusline(value: &Value) -> bool {
    value
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|command| command.trim().strip_suffix(" statusline").is_some_and(is_vl_program))
}

/// Sets `statusLine` to ours; returns the user's own status line it replaced, to keep aside.
pub fn set_statusline(settings: &mut Value, program: &str) -> Result<Option<Value>, String> {
    let object = settings.as_object_mut().ok_or("the file does not hold a JSON object")?;
    let ours = json!({"type": "command", "command": format!("{program} statusline"), "padding": 0});
    let previous = object.insert("statusLine".into(), ours);
    Ok(previous.filter(|p| !is_our_statusline(p)))
}

/// Removes our `statusLine`, putting `kept` back in its place; says whether it removed one.
pub fn remove_statusline(settings: &mut Value, kept: Option<Value>) -> bool {
    let Some(object) = settings.as_object_mut() else { return false };
    if !object.get("statusLine").is_some_and(is_our_statusline) {
        return false;
    }
    match kept {
        Some(previous) => object.insert("statusLine".into(), previous),
        None => object.remove("statusLine"),
    };
    true
}

/// How a settings file lists one event's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `[{matcher?, hooks: [hook, …]}, …]`: Claude Code, Gemini CLI, Codex.
    Grouped,
    /// `[hook, …]`: Cursor, Copilot CLI.
    Flat,
}

/// The hook in one event's list that `ours` picks (the first), in either layout.
pub fn find_hook(entries: &mut [Value], layout: Layout, ours: impl Fn(&Value) -> bool) -> Option<&mut Value> {
    match layout {
        Layout::Grouped => entries
            .iter_mut()
            .filter_map(|g| g.get_mut("hooks").and_then(Value::as_array_mut))
            .flatten()
            .find(|h| ours(h)),
        Layout::Flat => entries.iter_mut().find(|h| ours(h)),
    }
}

/// Removes every hook that `ours` picks from a document's `hooks.<event>` lists; returns how
/// many it removed. Then the containers our removal emptied go, but only ours: a group that
/// held only our hooks (install puts ours in groups of their own), and an event list, the
/// `hooks` object or Cursor's `version` when `created` (the ledger's record of what install
/// created, [`containers`]'s paths) names it. With no record (an install by an older
/// version), what our removal emptied goes; a container the user had left empty stays.
pub fn remove_hooks(
    document: &mut Value,
    layout: Layout,
    ours: impl Fn(&Value) -> bool,
    created: Option<&[String]>,
) -> Result<usize, String> {
    let Some(hooks) = document.get_mut("hooks") else { return Ok(0) };
    let hooks = hooks.as_object_mut().ok_or("\"hooks\" is not an object")?;
    let ours_made = |path: &str| created.is_none_or(|c| c.iter().any(|p| p == path));
    let mut removed = 0;
    let mut emptied_lists = Vec::new();
    for (event, entries) in hooks.iter_mut() {
        let Some(entries) = entries.as_array_mut() else { continue };
        let before = removed;
        match layout {
            Layout::Grouped => {
                // Drop ours inside each group, then the groups we emptied.
                entries.retain_mut(|group| {
                    let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else { return true };
                    let had = list.len();
                    list.retain(|h| !ours(h));
                    removed += had - list.len();
                    !(list.is_empty() && had > 0)
                });
            }
            Layout::Flat => {
                let had = entries.len();
                entries.retain(|h| !ours(h));
                removed += had - entries.len();
            }
        }
        if removed > before && entries.is_empty() && ours_made(&format!("hooks/{event}")) {
            emptied_lists.push(event.clone());
        }
    }
    for event in emptied_lists {
        hooks.remove(&event);
    }
    if removed > 0 && hooks.is_empty() && ours_made("hooks") {
        let object = document.as_object_mut().expect("it held \"hooks\", so it is an object");
        object.remove("hooks");
        // Cursor's `"version": 1`, when install wrote it for our hooks alone.
        if created.is_some_and(|c| c.iter().any(|p| p == "version")) {
            object.remove("version");
        }
    }
    Ok(removed)
}

/// The containers of a hooks document install may create, as `/`-joined paths: `hooks`,
/// `hooks/<event>`, and a top-level `version`. Install records those present after its merge
/// and absent before ([`super::ledger::Written::added`]).
pub fn containers(document: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if document.get("version").is_some() {
        found.push("version".to_owned());
    }
    if let Some(hooks) = document.get("hooks").and_then(Value::as_object) {
        found.push("hooks".to_owned());
        found.extend(hooks.keys().map(|event| format!("hooks/{event}")));
    }
    found
}

/// The layout of a platform's file: Claude Code's groups, Cursor's flat list.
fn layout_of(platform: &str) -> Layout {
    if platform == "claude-code" { Layout::Grouped } else { Layout::Flat }
}

/// Removes every hook of ours from a Claude Code settings or Cursor hooks document, and the
/// containers that held only ours; returns how many hooks it removed.
pub fn remove_ours(document: &mut Value, platform: &str) -> Result<usize, String> {
    remove_hooks(document, layout_of(platform), |hook| our_target(hook).is_some_and(|(p, _)| p == platform), None)
}

pub fn plugin(text: &str) -> Value {
    serde_json::from_str(text).expect("the plugin's hooks.json is embedded at build time and is valid JSON")
}

/// The `(platform, event)` of a hook of ours, in either form; `None` for anyone else's.
pub fn our_target(hook: &Value) -> Option<(String, String)> {
    let command = hook.get("command")?.as_str()?;
    match hook.get("args") {
        Some(args) => {
            let words: Vec<&str> = args.as_array()?.iter().map(Value::as_str).collect::<Option<_>>()?;
            match (is_vl_program(command), words.as_slice()) {
                (true, ["hook", platform, event]) => Some(((*platform).to_owned(), (*event).to_owned())),
                _ => None,
            }
        }
        None => {
            let (platform, event) = plugin_target(command)?;
            is_ours(command, &platform, &event).then_some((platform, event))
        }
    }
}

/// The `<platform> <event>` a plugin command ends with.
fn plugin_target(command: &str) -> Option<(String, String)> {
    let mut words = command.split_whitespace().rev();
    let event = words.next()?.to_owned();
    let platform = words.next()?.to_owned();
    Some((platform, event))
}

/// Our command for a plugin command.
fn our_command(plugin_command: &str, program: &str) -> Result<(String, String, String), String> {
    let (platform, event) =
        plugin_target(plugin_command).ok_or_else(|| format!("unreadable plugin command {plugin_command:?}"))?;
    Ok((format!("{program} hook {platform} {event}"), platform, event))
}

fn object_field<'v>(value: &'v mut Value, field: &str, default: Value) -> Result<&'v mut Value, String> {
    let object = value.as_object_mut().ok_or("the file does not hold a JSON object")?;
    let slot = object.entry(field).or_insert(default.clone());
    if std::mem::discriminant(slot) != std::mem::discriminant(&default) {
        let kind = match default {
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
            _ => "a number",
        };
        return Err(format!("\"{field}\" is not {kind}"));
    }
    Ok(slot)
}

/// Claude Code's `settings.json`: `hooks.<Event>` is a list of `{matcher?, hooks:[{type,
/// command, args?, timeout}]}` groups. `program` is the binary's path for [`HookForm::Exec`],
/// its shell-ready form ([`crate::platform::shell_program`]) for [`HookForm::Shell`]. Returns
/// how many hooks are ours after the merge.
pub fn merge_claude(settings: &mut Value, plugin: &Value, program: &str, form: HookForm) -> Result<usize, String> {
    let hooks = object_field(settings, "hooks", json!({}))?;
    let mut count = 0;
    for (event, plugin_groups) in plugin["hooks"].as_object().into_iter().flatten() {
        let groups = object_field(hooks, event, json!([]))?.as_array_mut().expect("checked to be an array");
        for plugin_group in plugin_groups.as_array().into_iter().flatten() {
            let mut missing = Vec::new();
            for plugin_hook in plugin_group["hooks"].as_array().into_iter().flatten() {
                let (command, platform, vl_event) =
                    our_command(plugin_hook["command"].as_str().unwrap_or(""), program)?;
                let mut hook = plugin_hook.clone();
                match form {
                    HookForm::Shell => hook["command"] = json!(command),
                    HookForm::Exec => {
                        hook["command"] = json!(program);
                        hook["args"] = json!(["hook", platform, vl_event]);
                    }
                }
                let target = Some((platform.clone(), vl_event.clone()));
                match find_hook(groups, Layout::Grouped, |h| our_target(h) == target) {
                    Some(installed) => *installed = hook,
                    None => missing.push(hook),
                }
                count += 1;
            }
            if !missing.is_empty() {
                let mut group = plugin_group.clone();
                group["hooks"] = Value::Array(missing);
                groups.push(group);
            }
        }
    }
    Ok(count)
}

/// Cursor's `hooks.json`: `{"version":1,"hooks":{"<event>":[{"command":…}]}}`.
pub fn merge_cursor(document: &mut Value, plugin: &Value, program: &str) -> Result<usize, String> {
    object_field(document, "version", json!(1))?;
    let hooks = object_field(document, "hooks", json!({}))?;
    let mut count = 0;
    for (event, plugin_entries) in plugin["hooks"].as_object().into_iter().flatten() {
        for plugin_entry in plugin_entries.as_array().into_iter().flatten() {
            let (command, platform, vl_event) = our_command(plugin_entry["command"].as_str().unwrap_or(""), program)?;
            let mut entry = plugin_entry.clone();
            entry["command"] = json!(command);
            let entries = object_field(hooks, event, json!([]))?.as_array_mut().expect("checked to be an array");
            let target = Some((platform, vl_event));
            match find_hook(entries, Layout::Flat, |e| our_target(e) == target) {
                Some(installed) => *installed = entry,
                None => entries.push(entry),
            }
            count += 1;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_form_hooks_carry_args_and_replace_a_shell_form_in_place() {
        let plugin = plugin(CLAUDE_PLUGIN_HOOKS);
        let mut settings = json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "echo mine"},
            {"type": "command", "command": "'/old place/vl' hook claude-code summarize", "timeout": 15}]}]}});
        assert_eq!(
            merge_claude(&mut settings, &plugin, r"C:\Users\Ann Lee\.vibelearn\bin\vl.exe", HookForm::Exec),
            Ok(6)
        );
        let stop = &settings["hooks"]["Stop"][0]["hooks"];
        assert_eq!(stop.as_array().unwrap().len(), 2, "re-pointed, not duplicated: {stop}");
        assert_eq!(stop[1]["command"], r"C:\Users\Ann Lee\.vibelearn\bin\vl.exe");
        assert_eq!(stop[1]["args"], json!(["hook", "claude-code", "summarize"]));
        let once = settings.clone();
        merge_claude(&mut settings, &plugin, r"C:\Users\Ann Lee\.vibelearn\bin\vl.exe", HookForm::Exec).unwrap();
        assert_eq!(settings, once);
        assert_eq!(remove_ours(&mut settings, "claude-code"), Ok(6));
        assert_eq!(settings, json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}));
        // Someone else's program with the same words is not ours.
        assert_eq!(our_target(&json!({"command": "/bin/other", "args": ["hook", "claude-code", "stop"]})), None);
    }

    #[test]
    fn powershell_and_windows_paths_are_recognised_as_ours() {
        assert!(is_ours("& 'C:/Users/Ann Lee/.vibelearn/bin/vl.exe' hook cursor summarize", "cursor", "summarize"));
        assert!(is_ours(
            "C:/Users/ann/.vibelearn/bin/vl.exe hook claude-code observation",
            "claude-code",
            "observation"
        ));
        assert!(is_ours(r"C:\vl\VL.EXE hook cursor stop", "cursor", "stop"));
        assert!(!is_ours("& 'C:/tools/vlc.exe' hook cursor stop", "cursor", "stop"));
    }

    #[test]
    fn our_hooks_are_recognised_by_program_and_target() {
        assert!(is_ours("/usr/bin/vl hook claude-code observation", "claude-code", "observation"));
        assert!(is_ours("'/Users/Ann Lee/bin/vl' hook claude-code observation", "claude-code", "observation"));
        assert!(is_ours("vl hook cursor summarize", "cursor", "summarize"));
        assert!(!is_ours("/usr/bin/vl hook claude-code summarize", "claude-code", "observation"));
        assert!(!is_ours("/usr/bin/other hook claude-code observation", "claude-code", "observation"));
        assert!(!is_ours("echo done", "claude-code", "observation"));
    }

    #[test]
    fn claude_merge_keeps_foreign_hooks_and_is_idempotent() {
        let plugin = plugin(CLAUDE_PLUGIN_HOOKS);
        let mut settings = json!({
            "model": "opus",
            "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}],
                      "Stop": [{"hooks": [{"type": "command", "command": "/old/place/vl hook claude-code summarize"}]}]}
        });
        assert_eq!(merge_claude(&mut settings, &plugin, "/new/vl", HookForm::Shell), Ok(6));
        let once = settings.clone();
        assert_eq!(merge_claude(&mut settings, &plugin, "/new/vl", HookForm::Shell), Ok(6));
        assert_eq!(settings, once, "a second merge changes nothing");
        assert_eq!(settings["model"], "opus");
        let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2);
        assert_eq!(post[0]["hooks"][0]["command"], "echo mine");
        assert_eq!(post[1]["matcher"], "*");
        assert_eq!(post[1]["hooks"][0]["command"], "/new/vl hook claude-code observation");
        let stop = settings["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 1, "the old install was re-pointed, not duplicated");
        assert_eq!(stop[0]["hooks"][0]["command"], "/new/vl hook claude-code summarize");
        assert_eq!(stop[0]["hooks"][0]["timeout"], 15);
        assert_eq!(settings["hooks"]["SessionStart"][0]["matcher"], "startup|resume|clear|compact");
        // Failed tool calls come through their own event, to the same hook.
        let failure = settings["hooks"]["PostToolUseFailure"].as_array().unwrap();
        assert_eq!(failure.len(), 1);
        assert_eq!(failure[0]["matcher"], "*");
        assert_eq!(failure[0]["hooks"][0]["command"], "/new/vl hook claude-code observation");
    }

    #[test]
    fn an_earlier_install_is_upgraded_in_place() {
        // What `vl install claude-code` wrote before PostToolUseFailure was registered.
        let mut plugin_before = plugin(CLAUDE_PLUGIN_HOOKS);
        plugin_before["hooks"].as_object_mut().unwrap().remove("PostToolUseFailure");
        let mut settings =
            json!({"hooks": {"PostToolUseFailure": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]}});
        merge_claude(&mut settings, &plugin_before, "/old/vl", HookForm::Shell).unwrap();
        assert_eq!(settings["hooks"]["PostToolUseFailure"].as_array().unwrap().len(), 1);
        merge_claude(&mut settings, &plugin(CLAUDE_PLUGIN_HOOKS), "/new/vl", HookForm::Shell).unwrap();
        let hooks = settings["hooks"].as_object().unwrap();
        for (event, groups) in hooks {
            let commands: Vec<&str> = groups
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|g| g["hooks"].as_array().unwrap())
                .filter_map(|h| h["command"].as_str())
                .collect();
            let ours: Vec<&&str> = commands.iter().filter(|c| c.contains(" hook claude-code ")).collect();
            assert_eq!(ours.len(), 1, "{event}: exactly one of ours: {commands:?}");
            assert!(ours[0].starts_with("/new/vl "), "{event}: re-pointed: {commands:?}");
        }
        assert_eq!(settings["hooks"]["PostToolUseFailure"][0]["hooks"][0]["command"], "./notify.sh");
    }

    #[test]
    fn cursor_merge_keeps_foreign_hooks_and_is_idempotent() {
        let plugin = plugin(CURSOR_PLUGIN_HOOKS);
        let mut document = json!({"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}});
        assert_eq!(merge_cursor(&mut document, &plugin, "/bin/vl"), Ok(7));
        let once = document.clone();
        merge_cursor(&mut document, &plugin, "/bin/vl").unwrap();
        assert_eq!(document, once);
        assert_eq!(
            document["hooks"]["stop"],
            json!([{"command": "./audit.sh"}, {"command": "/bin/vl hook cursor summarize"}])
        );
        assert_eq!(document["hooks"]["afterMCPExecution"], json!([{"command": "/bin/vl hook cursor observation"}]));
        assert_eq!(document["hooks"]["postToolUseFailure"], json!([{"command": "/bin/vl hook cursor observation"}]));
        assert_eq!(document["hooks"]["sessionEnd"], json!([{"command": "/bin/vl hook cursor session-complete"}]));
        let mut empty = json!({});
        merge_cursor(&mut empty, &plugin, "/bin/vl").unwrap();
        assert_eq!(empty["version"], 1);
    }

    #[test]
    fn uninstall_removes_exactly_what_install_added() {
        let original = json!({
            "model": "opus",
            "statusLine": {"type": "command", "command": "~/bin/my-status"},
            "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]}
        });
        let mut settings = original.clone();
        merge_claude(&mut settings, &plugin(CLAUDE_PLUGIN_HOOKS), "/opt/vl", HookForm::Shell).unwrap();
        let kept = set_statusline(&mut settings, "/opt/vl").unwrap();
        assert_eq!(kept, Some(original["statusLine"].clone()));
        assert_eq!(settings["statusLine"]["command"], "/opt/vl statusline");
        assert_eq!(set_statusline(&mut settings.clone(), "/new/vl").unwrap(), None, "ours is not kept aside");
        assert_eq!(remove_ours(&mut settings, "claude-code"), Ok(6));
        assert!(remove_statusline(&mut settings, kept));
        assert_eq!(settings, original);
        assert_eq!(remove_ours(&mut settings, "claude-code"), Ok(0), "a second uninstall changes nothing");
        assert!(!remove_statusline(&mut settings, None), "the user's own status line stays");

        let mut fresh = json!({});
        merge_claude(&mut fresh, &plugin(CLAUDE_PLUGIN_HOOKS), "/opt/vl", HookForm::Shell).unwrap();
        set_statusline(&mut fresh, "/opt/vl").unwrap();
        remove_ours(&mut fresh, "claude-code").unwrap();
        assert!(remove_statusline(&mut fresh, None));
        assert_eq!(fresh, json!({}), "containers only we filled go too");

        let cursor_original = json!({"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}});
        let mut cursor = cursor_original.clone();
        merge_cursor(&mut cursor, &plugin(CURSOR_PLUGIN_HOOKS), "/opt/vl").unwrap();
        assert_eq!(remove_ours(&mut cursor, "cursor"), Ok(7));
        assert_eq!(cursor, cursor_original);
    }

    #[test]
    fn a_file_of_the_wrong_shape_is_refused() {
        assert!(merge_cursor(&mut json!({"hooks": []}), &plugin(CURSOR_PLUGIN_HOOKS), "/bin/vl").is_err());
        assert!(merge_cursor(&mut json!({"version": "one"}), &plugin(CURSOR_PLUGIN_HOOKS), "/bin/vl").is_err());
        assert!(
            merge_claude(&mut json!({"hooks": {"Stop": {}}}), &plugin(CLAUDE_PLUGIN_HOOKS), "/bin/vl", HookForm::Shell)
                .is_err()
        );
    }
}
