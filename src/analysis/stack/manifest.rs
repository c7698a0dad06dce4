//! Manifest parsers: each turns one manifest file into the list of packages it declares.
//! JSON manifests go through serde_json and TOML ones through the toml crate (real parsers, so
//! a key that merely looks like a dependency in a comment or a string never counts); the
//! formats that are not JSON/TOML (requirements.txt, go.mod, Gemfile, Gradle scripts) are read
//! line by line with comments stripped, and pom.xml through an XML parser (`roxmltree`), read
//! by element path so that an `<exclusion>` or a plugin's own dependencies never pass for the
//! project's.
//!
//! A manifest that does not parse is an `Err` and the caller skips it: one broken file must not
//! hide the rest of a monorepo.

use super::super::model::SourceFile;
use serde_json::Value as Json;
use std::fmt;

/// Which package ecosystem a manifest belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ecosystem {
    Npm,
    PyPi,
    Go,
    Cargo,
    RubyGems,
    /// pom.xml and Gradle scripts; names are `group:artifact` (plugins: their id).
    Jvm,
    Composer,
}

/// How a package is declared; it sets the confidence of what it reveals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    /// dependencies, require, the main `[dependencies]` table.
    Runtime,
    /// devDependencies, test scopes, dev groups and extras.
    Dev,
    /// Go's `// indirect`: pulled in by another module, not chosen by the project.
    Indirect,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dep {
    /// As the ecosystem spells it; PyPI names are normalised (PEP 503: lowercase, `-`).
    pub name: String,
    pub kind: DepKind,
}

/// One parsed manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub path: String,
    pub ecosystem: Ecosystem,
    pub deps: Vec<Dep>,
    /// Extra language evidence found in the manifest itself (`typescript` in package.json,
    /// the Kotlin plugin in a Gradle script).
    pub languages: Vec<&'static str>,
}

/// Why a manifest was skipped.
#[derive(Debug)]
pub enum ManifestError {
    /// The file name is not a manifest this module knows.
    UnknownKind,
    Json(serde_json::Error),
    Toml(toml::de::Error),
    /// The JSON parsed but its top level is not an object.
    NotAnObject,
    /// pom.xml is not well-formed XML.
    Xml(roxmltree::Error),
    /// pom.xml parsed but its root is not `<project>`.
    NotAPom,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::UnknownKind => write!(f, "not a known manifest file name"),
            ManifestError::Json(e) => write!(f, "invalid JSON: {e}"),
            ManifestError::Toml(e) => write!(f, "invalid TOML: {e}"),
            ManifestError::NotAnObject => write!(f, "top level is not a JSON object"),
            ManifestError::Xml(e) => write!(f, "invalid XML: {e}"),
            ManifestError::NotAPom => write!(f, "the XML's root element is not <project>"),
        }
    }
}

impl std::error::Error for ManifestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ManifestError::Json(e) => Some(e),
            ManifestError::Toml(e) => Some(e),
            ManifestError::Xml(e) => Some(e),
            ManifestError::UnknownKind | ManifestError::NotAnObject | ManifestError::NotAPom => None,
        }
    }
}

/// The file-name part of a path (either separator).
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Parses one manifest, choosing the parser from its file name.
pub fn parse(file: &SourceFile) -> Result<Manifest, ManifestError> {
    let name = file_name(&file.path);
    let text = file.content.as_str();
    let (ecosystem, deps, languages) = match name {
        "package.json" => {
            let deps = package_json(text)?;
            let ts = deps.iter().any(|d| d.name == "typescript" || d.name.starts_with("@types/"));
            (Ecosystem::Npm, deps, vec![if ts { "typescript" } else { "javascript" }])
        }
        "composer.json" => (Ecosystem::Composer, composer_json(text)?, vec!["php"]),
        "pyproject.toml" => (Ecosystem::PyPi, pyproject(text)?, vec!["python"]),
        "Cargo.toml" => (Ecosystem::Cargo, cargo_toml(text)?, vec!["rust"]),
        "go.mod" => (Ecosystem::Go, go_mod(text), vec!["go"]),
        "Gemfile" => (Ecosystem::RubyGems, gemfile(text), vec!["ruby"]),
        "pom.xml" => (Ecosystem::Jvm, pom_xml(text)?, vec!["java"]),
        "build.gradle" | "build.gradle.kts" => {
            let deps = gradle(text);
            let kotlin = deps.iter().any(|d| d.name.starts_with("org.jetbrains.kotlin"));
            (Ecosystem::Jvm, deps, vec![if kotlin { "kotlin" } else { "java" }])
        }
        n if n.starts_with("requirements") && n.ends_with(".txt") => {
            let kind = if n.contains("dev") || n.contains("test") { DepKind::Dev } else { DepKind::Runtime };
            (Ecosystem::PyPi, requirements_txt(text, kind), vec!["python"])
        }
        _ => return Err(ManifestError::UnknownKind),
    };
    Ok(Manifest { path: file.path.clone(), ecosystem, deps, languages })
}

