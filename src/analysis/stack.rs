//! Stack detection (SPEC §6.1): from the project's manifests and the paths the session
//! touched, which languages, framework(s), ORM, state library, test tools, auth and styling
//! the project uses, each with a confidence.
//!
//! # Evidence and confidence
//! A package declared in a manifest is strong evidence (`RUNTIME_CONFIDENCE`, a little less
//! for dev-only and indirect ones); an item a framework brings with it (Django → Django ORM) is
//! `IMPLIED_CONFIDENCE`; a file name or extension alone is weak (0.5–0.6, see
//! `catalog::PATH_HINTS`). Several pieces of evidence for one item keep the strongest, so the
//! result does not depend on the order of inputs beyond tie-breaking.
//!
//! # Choosing one
//! Single-valued fields (framework, orm, state_management, auth) take the item with the highest
//! confidence, ties going to the first seen. A meta-framework beats its base: with `next` and
//! `react` both declared, the framework is Next.js and React is left out of `frameworks` (its
//! confidence stays in the map, since it was detected). A monorepo lists every manifest and
//! every framework.
//!
//! Manifests that do not parse are skipped (`manifest::parse` says why); nothing here panics
//! on input.

mod catalog;
pub use catalog::language_of_extension;
pub mod manifest;
pub mod testing;

use super::model::{SourceFile, StackProfile};
use catalog::{CATALOG, Category, IMPLIED, META_OVER_BASE, PATH_HINTS};
pub use catalog::{display_language, language_id};

/// Rewrites a stored profile's languages (and their confidence keys) to display names: profiles
/// stored by an earlier version hold ids ("typescript"), and users and the upstream must see
/// "TypeScript" whichever version wrote them.
pub fn show_languages(profile: &mut StackProfile) {
    for lang in &mut profile.languages {
        let shown = display_language(lang).to_string();
        if shown != *lang {
            if let Some(confidence) = profile.confidence.remove(lang.as_str()) {
                profile.confidence.insert(shown.clone(), confidence);
            }
            *lang = shown;
        }
    }
}
use manifest::{DepKind, file_name};
use std::collections::{BTreeMap, HashSet};

/// A package in `dependencies` (or the ecosystem's equivalent).
pub const RUNTIME_CONFIDENCE: f64 = 0.95;
/// A dev/test-only package: still declared, slightly less central to the app.
pub const DEV_CONFIDENCE: f64 = 0.9;
/// Go's `// indirect`: present because something else needs it.
pub const INDIRECT_CONFIDENCE: f64 = 0.8;
/// An item a detected framework ships with (Django ORM, ActiveRecord).
pub const IMPLIED_CONFIDENCE: f64 = 0.85;
/// A language named by a manifest kind (package.json → JavaScript/TypeScript).
pub const LANGUAGE_FROM_MANIFEST: f64 = 0.9;
/// A language seen only in touched file extensions.
pub const LANGUAGE_FROM_EXTENSION: f64 = 0.6;
/// Both of the above.
pub const LANGUAGE_FROM_BOTH: f64 = 0.95;

/// Whether a file name (or a path; its last segment is used) is a manifest stack detection
/// reads.
pub fn is_manifest(file_name_or_path: &str) -> bool {
    let name = file_name(file_name_or_path);
    matches!(
        name,
        "package.json"
            | "pyproject.toml"
            | "go.mod"
            | "Cargo.toml"
            | "Gemfile"
            | "pom.xml"
            | "build.gradle"
            | "build.gradle.kts"
            | "composer.json"
    ) || (name.starts_with("requirements") && name.ends_with(".txt"))
}

/// The stack profile of a project from its manifests (paths relative to the project root) and
/// the paths the session touched. Empty input gives an empty profile.
pub fn detect_stack(manifests: &[SourceFile], touched_paths: &[String]) -> StackProfile {
    detect_stack_with(manifests, touched_paths, &SessionEvidence::default())
}

/// What a session did besides touching paths, as stack detection reads it: the shell commands
/// it ran (failed ones too: a failing test run still names its framework) and the files it
/// wrote, with their content.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionEvidence<'a> {
    pub commands: &'a [String],
    pub files: &'a [SourceFile],
}

