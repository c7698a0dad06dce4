//! The editor against files as users keep them: odd key order, big and odd numbers, comments,
//! CRLF, tabs, symlinks, and a writer racing the commit.

use super::*;
use serde_json::json;

const USER_FILE: &str = r#"{
    "zeta": 12345678901234567890123,
    "version":   1.10,
    "alpha": [ 1, 2.50, 3e2 ],
    "hooks": {
        "Stop": [
            {
                "hooks": [
                    { "type": "command", "command": "echo mine" }
                ]
            }
        ]
    },
    "model": "opus"
}
"#;

fn edit(text: &str, change: impl FnOnce(&mut Value)) -> String {
    edit_json(Path::new("settings.json"), Some(text), JsonSyntax::Jsonc, |v| {
        change(v);
        Ok(())
    })
    .unwrap()
    .expect("the change changes something")
}

fn add_ours(v: &mut Value) {
    v["hooks"]["Stop"][0]["hooks"].as_array_mut().unwrap().push(json!({"type": "command", "command": "/vl hook"}));
    v["hooks"]["SessionStart"] = json!([{"hooks": [{"type": "command", "command": "/vl hook start"}]}]);
}

fn remove_ours(v: &mut Value) {
    v["hooks"]["Stop"][0]["hooks"].as_array_mut().unwrap().retain(|h| h["command"] != "/vl hook");
    v["hooks"].as_object_mut().unwrap().remove("SessionStart");
}

#[test]
fn an_edit_keeps_every_byte_it_did_not_change() {
    let installed = edit(USER_FILE, add_ours);
    assert!(
        installed.contains("{ \"type\": \"command\", \"command\": \"echo mine\" },\n                    {"),
        "{installed}"
    );
    for kept in ["12345678901234567890123", "\"version\":   1.10", "[ 1, 2.50, 3e2 ]", "\"echo mine\""] {
        assert!(installed.contains(kept), "{kept} kept:\n{installed}");
    }
    let order: Vec<usize> = ["\"zeta\"", "\"version\"", "\"alpha\"", "\"hooks\"", "\"model\""]
        .iter()
        .map(|k| installed.find(k).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "key order kept:\n{installed}");
    assert!(
        installed.contains("\n        \"SessionStart\": ["),
        "the new key is indented like its siblings:\n{installed}"
    );
    let back = edit(&installed, remove_ours);
    assert_eq!(back, USER_FILE, "removing what was added gives the user's bytes back");
}

#[test]
fn comments_crlf_and_tabs_survive_in_jsonc() {
    let text = "{\r\n\t// my model\r\n\t\"model\": \"opus\", /* why */\r\n\t\"hooks\": {}\r\n}\r\n";
    let installed = edit(text, |v| v["hooks"]["Stop"] = json!([]));
    assert!(installed.contains("\t// my model\r\n\t\"model\": \"opus\", /* why */\r\n"), "{installed:?}");
    assert!(installed.ends_with("}\r\n"), "{installed:?}");
    let back = edit(&installed, |v| {
        v["hooks"].as_object_mut().unwrap().remove("Stop");
    });
    assert_eq!(back, text);
}

#[test]
fn strict_json_refuses_comments_and_trailing_commas_with_a_clear_message() {
    for bad in ["{\"a\": 1,}", "{// c\n\"a\": 1}", "{\"a\": }", "[1]"] {
        let err = edit_json(Path::new("/h/settings.json"), Some(bad), JsonSyntax::Strict, |_| Ok(())).unwrap_err();
        let said = err.to_string();
        assert!(said.contains("/h/settings.json") && said.contains("nothing changed"), "{bad}: {said}");
    }
    assert!(edit_json(Path::new("x"), Some("{\"a\": 1,}"), JsonSyntax::Jsonc, |_| Ok(())).unwrap().is_none());
}

#[test]
fn a_missing_or_empty_file_becomes_a_pretty_object_and_no_change_writes_nothing() {
    for text in [None, Some(""), Some("\n  \n")] {
        let out = edit_json(Path::new("x"), text, JsonSyntax::Strict, |v| {
            v["hooks"] = json!({"Stop": [{"command": "/vl"}]});
            Ok(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), json!({"hooks": {"Stop": [{"command": "/vl"}]}}));
        assert!(out.contains("\n  \"hooks\"") && out.ends_with("}\n"), "{out:?}");
    }
    assert_eq!(edit_json(Path::new("x"), Some("{ \"a\":1 }"), JsonSyntax::Strict, |_| Ok(())).unwrap(), None);
}

#[test]
fn array_steps_keep_insert_patch_and_remove_in_place() {
    let text = "[\n  \"a\",\n  {\"k\": 1, \"x\": 07.0e1},\n  \"c\"\n]";
    let old: Value = serde_json::from_str("[\"a\", {\"k\": 1, \"x\": 70.0}, \"c\"]").unwrap();
    let mut new = old.clone();
    new[1]["k"] = json!(2);
    new.as_array_mut().unwrap().insert(0, json!("first"));
    new.as_array_mut().unwrap().remove(3);
    let steps = align(old.as_array().unwrap(), new.as_array().unwrap());
    assert_eq!(steps, [Step::Insert(0), Step::Keep, Step::Patch(1, 2), Step::Remove(2)]);
    // Through the tree, on an object wrapping the array (the editor's entry point).
    let wrapped = format!("{{\"list\": {text}}}");
    let out = edit_json(Path::new("x"), Some(&wrapped), JsonSyntax::Jsonc, |v| {
        v["list"] = new.clone();
        Ok(())
    });
    // `07.0e1` is not valid JSON: refused, not rewritten.
    assert!(out.is_err());
    let wrapped = wrapped.replace("07.0e1", "7.0e1");
    let out = edit_json(Path::new("x"), Some(&wrapped), JsonSyntax::Jsonc, |v| {
        v["list"] = new.clone();
        Ok(())
    })
    .unwrap()
    .unwrap();
    assert!(out.contains("{\"k\": 2, \"x\": 7.0e1}"), "{out}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["list"], new);
}

#[test]
fn a_changed_value_of_another_kind_is_replaced_where_it_was() {
    let out = edit("{\"a\": [1], \"b\": 2}", |v| {
        v["a"] = json!({"x": true});
        v["b"] = json!([null]);
    });
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), json!({"a": {"x": true}, "b": [null]}));
    assert!(out.find("\"a\"").unwrap() < out.find("\"b\"").unwrap(), "{out}");
}