fn json_object(text: &str) -> Result<serde_json::Map<String, Json>, ManifestError> {
    match serde_json::from_str::<Json>(text).map_err(ManifestError::Json)? {
        Json::Object(map) => Ok(map),
        _ => Err(ManifestError::NotAnObject),
    }
}

/// Keys of the JSON objects under `sections`.
fn json_keys(root: &serde_json::Map<String, Json>, sections: &[(&str, DepKind)]) -> Vec<Dep> {
    let mut out = Vec::new();
    for (section, kind) in sections {
        if let Some(Json::Object(deps)) = root.get(*section) {
            out.extend(deps.keys().map(|k| Dep { name: k.clone(), kind: *kind }));
        }
    }
    out
}

fn package_json(text: &str) -> Result<Vec<Dep>, ManifestError> {
    let root = json_object(text)?;
    Ok(json_keys(
        &root,
        &[
            ("dependencies", DepKind::Runtime),
            ("peerDependencies", DepKind::Runtime),
            ("optionalDependencies", DepKind::Runtime),
            ("devDependencies", DepKind::Dev),
        ],
    ))
}

fn composer_json(text: &str) -> Result<Vec<Dep>, ManifestError> {
    let root = json_object(text)?;
    let mut deps = json_keys(&root, &[("require", DepKind::Runtime), ("require-dev", DepKind::Dev)]);
    // Platform requirements are not packages.
    deps.retain(|d| d.name != "php" && !d.name.starts_with("ext-"));
    Ok(deps)
}

/// PEP 503 normalised name: lowercase, runs of `-_.` become one `-`.
pub fn normalize_pypi(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The package name of a PEP 508 requirement: `fastapi[all]>=0.110; python_version>"3.8"`.
pub fn pep508_name(req: &str) -> Option<String> {
    let req = req.trim();
    let end = req.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))).unwrap_or(req.len());
    let name = &req[..end];
    (!name.is_empty()).then(|| normalize_pypi(name))
}

fn toml_table(text: &str) -> Result<toml::Table, ManifestError> {
    toml::from_str::<toml::Table>(text).map_err(ManifestError::Toml)
}

/// `a.b.c` in a TOML table.
fn toml_get<'a>(root: &'a toml::Table, path: &[&str]) -> Option<&'a toml::Value> {
    let (first, rest) = path.split_first()?;
    let mut v = root.get(*first)?;
    for key in rest {
        v = v.as_table()?.get(*key)?;
    }
    Some(v)
}

fn pep508_list(v: Option<&toml::Value>, kind: DepKind, out: &mut Vec<Dep>) {
    let Some(items) = v.and_then(toml::Value::as_array) else {
        return;
    };
    for item in items.iter().filter_map(toml::Value::as_str) {
        if let Some(name) = pep508_name(item) {
            out.push(Dep { name, kind });
        }
    }
}