/// [`detect_stack`] with the session's commands and written files, from which the test
/// frameworks are read too (`testing`).
pub fn detect_stack_with(
    manifests: &[SourceFile],
    touched_paths: &[String],
    session: &SessionEvidence<'_>,
) -> StackProfile {
    let mut ev = Evidence::default();
    let mut profile = StackProfile::default();
    for file in manifests.iter().filter(|f| is_manifest(&f.path)) {
        let Ok(m) = manifest::parse(file) else {
            continue;
        };
        profile.manifests.push(m.path.clone());
        for lang in &m.languages {
            ev.language(lang, 2, true);
        }
        for dep in &m.deps {
            let conf = match dep.kind {
                DepKind::Runtime => RUNTIME_CONFIDENCE,
                DepKind::Dev => DEV_CONFIDENCE,
                DepKind::Indirect => INDIRECT_CONFIDENCE,
            };
            for entry in CATALOG.iter().filter(|e| e.matches(m.ecosystem, &dep.name)) {
                ev.item(entry.category, entry.name, conf * entry.weight);
            }
        }
    }
    let mut seen = HashSet::new();
    for path in touched_paths.iter().filter(|p| seen.insert(p.as_str())) {
        let path = path.replace('\\', "/");
        let name = file_name(&path);
        if let Some(lang) =
            name.rsplit_once('.').and_then(|(_, ext)| catalog::language_of_extension(&ext.to_ascii_lowercase()))
        {
            ev.language(lang, 1, false);
        }
        for (hint, category, item, conf) in PATH_HINTS {
            if hint.matches(&path, name) {
                ev.item(*category, item, *conf);
            }
        }
    }
    for (name, confidence) in testing::test_frameworks(session.commands, touched_paths, session.files) {
        ev.item(Category::Testing, name, confidence);
    }
    for (framework, category, item) in IMPLIED {
        if ev.has(Category::Framework, framework) {
            ev.item(*category, item, IMPLIED_CONFIDENCE);
        }
    }
    ev.fill(&mut profile);
    profile
}

/// One detected item and its strongest evidence.
struct Item {
    category: Category,
    name: &'static str,
    confidence: f64,
}

/// A language's accumulated evidence.
struct LangEvidence {
    name: &'static str,
    /// Files touched count 1 each, a manifest 2: "most evidence first".
    score: usize,
    from_manifest: bool,
    from_extension: bool,
}

#[derive(Default)]
struct Evidence {
    /// In first-seen order (the tie-breaker).
    items: Vec<Item>,
    languages: Vec<LangEvidence>,
}

impl Evidence {
    fn item(&mut self, category: Category, name: &'static str, confidence: f64) {
        match self.items.iter_mut().find(|i| i.category == category && i.name == name) {
            Some(i) => i.confidence = i.confidence.max(confidence),
            None => self.items.push(Item { category, name, confidence }),
        }
    }

    fn has(&self, category: Category, name: &str) -> bool {
        self.items.iter().any(|i| i.category == category && i.name == name)
    }

    fn language(&mut self, name: &'static str, score: usize, from_manifest: bool) {
        let entry = match self.languages.iter_mut().position(|l| l.name == name) {
            Some(p) => &mut self.languages[p],
            None => {
                self.languages.push(LangEvidence { name, score: 0, from_manifest: false, from_extension: false });
                let last = self.languages.len() - 1;
                &mut self.languages[last]
            }
        };
        entry.score += score;
        entry.from_manifest |= from_manifest;
        entry.from_extension |= !from_manifest;
    }

    /// Items of a category, strongest first (stable: ties keep first-seen order).
    fn ranked(&self, category: Category) -> Vec<&Item> {
        let mut v: Vec<&Item> = self.items.iter().filter(|i| i.category == category).collect();
        v.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
        v
    }

    fn fill(self, p: &mut StackProfile) {
        let mut langs: Vec<&LangEvidence> = self.languages.iter().collect();
        langs.sort_by_key(|l| std::cmp::Reverse(l.score));
        for l in langs {
            let conf = match (l.from_manifest, l.from_extension) {
                (true, true) => LANGUAGE_FROM_BOTH,
                (true, false) => LANGUAGE_FROM_MANIFEST,
                _ => LANGUAGE_FROM_EXTENSION,
            };
            // Display names wherever users or the upstream see them (SPEC §6.1).
            let shown = display_language(l.name);
            p.languages.push(shown.to_string());
            p.confidence.insert(shown.to_string(), conf);
        }
        let mut frameworks = self.ranked(Category::Framework);
        let present: HashSet<&str> = frameworks.iter().map(|i| i.name).collect();
        frameworks.retain(|f| !META_OVER_BASE.iter().any(|(meta, base)| *base == f.name && present.contains(meta)));
        // Among equally confident frameworks a meta-framework comes first.
        let is_meta = |n: &str| META_OVER_BASE.iter().any(|(meta, _)| *meta == n);
        frameworks.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(is_meta(b.name).cmp(&is_meta(a.name))));
        p.frameworks = frameworks.iter().map(|i| i.name.to_string()).collect();
        p.framework = p.frameworks.first().cloned();
        let first = |c| self.ranked(c).first().map(|i| i.name.to_string());
        p.orm = first(Category::Orm);
        p.state_management = first(Category::State);
        p.auth = first(Category::Auth);
        p.testing = self.ranked(Category::Testing).iter().map(|i| i.name.to_string()).collect();
        p.styling = self.ranked(Category::Styling).iter().map(|i| i.name.to_string()).collect();
        let conf: BTreeMap<String, f64> =
            self.items.iter().map(|i| (i.name.to_string(), round2(i.confidence))).collect();
        for (k, v) in conf {
            let slot = p.confidence.entry(k).or_insert(0.0);
            *slot = slot.max(v);
        }
    }
}