#[test]
fn a_symlinked_file_is_written_through_and_the_link_stays() {
    let dir = tempfile::tempdir().unwrap();
    let dotfiles = dir.path().join("dotfiles");
    std::fs::create_dir(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("settings.json"), "{\"model\": \"opus\"}\n").unwrap();
    let claude = dir.path().join(".claude");
    std::fs::create_dir(&claude).unwrap();
    let link = claude.join("settings.json");
    if let Err(e) = crate::platform::symlink_file(Path::new("../dotfiles/settings.json"), &link) {
        // Windows without Developer Mode (or wine): the account may not make links.
        assert_eq!(std::env::consts::OS, "windows", "cannot make a symlink: {e}");
        return;
    }
    let mut file = SettingsFile::open(&link).unwrap();
    assert_eq!(file.target(), claude.join("../dotfiles/settings.json"));
    let written = file
        .commit(|text| {
            edit_json(&link, text, JsonSyntax::Strict, |v| {
                v["hooks"] = json!({});
                Ok(())
            })
        })
        .unwrap();
    assert!(matches!(written, Committed::Written { redone: false, .. }));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
    // (A one-line object that gets a key is laid out over lines: the crate's rule.)
    assert_eq!(
        std::fs::read_to_string(dotfiles.join("settings.json")).unwrap(),
        "{\n  \"model\": \"opus\",\n  \"hooks\": {}\n}\n"
    );
    let names: Vec<_> = std::fs::read_dir(&dotfiles).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "no temp file left: {names:?}");
    // A loop is refused, not followed for ever.
    let a = dir.path().join("a");
    crate::platform::symlink_file(&dir.path().join("b"), &a).unwrap();
    crate::platform::symlink_file(&a, &dir.path().join("b")).unwrap();
    assert!(matches!(SettingsFile::open(&a), Err(EditError::LinkLoop { .. })));
}

fn add_key(path: &Path, text: Option<&str>) -> Result<Option<String>, EditError> {
    edit_json(path, text, JsonSyntax::Strict, |v| {
        v["ours"] = json!(true);
        Ok(())
    })
}

#[test]
fn a_write_during_the_edit_is_kept_and_the_edit_redone_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, "{\n  \"a\": 1\n}").unwrap();
    let mut file = SettingsFile::open(&path).unwrap();
    // The IDE saves the file after we read it and before we rename.
    std::fs::write(&path, "{\n  \"a\": 1,\n  \"theirs\": 2\n}").unwrap();
    let mut calls = 0;
    let written = file
        .commit(|text| {
            calls += 1;
            add_key(&path, text)
        })
        .unwrap();
    assert!(matches!(written, Committed::Written { redone: true, .. }));
    assert_eq!(calls, 2);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\n  \"a\": 1,\n  \"theirs\": 2,\n  \"ours\": true\n}");
}

#[test]
fn a_file_that_keeps_changing_is_refused_and_left_as_the_other_writer_made_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, "{}").unwrap();
    let mut file = SettingsFile::open(&path).unwrap();
    let mut n = 0;
    let err = file
        .commit(|text| {
            n += 1;
            std::fs::write(&path, format!("{{\"n\": {n}}}")).unwrap();
            add_key(&path, text)
        })
        .unwrap_err();
    assert!(matches!(err, EditError::Busy { .. }), "{err}");
    assert!(err.to_string().contains("changed twice") && err.to_string().contains("nothing changed"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"n\": 2}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left");
}

#[test]
fn restore_puts_bytes_back_only_over_what_was_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, "{\"ours\": true}").unwrap();
    let mut file = SettingsFile::open(&path).unwrap();
    file.restore("{ \"mine\" : 1.10 }\n").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ \"mine\" : 1.10 }\n");
    let mut file = SettingsFile::open(&path).unwrap();
    std::fs::write(&path, "{\"edited\": 1}").unwrap();
    assert!(matches!(file.restore("{}"), Err(EditError::Busy { .. })));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"edited\": 1}");
    assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