fn pyproject(text: &str) -> Result<Vec<Dep>, ManifestError> {
    let root = toml_table(text)?;
    let mut out = Vec::new();
    pep508_list(toml_get(&root, &["project", "dependencies"]), DepKind::Runtime, &mut out);
    // Extras and dependency groups are mostly dev/test tooling.
    for groups in [
        toml_get(&root, &["project", "optional-dependencies"]),
        root.get("dependency-groups"),
        toml_get(&root, &["tool", "pdm", "dev-dependencies"]),
    ] {
        for (_, list) in groups.and_then(toml::Value::as_table).into_iter().flatten() {
            pep508_list(Some(list), DepKind::Dev, &mut out);
        }
    }
    pep508_list(toml_get(&root, &["tool", "uv", "dev-dependencies"]), DepKind::Dev, &mut out);
    let poetry_keys = |v: Option<&toml::Value>, kind: DepKind, out: &mut Vec<Dep>| {
        for key in v.and_then(toml::Value::as_table).into_iter().flat_map(|t| t.keys()) {
            if key != "python" {
                out.push(Dep { name: normalize_pypi(key), kind });
            }
        }
    };
    poetry_keys(toml_get(&root, &["tool", "poetry", "dependencies"]), DepKind::Runtime, &mut out);
    poetry_keys(toml_get(&root, &["tool", "poetry", "dev-dependencies"]), DepKind::Dev, &mut out);
    for (_, group) in
        toml_get(&root, &["tool", "poetry", "group"]).and_then(toml::Value::as_table).into_iter().flatten()
    {
        poetry_keys(group.get("dependencies"), DepKind::Dev, &mut out);
    }
    Ok(out)
}

fn cargo_toml(text: &str) -> Result<Vec<Dep>, ManifestError> {
    let root = toml_table(text)?;
    let mut out = Vec::new();
    let mut tables: Vec<(&toml::Value, DepKind)> = Vec::new();
    for (key, kind) in
        [("dependencies", DepKind::Runtime), ("dev-dependencies", DepKind::Dev), ("build-dependencies", DepKind::Dev)]
    {
        if let Some(t) = root.get(key) {
            tables.push((t, kind));
        }
        // `[target.'cfg(unix)'.dependencies]`
        for (_, target) in root.get("target").and_then(toml::Value::as_table).into_iter().flatten() {
            if let Some(t) = target.get(key) {
                tables.push((t, kind));
            }
        }
    }
    if let Some(t) = toml_get(&root, &["workspace", "dependencies"]) {
        tables.push((t, DepKind::Runtime));
    }
    for (table, kind) in tables {
        for (key, spec) in table.as_table().into_iter().flatten() {
            // `alias = { package = "real-name", … }`
            let name = spec.get("package").and_then(toml::Value::as_str).unwrap_or(key);
            out.push(Dep { name: name.to_string(), kind });
        }
    }
    Ok(out)
}

/// requirements*.txt: one PEP 508 requirement per line; options (`-r`, `--index-url`, `-e`)
/// and bare URLs are skipped, `name @ url` keeps its name.
fn requirements_txt(text: &str, kind: DepKind) -> Vec<Dep> {
    text.lines()
        .map(|l| l.split(" #").next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('-'))
        .filter(|l| !l.contains("://") || l.contains(" @ "))
        .filter_map(pep508_name)
        .map(|name| Dep { name, kind })
        .collect()
}