/// Two decimals: confidences are shown to people and compared in tests.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, content: &str) -> SourceFile {
        SourceFile::new(path, content)
    }

    fn paths(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn empty_input_gives_empty_profile() {
        assert_eq!(detect_stack(&[], &[]), StackProfile::default());
    }

    #[test]
    fn is_manifest_names() {
        for n in [
            "package.json",
            "apps/web/package.json",
            "requirements-dev.txt",
            "go.mod",
            "build.gradle.kts",
            "Gemfile",
            "pom.xml",
            "composer.json",
            "Cargo.toml",
            "pyproject.toml",
        ] {
            assert!(is_manifest(n), "{n}");
        }
        for n in ["package-lock.json", "Gemfile.lock", "go.sum", "requirements.in", "Cargo.lock", "tsconfig.json"] {
            assert!(!is_manifest(n), "{n}");
        }
    }

    #[test]
    fn nextjs_beats_react_and_categories_fill() {
        let pkg = r#"{"dependencies":{"next":"14","react":"18","@prisma/client":"5","zustand":"4","next-auth":"4","tailwindcss":"3"},
                     "devDependencies":{"typescript":"5","vitest":"1","@playwright/test":"1","prisma":"5"}}"#;
        let p =
            detect_stack(&[f("package.json", pkg)], &paths(&["app/page.tsx", "app/layout.tsx", "styles/a.module.css"]));
        assert_eq!(p.framework.as_deref(), Some("Next.js"));
        assert_eq!(p.frameworks, vec!["Next.js"]);
        assert_eq!(p.orm.as_deref(), Some("Prisma"));
        assert_eq!(p.state_management.as_deref(), Some("Zustand"));
        assert_eq!(p.auth.as_deref(), Some("NextAuth"));
        // Equal confidence: first seen wins, and serde_json reads object keys sorted.
        assert_eq!(p.testing, vec!["Playwright", "Vitest"]);
        assert_eq!(p.styling, vec!["Tailwind CSS", "CSS Modules"]);
        assert_eq!(p.languages, vec!["TypeScript"]);
        assert_eq!(p.confidence.get("Next.js"), Some(&0.95));
        assert_eq!(p.confidence.get("React"), Some(&0.95), "base stays in the confidence map");
        assert_eq!(p.confidence.get("Vitest"), Some(&0.9));
        assert_eq!(p.confidence.get("CSS Modules"), Some(&0.6));
        assert_eq!(p.confidence.get("TypeScript"), Some(&0.95));
        let mut stored = StackProfile { languages: vec!["csharp".into(), "Go".into()], ..StackProfile::default() };
        stored.confidence.insert("csharp".into(), 0.9);
        show_languages(&mut stored);
        assert_eq!(stored.languages, ["C#", "Go"]);
        assert_eq!(stored.confidence.get("C#"), Some(&0.9));
        assert_eq!(p.manifests, vec!["package.json"]);
    }

    #[test]
    fn monorepo_reports_every_manifest_and_framework() {
        let web = r#"{"dependencies":{"next":"14","react":"18"}}"#;
        let api = "[project]\nname='api'\ndependencies=['fastapi','sqlalchemy>=2']\n[project.optional-dependencies]\ndev=['pytest']\n";
        let p = detect_stack(
            &[f("apps/web/package.json", web), f("services/api/pyproject.toml", api)],
            &paths(&["services/api/main.py", "services/api/models.py", "services/api/db.py", "apps/web/app/page.tsx"]),
        );
        assert_eq!(p.manifests, vec!["apps/web/package.json", "services/api/pyproject.toml"]);
        assert_eq!(p.frameworks, vec!["Next.js", "FastAPI"]);
        assert_eq!(p.framework.as_deref(), Some("Next.js"));
        assert_eq!(p.orm.as_deref(), Some("SQLAlchemy"));
        assert_eq!(p.testing, vec!["pytest"]);
        assert_eq!(p.languages[0], "Python", "most evidence first: {:?}", p.languages);
        assert!(p.languages.contains(&"JavaScript".to_string()) && p.languages.contains(&"TypeScript".to_string()));
    }

    #[test]
    fn malformed_manifest_is_skipped_not_fatal() {
        let p = detect_stack(
            &[
                f("a/package.json", "{\"dependencies\": {"),
                f("Cargo.toml", "[dependencies]\naxum = \"0.7\"\n"),
                f("b/pom.xml", "<project><x></project>"),
            ],
            &[],
        );
        assert_eq!(p.manifests, vec!["Cargo.toml"]);
        assert_eq!(p.framework.as_deref(), Some("Axum"));
        assert_eq!(p.languages, vec!["Rust"]);
    }

    #[test]
    fn paths_alone_give_weak_evidence() {
        let p = detect_stack(
            &[],
            &paths(&["app/users.rb", "config/routes.rb", "spec/user_spec.rb", "x/tailwind.config.ts"]),
        );
        assert_eq!(p.framework.as_deref(), Some("Rails"));
        assert_eq!(p.orm.as_deref(), Some("ActiveRecord"), "implied by Rails");
        assert_eq!(p.confidence.get("Rails"), Some(&0.55));
        assert_eq!(p.confidence.get("Ruby"), Some(&LANGUAGE_FROM_EXTENSION));
        assert_eq!(p.testing, vec!["RSpec"]);
        assert_eq!(p.styling, vec!["Tailwind CSS"]);
    }

    #[test]
    fn ecosystems_map_to_items() {
        let gomod =
            "module x\nrequire (\n github.com/gin-gonic/gin v1\n gorm.io/gorm v1\n github.com/stretchr/testify v1\n)\n";
        let p = detect_stack(&[f("go.mod", gomod)], &[]);
        assert_eq!((p.framework.as_deref(), p.orm.as_deref()), (Some("Gin"), Some("GORM")));
        assert_eq!(p.testing, vec!["testify"]);

        let gem = "gem 'rails'\ngem 'devise'\ngroup :test do\n gem 'rspec-rails'\nend\n";
        let p = detect_stack(&[f("Gemfile", gem)], &[]);
        assert_eq!(
            (p.framework.as_deref(), p.orm.as_deref(), p.auth.as_deref()),
            (Some("Rails"), Some("ActiveRecord"), Some("Devise"))
        );
        assert_eq!(p.confidence.get("ActiveRecord"), Some(&IMPLIED_CONFIDENCE));

        let pom = "<project><dependencies><dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-data-jpa</artifactId></dependency><dependency><artifactId>spring-boot-starter-security</artifactId></dependency></dependencies></project>";
        let p = detect_stack(&[f("pom.xml", pom)], &[]);
        assert_eq!(
            (p.framework.as_deref(), p.orm.as_deref(), p.auth.as_deref()),
            (Some("Spring"), Some("Hibernate"), Some("Spring Security"))
        );

        let req = "django\ndjango-allauth\n";
        let p = detect_stack(&[f("requirements.txt", req)], &[]);
        assert_eq!(
            (p.framework.as_deref(), p.orm.as_deref(), p.auth.as_deref()),
            (Some("Django"), Some("Django ORM"), Some("django-allauth"))
        );

        let composer = r#"{"require":{"laravel/framework":"^11"},"require-dev":{"phpunit/phpunit":"^10"}}"#;
        let p = detect_stack(&[f("composer.json", composer)], &[]);
        assert_eq!((p.framework.as_deref(), p.languages.clone()), (Some("Laravel"), vec!["PHP".to_string()]));
    }

    #[test]
    fn hint_entries_are_weaker_than_dedicated_packages() {
        let pkg = r#"{"dependencies":{"firebase":"10","@clerk/nextjs":"5"}}"#;
        let p = detect_stack(&[f("package.json", pkg)], &[]);
        assert_eq!(p.auth.as_deref(), Some("Clerk"));
        assert_eq!(p.confidence.get("Firebase Auth"), Some(&0.71));
    }

    #[test]
    fn non_manifest_inputs_are_ignored() {
        let p = detect_stack(&[f("README.md", "next"), f("package-lock.json", "{}")], &[]);
        assert!(p.manifests.is_empty() && p.framework.is_none());
    }
}