/// go.mod: `require path v1.2.3` lines and `require ( … )` blocks; `// indirect` marks
/// dependencies of dependencies.
fn go_mod(text: &str) -> Vec<Dep> {
    let mut out = Vec::new();
    let mut in_block = false;
    for raw in text.lines() {
        let (code, comment) = raw.split_once("//").unwrap_or((raw, ""));
        let line = code.trim();
        let spec = if in_block {
            if line.starts_with(')') {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("require") {
            let rest = rest.trim();
            if rest.starts_with('(') {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        if let Some(path) = spec.split_whitespace().next() {
            let kind = if comment.contains("indirect") { DepKind::Indirect } else { DepKind::Runtime };
            out.push(Dep { name: path.trim_matches('"').to_string(), kind });
        }
    }
    out
}

/// The text of the first quoted string in `s` (either quote).
fn first_quoted(s: &str) -> Option<&str> {
    let start = s.find(['\'', '"'])?;
    let q = s.as_bytes()[start] as char;
    let rest = &s[start + 1..];
    rest.find(q).map(|end| &rest[..end])
}

/// Every quoted string in `s`.
fn quoted_strings(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find(['\'', '"']) {
        let q = rest.as_bytes()[start] as char;
        let after = &rest[start + 1..];
        let Some(end) = after.find(q) else { break };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}

/// `#` starts a comment unless it is inside a quoted string.
fn strip_hash_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..i],
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    line
}

/// Gemfile: `gem 'name', …` lines; `group :development, :test do … end` marks dev gems.
fn gemfile(text: &str) -> Vec<Dep> {
    let mut out = Vec::new();
    // One entry per open `do` block: is it a dev/test group?
    let mut blocks: Vec<bool> = Vec::new();
    for raw in text.lines() {
        let line = strip_hash_comment(raw).trim();
        if line == "end" {
            blocks.pop();
            continue;
        }
        let opens_block = line.ends_with(" do") || line.contains(" do |");
        if let Some(rest) = line.strip_prefix("gem").filter(|r| r.starts_with([' ', '('])) {
            if let Some(name) = first_quoted(rest) {
                let dev =
                    blocks.iter().any(|d| *d) || rest.contains("group: :test") || rest.contains("group: :development");
                out.push(Dep { name: name.to_string(), kind: if dev { DepKind::Dev } else { DepKind::Runtime } });
            }
        } else if opens_block {
            let dev = line.starts_with("group") && (line.contains(":test") || line.contains(":development"));
            blocks.push(dev);
        }
    }
    out
}

/// pom.xml: the coordinates of the project's `<parent>`, its `<dependencies>` (test scope:
/// dev), its `<build><plugins>`, and — as dev, since they only pin versions —
/// `<dependencyManagement>`, `<pluginManagement>` and the dependencies of `<profiles>`. Read by
/// element path, so an `<exclusion>` inside a dependency, or a plugin's own `<dependencies>`,
/// is never taken for the project's. `${…}` in a coordinate is resolved from `<properties>`
/// and the project's own (or its parent's) groupId; a plugin without a groupId is Maven's
/// `org.apache.maven.plugins`.
fn pom_xml(text: &str) -> Result<Vec<Dep>, ManifestError> {
    let doc = roxmltree::Document::parse(text).map_err(ManifestError::Xml)?;
    let project = doc.root_element();
    if project.tag_name().name() != "project" {
        return Err(ManifestError::NotAPom);
    }
    let (child, path, text_of, elements) = (xml_child, xml_path, xml_text, xml_children);
    let parent = child(project, "parent");
    let mut properties: std::collections::HashMap<String, String> = child(project, "properties")
        .into_iter()
        .flat_map(|props| props.children().filter(|c| c.is_element()))
        .map(|p| (p.tag_name().name().to_owned(), p.text().unwrap_or("").trim().to_owned()))
        .collect();
    let group = text_of(project, "groupId").or_else(|| parent.and_then(|p| text_of(p, "groupId"))).unwrap_or("");
    for key in ["project.groupId", "pom.groupId", "groupId"] {
        properties.insert(key.to_owned(), group.to_owned());
    }
    if let Some(parent_group) = parent.and_then(|p| text_of(p, "groupId")) {
        properties.insert("project.parent.groupId".to_owned(), parent_group.to_owned());
    }
    let resolve = |raw: &str| -> String {
        match raw.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
            Some(key) => properties.get(key).cloned().unwrap_or_else(|| raw.to_owned()),
            None => raw.to_owned(),
        }
    };
    let mut out = Vec::new();
    let mut push = |node: XmlNode<'_, '_>, default_group: &str, kind: DepKind| {
        let Some(artifact) = text_of(node, "artifactId").filter(|a| !a.is_empty()) else { return };
        let group = text_of(node, "groupId").unwrap_or(default_group);
        let kind = if text_of(node, "scope") == Some("test") { DepKind::Dev } else { kind };
        out.push(Dep { name: format!("{}:{}", resolve(group), resolve(artifact)), kind });
    };
    if let Some(parent) = parent {
        push(parent, "", DepKind::Runtime);
    }
    for dep in elements(child(project, "dependencies"), "dependency") {
        push(dep, "", DepKind::Runtime);
    }
    for dep in elements(path(project, &["dependencyManagement", "dependencies"]), "dependency") {
        push(dep, "", DepKind::Dev);
    }
    const MAVEN_PLUGINS: &str = "org.apache.maven.plugins";
    for plugin in elements(path(project, &["build", "plugins"]), "plugin") {
        push(plugin, MAVEN_PLUGINS, DepKind::Runtime);
    }
    for plugin in elements(path(project, &["build", "pluginManagement", "plugins"]), "plugin") {
        push(plugin, MAVEN_PLUGINS, DepKind::Dev);
    }
    for profile in elements(child(project, "profiles"), "profile") {
        for dep in elements(child(profile, "dependencies"), "dependency") {
            push(dep, "", DepKind::Dev);
        }
    }
    Ok(out)
}

type XmlNode<'a, 'input> = roxmltree::Node<'a, 'input>;

/// The first child element named `name` (namespace ignored: poms declare Maven's).
fn xml_child<'a, 'i>(node: XmlNode<'a, 'i>, name: &str) -> Option<XmlNode<'a, 'i>> {
    node.children().find(|c| c.tag_name().name() == name)
}

/// The element at `names` below `node`, one child per step.
fn xml_path<'a, 'i>(node: XmlNode<'a, 'i>, names: &[&str]) -> Option<XmlNode<'a, 'i>> {
    names.iter().try_fold(node, |node, name| xml_child(node, name))
}

/// The trimmed text of the child element `name`.
fn xml_text<'a, 'i>(node: XmlNode<'a, 'i>, name: &str) -> Option<&'a str> {
    xml_child(node, name).and_then(|n| n.text()).map(str::trim)
}

/// The child elements named `name` of `node`, if there is a node.
fn xml_children<'a, 'i>(node: Option<XmlNode<'a, 'i>>, name: &'static str) -> impl Iterator<Item = XmlNode<'a, 'i>> {
    node.into_iter().flat_map(move |n| n.children().filter(move |c| c.tag_name().name() == name))
}

const GRADLE_CONFIGS: [&str; 14] = [
    "implementation",
    "api",
    "compileOnly",
    "runtimeOnly",
    "testImplementation",
    "testRuntimeOnly",
    "testCompileOnly",
    "annotationProcessor",
    "kapt",
    "ksp",
    "developmentOnly",
    "compile",
    "testCompile",
    "androidTestImplementation",
];

/// Gradle (Groovy or Kotlin DSL): `implementation 'g:a:v'`, `implementation("g:a:v")`,
/// `implementation group: 'g', name: 'a'`, plugin ids (`id 'x'`, `id("x")`, `kotlin("jvm")`).
fn gradle(text: &str) -> Vec<Dep> {
    let mut out = Vec::new();
    let mut in_comment = false;
    for raw in text.lines() {
        let mut line = raw.trim();
        if in_comment {
            match line.find("*/") {
                Some(p) => {
                    in_comment = false;
                    line = line[p + 2..].trim();
                }
                None => continue,
            }
        }
        if let Some(p) = line.find("/*") {
            in_comment = !line[p..].contains("*/");
            line = line[..p].trim();
        }
        let line = line.split("//").next().unwrap_or("").trim();
        let word_end = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(line.len());
        let word = &line[..word_end];
        let rest = &line[word_end..];
        if GRADLE_CONFIGS.contains(&word) {
            let kind = if word.starts_with("test") || word.starts_with("androidTest") {
                DepKind::Dev
            } else {
                DepKind::Runtime
            };
            let strings = quoted_strings(rest);
            if let Some(coord) = strings.iter().find(|s| s.contains(':')) {
                let mut parts = coord.split(':');
                let (g, a) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                out.push(Dep { name: format!("{g}:{a}"), kind });
            } else if rest.contains("group") && rest.contains("name") {
                // `group: 'g', name: 'a'` → the strings after each key.
                let after = |key: &str| rest.find(key).and_then(|p| first_quoted(&rest[p..]));
                if let (Some(g), Some(a)) = (after("group"), after("name")) {
                    out.push(Dep { name: format!("{g}:{a}"), kind });
                }
            }
        } else {
            plugin_ids(line, &mut out);
        }
    }
    out
}

/// Plugin ids anywhere on a line (a `plugins { … }` block may be on one line): `id 'x'`,
/// `id("x")`, `apply plugin: 'x'`, `kotlin("jvm")` (→ `org.jetbrains.kotlin.jvm`).
fn plugin_ids(line: &str, out: &mut Vec<Dep>) {
    let b = line.as_bytes();
    for (needle, prefix) in [("id", ""), ("apply plugin", ""), ("kotlin(", "org.jetbrains.kotlin.")] {
        for (p, _) in line.match_indices(needle) {
            let boundary = p == 0 || !(b[p - 1].is_ascii_alphanumeric() || b[p - 1] == b'_' || b[p - 1] == b'.');
            let rest = line[p + needle.len()..].trim_start();
            let rest = rest.strip_prefix(':').map_or(rest, str::trim_start);
            let quoted_next = rest.starts_with(['(', '\'', '"']) || needle.ends_with('(');
            if !boundary || !quoted_next {
                continue;
            }
            if let Some(id) = first_quoted(rest.split(')').next().unwrap_or(rest)) {
                out.push(Dep { name: format!("{prefix}{id}"), kind: DepKind::Runtime });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(path: &str, content: &str) -> Result<Manifest, ManifestError> {
        parse(&SourceFile::new(path, content))
    }

    fn names(path: &str, content: &str) -> Vec<(String, DepKind)> {
        match parsed(path, content) {
            Ok(m) => m.deps.into_iter().map(|d| (d.name, d.kind)).collect(),
            Err(e) => panic!("{path} did not parse: {e}"),
        }
    }

    fn has(deps: &[(String, DepKind)], name: &str, kind: DepKind) -> bool {
        deps.iter().any(|(n, k)| n == name && *k == kind)
    }

    #[test]
    fn package_json_sections() {
        let d = names(
            "package.json",
            r#"{"name":"x","dependencies":{"next":"14"},"devDependencies":{"vitest":"1"},"scripts":{"jest":"x"}}"#,
        );
        assert!(has(&d, "next", DepKind::Runtime) && has(&d, "vitest", DepKind::Dev));
        assert!(!d.iter().any(|(n, _)| n == "jest"), "scripts are not dependencies");
        assert!(matches!(parsed("package.json", "{ nope"), Err(ManifestError::Json(_))));
        assert!(matches!(parsed("package.json", "[1]"), Err(ManifestError::NotAnObject)));
    }

    #[test]
    fn composer_json_skips_platform_requirements() {
        let d = names(
            "composer.json",
            r#"{"require":{"php":">=8","ext-json":"*","laravel/framework":"^11"},"require-dev":{"phpunit/phpunit":"^10"}}"#,
        );
        assert_eq!(d.len(), 2);
        assert!(has(&d, "laravel/framework", DepKind::Runtime) && has(&d, "phpunit/phpunit", DepKind::Dev));
    }

    #[test]
    fn pyproject_pep621_poetry_and_groups() {
        let src = r#"
[project]
name = "svc"
dependencies = ["FastAPI[all]>=0.110", "SQLAlchemy ~= 2.0", "python-jose; python_version > '3.8'"]
[project.optional-dependencies]
test = ["pytest>=8"]
[tool.poetry.dependencies]
python = "^3.11"
Flask_Login = "*"
[tool.poetry.group.dev.dependencies]
hypothesis = "*"
[dependency-groups]
lint = ["ruff"]
"#;
        let d = names("services/api/pyproject.toml", src);
        for n in ["fastapi", "sqlalchemy", "python-jose"] {
            assert!(has(&d, n, DepKind::Runtime), "{n} in {d:?}");
        }
        assert!(has(&d, "flask-login", DepKind::Runtime));
        assert!(
            has(&d, "pytest", DepKind::Dev) && has(&d, "hypothesis", DepKind::Dev) && has(&d, "ruff", DepKind::Dev)
        );
        assert!(!d.iter().any(|(n, _)| n == "python"));
        assert!(matches!(parsed("pyproject.toml", "[project\nx="), Err(ManifestError::Toml(_))));
    }

    #[test]
    fn cargo_toml_tables_workspace_and_renames() {
        let src = r#"
[package]
name = "x"
[dependencies]
axum = "0.7"
db = { package = "sqlx", version = "0.8" }
[dev-dependencies]
proptest = "1"
[target.'cfg(unix)'.dependencies]
nix = "0.29"
[workspace.dependencies]
tokio = { version = "1" }
"#;
        let d = names("Cargo.toml", src);
        assert!(
            has(&d, "axum", DepKind::Runtime) && has(&d, "sqlx", DepKind::Runtime) && has(&d, "nix", DepKind::Runtime)
        );
        assert!(has(&d, "proptest", DepKind::Dev) && has(&d, "tokio", DepKind::Runtime));
        assert!(!d.iter().any(|(n, _)| n == "db"));
    }

    #[test]
    fn requirements_txt_lines() {
        let src = "# core\nDjango>=5.0  # web\n-r base.txt\n--index-url https://x\ndjango-allauth[socialaccount]==0.61\nhttps://example.com/pkg.whl\nmypkg @ https://example.com/x.zip\n\n";
        let d = names("requirements.txt", src);
        let n: Vec<&str> = d.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(n, vec!["django", "django-allauth", "mypkg"]);
        assert!(has(&names("requirements-dev.txt", "pytest\n"), "pytest", DepKind::Dev));
    }

    #[test]
    fn go_mod_require_forms() {
        let src = "module example.com/app\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.9.1\n\nrequire (\n\tgorm.io/gorm v1.25.0 // latest\n\tgithub.com/bytedance/sonic v1.9.1 // indirect\n)\n// require github.com/fake/x v1\n";
        let d = names("go.mod", src);
        assert!(has(&d, "github.com/gin-gonic/gin", DepKind::Runtime) && has(&d, "gorm.io/gorm", DepKind::Runtime));
        assert!(has(&d, "github.com/bytedance/sonic", DepKind::Indirect));
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn gemfile_groups_and_comments() {
        let src = "source 'https://rubygems.org'\ngem 'rails', '~> 7.1'\n# gem 'sidekiq'\ngem \"devise\" # auth\ngroup :development, :test do\n  gem 'rspec-rails'\nend\ngem 'pg', group: :test\n";
        let d = names("Gemfile", src);
        assert!(has(&d, "rails", DepKind::Runtime) && has(&d, "devise", DepKind::Runtime));
        assert!(has(&d, "rspec-rails", DepKind::Dev) && has(&d, "pg", DepKind::Dev));
        assert!(!d.iter().any(|(n, _)| n == "sidekiq"));
    }

    #[test]
    fn pom_xml_dependencies_scopes_and_comments() {
        let src = r#"<?xml version="1.0"?>
<project>
  <parent><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId></parent>
  <dependencies>
    <!-- <dependency><artifactId>fake</artifactId></dependency> -->
    <dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-web</artifactId></dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>"#;
        let d = names("pom.xml", src);
        assert!(has(&d, "org.springframework.boot:spring-boot-starter-web", DepKind::Runtime));
        assert!(has(&d, "org.springframework.boot:spring-boot-starter-parent", DepKind::Runtime));
        assert!(has(&d, "org.junit.jupiter:junit-jupiter", DepKind::Dev));
        assert!(!d.iter().any(|(n, _)| n.contains("fake")));
        assert!(matches!(parsed("pom.xml", "<project><dependencies></project>"), Err(ManifestError::Xml(_))));
        assert!(matches!(parsed("pom.xml", "<html></html>"), Err(ManifestError::NotAPom)));
    }

    /// A multi-module project's pom, with everything a tag scanner gets wrong.
    const POM_WITH_EVERYTHING: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <parent>
    <groupId>com.acme</groupId>
    <artifactId>acme-parent</artifactId>
  </parent>
  <artifactId>orders</artifactId>
  <properties>
    <hibernate.group>org.hibernate.orm</hibernate.group>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.springframework.boot</groupId>
        <artifactId>spring-boot-dependencies</artifactId>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-web</artifactId>
      <exclusions>
        <exclusion>
          <groupId>org.springframework.boot</groupId>
          <artifactId>spring-boot-starter-tomcat</artifactId>
        </exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>${hibernate.group}</groupId>
      <artifactId>hibernate-core</artifactId>
    </dependency>
    <dependency>
      <groupId>${project.groupId}</groupId>
      <artifactId>orders-api</artifactId>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
        <dependencies>
          <dependency>
            <groupId>org.junit.platform</groupId>
            <artifactId>junit-platform-surefire-provider</artifactId>
          </dependency>
        </dependencies>
      </plugin>
      <plugin>
        <groupId>org.springframework.boot</groupId>
        <artifactId>spring-boot-maven-plugin</artifactId>
      </plugin>
    </plugins>
    <pluginManagement>
      <plugins>
        <plugin><groupId>org.jacoco</groupId><artifactId>jacoco-maven-plugin</artifactId></plugin>
      </plugins>
    </pluginManagement>
  </build>
  <profiles>
    <profile>
      <id>it</id>
      <dependencies>
        <dependency><groupId>org.testcontainers</groupId><artifactId>postgresql</artifactId></dependency>
      </dependencies>
    </profile>
  </profiles>
</project>"#;

    #[test]
    fn pom_xml_exclusions_plugins_properties_and_dependency_management() {
        let d = names("pom.xml", POM_WITH_EVERYTHING);
        let expected = [
            ("com.acme:acme-parent", DepKind::Runtime),
            ("org.springframework.boot:spring-boot-starter-web", DepKind::Runtime),
            ("org.hibernate.orm:hibernate-core", DepKind::Runtime),
            ("com.acme:orders-api", DepKind::Runtime),
            ("org.springframework.boot:spring-boot-dependencies", DepKind::Dev),
            ("org.apache.maven.plugins:maven-surefire-plugin", DepKind::Runtime),
            ("org.springframework.boot:spring-boot-maven-plugin", DepKind::Runtime),
            ("org.jacoco:jacoco-maven-plugin", DepKind::Dev),
            ("org.testcontainers:postgresql", DepKind::Dev),
        ];
        for (name, kind) in expected {
            assert!(has(&d, name, kind), "{name} ({kind:?}) missing from {d:?}");
        }
        assert_eq!(d.len(), expected.len(), "an exclusion or a plugin's own dependency was counted: {d:?}");
    }

    #[test]
    fn gradle_groovy_and_kotlin_dsl() {
        let groovy = "plugins {\n  id 'org.springframework.boot' version '3.2.0'\n}\ndependencies {\n  implementation 'org.springframework.boot:spring-boot-starter-web'\n  // implementation 'com.fake:nope:1'\n  testImplementation group: 'org.mockito', name: 'mockito-core', version: '5'\n}\n";
        let d = names("build.gradle", groovy);
        assert!(has(&d, "org.springframework.boot", DepKind::Runtime));
        assert!(has(&d, "org.springframework.boot:spring-boot-starter-web", DepKind::Runtime));
        assert!(has(&d, "org.mockito:mockito-core", DepKind::Dev));
        assert!(!d.iter().any(|(n, _)| n.contains("fake")));
        let kts = "plugins { kotlin(\"jvm\") version \"1.9\" }\ndependencies {\n  implementation(\"io.ktor:ktor-server-core:2.3\")\n}\n";
        let m = parsed("build.gradle.kts", kts).expect("kts parses");
        assert_eq!(m.languages, vec!["kotlin"]);
        assert!(m.deps.iter().any(|d| d.name == "io.ktor:ktor-server-core"));
    }

    #[test]
    fn pep508_and_normalisation() {
        assert_eq!(pep508_name("Flask_SQLAlchemy>=3").as_deref(), Some("flask-sqlalchemy"));
        assert_eq!(pep508_name("  ").as_deref(), None);
        assert_eq!(normalize_pypi("zope.interface"), "zope-interface");
    }
}
