//! The package catalogue: which declared package reveals which framework, ORM, state library,
//! test tool, auth library or styling tool, under the display name the profile reports, plus
//! the file-path hints used when no manifest says so. Data only; `stack` applies it.
//!
//! A package may reveal several items (`spring-boot-starter-security` → Spring and Spring
//! Security), so every entry is checked. `weight` scales the confidence of entries that are only
//! a hint (the `firebase` SDK does not mean Firebase Auth is used).

use super::manifest::Ecosystem;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    Framework,
    Orm,
    State,
    Testing,
    Auth,
    Styling,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    Exact(&'static str),
    Prefix(&'static str),
}

pub struct Entry {
    pub eco: Ecosystem,
    pub pat: Match,
    pub category: Category,
    pub name: &'static str,
    pub weight: f64,
}

impl Entry {
    /// Does the package `dep` (for JVM: `group:artifact` or a plugin id) match this entry?
    pub fn matches(&self, eco: Ecosystem, dep: &str) -> bool {
        if eco != self.eco {
            return false;
        }
        // JVM entries name the artifact (or the whole plugin id).
        let key = if eco == Ecosystem::Jvm { dep.split(':').nth(1).unwrap_or(dep) } else { dep };
        match self.pat {
            Match::Exact(p) => key == p || dep == p,
            Match::Prefix(p) => key.starts_with(p) || dep.starts_with(p),
        }
    }
}

use Category::*;
use Ecosystem::*;
use Match::*;

const fn e(eco: Ecosystem, pat: Match, category: Category, name: &'static str) -> Entry {
    Entry { eco, pat, category, name, weight: 1.0 }
}

const fn hint(eco: Ecosystem, pat: Match, category: Category, name: &'static str, weight: f64) -> Entry {
    Entry { eco, pat, category, name, weight }
}

pub static CATALOG: &[Entry] = &[
    // ---- frameworks
    e(Npm, Exact("next"), Framework, "Next.js"),
    e(Npm, Exact("nuxt"), Framework, "Nuxt"),
    e(Npm, Exact("@sveltejs/kit"), Framework, "SvelteKit"),
    e(Npm, Prefix("@remix-run/"), Framework, "Remix"),
    e(Npm, Exact("react"), Framework, "React"),
    e(Npm, Exact("vue"), Framework, "Vue"),
    e(Npm, Exact("svelte"), Framework, "Svelte"),
    e(Npm, Exact("@angular/core"), Framework, "Angular"),
    e(Npm, Exact("express"), Framework, "Express"),
    e(Npm, Exact("fastify"), Framework, "Fastify"),
    e(Npm, Exact("hono"), Framework, "Hono"),
    e(Npm, Exact("@nestjs/core"), Framework, "NestJS"),
    e(Npm, Exact("koa"), Framework, "Koa"),
    e(PyPi, Exact("django"), Framework, "Django"),
    e(PyPi, Exact("fastapi"), Framework, "FastAPI"),
    e(PyPi, Exact("flask"), Framework, "Flask"),
    e(Go, Exact("github.com/gin-gonic/gin"), Framework, "Gin"),
    e(Go, Prefix("github.com/gofiber/fiber"), Framework, "Fiber"),
    e(Go, Prefix("github.com/labstack/echo"), Framework, "Echo"),
    e(Cargo, Exact("axum"), Framework, "Axum"),
    e(Cargo, Exact("actix-web"), Framework, "Actix"),
    e(Cargo, Exact("rocket"), Framework, "Rocket"),
    e(RubyGems, Exact("rails"), Framework, "Rails"),
    e(RubyGems, Exact("railties"), Framework, "Rails"),
    e(Jvm, Prefix("spring-boot"), Framework, "Spring"),
    e(Jvm, Exact("org.springframework.boot"), Framework, "Spring"),
    e(Jvm, Prefix("spring-webmvc"), Framework, "Spring"),
    e(Jvm, Exact("spring-context"), Framework, "Spring"),
    e(Composer, Exact("laravel/framework"), Framework, "Laravel"),
    // ---- ORMs
    e(Npm, Exact("@prisma/client"), Orm, "Prisma"),
    e(Npm, Exact("prisma"), Orm, "Prisma"),
    e(Npm, Exact("drizzle-orm"), Orm, "Drizzle"),
    e(Npm, Exact("mongoose"), Orm, "Mongoose"),
    e(Npm, Exact("sequelize"), Orm, "Sequelize"),
    e(Npm, Exact("typeorm"), Orm, "TypeORM"),
    e(Npm, Exact("kysely"), Orm, "Kysely"),
    e(PyPi, Exact("sqlalchemy"), Orm, "SQLAlchemy"),
    e(PyPi, Exact("flask-sqlalchemy"), Orm, "SQLAlchemy"),
    e(PyPi, Exact("sqlmodel"), Orm, "SQLAlchemy"),
    e(Go, Exact("gorm.io/gorm"), Orm, "GORM"),
    e(Go, Exact("github.com/jinzhu/gorm"), Orm, "GORM"),
    e(Go, Exact("github.com/jmoiron/sqlx"), Orm, "sqlx"),
    e(Cargo, Exact("diesel"), Orm, "Diesel"),
    e(Cargo, Exact("sea-orm"), Orm, "SeaORM"),
    e(Cargo, Exact("sqlx"), Orm, "sqlx"),
    e(RubyGems, Exact("activerecord"), Orm, "ActiveRecord"),
    e(Jvm, Prefix("hibernate-core"), Orm, "Hibernate"),
    e(Jvm, Exact("spring-boot-starter-data-jpa"), Orm, "Hibernate"),
    // ---- state management
    e(Npm, Exact("@reduxjs/toolkit"), State, "Redux"),
    e(Npm, Exact("redux"), State, "Redux"),
    e(Npm, Exact("react-redux"), State, "Redux"),
    e(Npm, Exact("zustand"), State, "Zustand"),
    e(Npm, Exact("jotai"), State, "Jotai"),
    e(Npm, Exact("recoil"), State, "Recoil"),
    e(Npm, Exact("mobx"), State, "MobX"),
    e(Npm, Exact("pinia"), State, "Pinia"),
    e(Npm, Exact("vuex"), State, "Vuex"),
    e(Npm, Exact("@tanstack/react-query"), State, "TanStack Query"),
    e(Npm, Exact("@tanstack/vue-query"), State, "TanStack Query"),
    e(Npm, Exact("@tanstack/svelte-query"), State, "TanStack Query"),
    e(Npm, Exact("@tanstack/solid-query"), State, "TanStack Query"),
    e(Npm, Exact("react-query"), State, "TanStack Query"),
    e(Npm, Exact("swr"), State, "SWR"),
    e(Npm, Exact("xstate"), State, "XState"),
    e(Npm, Exact("valtio"), State, "Valtio"),
    e(Npm, Exact("@ngrx/store"), State, "NgRx"),
    // ---- testing
    e(Npm, Exact("jest"), Testing, "Jest"),
    e(Npm, Exact("ts-jest"), Testing, "Jest"),
    e(Npm, Exact("@jest/globals"), Testing, "Jest"),
    e(Npm, Exact("vitest"), Testing, "Vitest"),
    e(Npm, Exact("@playwright/test"), Testing, "Playwright"),
    e(Npm, Exact("playwright"), Testing, "Playwright"),
    e(Npm, Exact("cypress"), Testing, "Cypress"),
    e(Npm, Exact("mocha"), Testing, "Mocha"),
    e(Npm, Exact("chai"), Testing, "Chai"),
    e(Npm, Prefix("@testing-library/"), Testing, "Testing Library"),
    e(Npm, Exact("supertest"), Testing, "Supertest"),
    e(PyPi, Prefix("pytest"), Testing, "pytest"),
    e(PyPi, Exact("hypothesis"), Testing, "Hypothesis"),
    e(RubyGems, Prefix("rspec"), Testing, "RSpec"),
    e(RubyGems, Exact("minitest"), Testing, "Minitest"),
    e(RubyGems, Exact("capybara"), Testing, "Capybara"),
    e(RubyGems, Prefix("factory_bot"), Testing, "FactoryBot"),
    e(Go, Exact("github.com/stretchr/testify"), Testing, "testify"),
    e(Go, Prefix("github.com/onsi/ginkgo"), Testing, "Ginkgo"),
    e(Cargo, Exact("proptest"), Testing, "proptest"),
    e(Cargo, Exact("mockall"), Testing, "mockall"),
    e(Cargo, Exact("insta"), Testing, "insta"),
    e(Cargo, Exact("rstest"), Testing, "rstest"),
    e(Jvm, Prefix("junit"), Testing, "JUnit"),
    e(Jvm, Exact("spring-boot-starter-test"), Testing, "JUnit"),
    e(Jvm, Prefix("mockito"), Testing, "Mockito"),
    e(Composer, Exact("phpunit/phpunit"), Testing, "PHPUnit"),
    e(Composer, Exact("pestphp/pest"), Testing, "Pest"),
    // ---- auth
    e(Npm, Exact("next-auth"), Auth, "NextAuth"),
    e(Npm, Prefix("@auth/"), Auth, "Auth.js"),
    e(Npm, Prefix("@clerk/"), Auth, "Clerk"),
    e(Npm, Exact("passport"), Auth, "Passport"),
    e(Npm, Prefix("passport-"), Auth, "Passport"),
    e(Npm, Prefix("@supabase/auth-helpers"), Auth, "Supabase Auth"),
    e(Npm, Exact("@supabase/ssr"), Auth, "Supabase Auth"),
    hint(Npm, Exact("@supabase/supabase-js"), Auth, "Supabase Auth", 0.75),
    hint(Npm, Exact("firebase"), Auth, "Firebase Auth", 0.75),
    hint(Npm, Exact("firebase-admin"), Auth, "Firebase Auth", 0.75),
    e(Npm, Exact("lucia"), Auth, "Lucia"),
    e(Npm, Prefix("@lucia-auth/"), Auth, "Lucia"),
    e(Npm, Exact("better-auth"), Auth, "Better Auth"),
    e(Npm, Prefix("@auth0/"), Auth, "Auth0"),
    hint(Npm, Exact("jsonwebtoken"), Auth, "JWT", 0.85),
    hint(Npm, Exact("jose"), Auth, "JWT", 0.85),
    e(PyPi, Exact("django-allauth"), Auth, "django-allauth"),
    e(PyPi, Exact("flask-login"), Auth, "Flask-Login"),
    e(PyPi, Exact("fastapi-users"), Auth, "FastAPI Users"),
    e(PyPi, Exact("authlib"), Auth, "Authlib"),
    hint(PyPi, Exact("python-jose"), Auth, "JWT", 0.85),
    hint(PyPi, Exact("pyjwt"), Auth, "JWT", 0.85),
    e(RubyGems, Exact("devise"), Auth, "Devise"),
    e(RubyGems, Prefix("omniauth"), Auth, "OmniAuth"),
    hint(RubyGems, Exact("jwt"), Auth, "JWT", 0.85),
    hint(Go, Prefix("github.com/golang-jwt/jwt"), Auth, "JWT", 0.85),
    hint(Cargo, Exact("jsonwebtoken"), Auth, "JWT", 0.85),
    e(Jvm, Exact("spring-boot-starter-security"), Auth, "Spring Security"),
    e(Jvm, Prefix("spring-security"), Auth, "Spring Security"),
    e(Composer, Exact("laravel/sanctum"), Auth, "Sanctum"),
    // ---- styling
    e(Npm, Exact("tailwindcss"), Styling, "Tailwind CSS"),
    e(Npm, Prefix("@tailwindcss/"), Styling, "Tailwind CSS"),
    e(Npm, Exact("styled-components"), Styling, "styled-components"),
    e(Npm, Prefix("@emotion/"), Styling, "Emotion"),
    e(Npm, Exact("sass"), Styling, "Sass"),
    e(Npm, Exact("node-sass"), Styling, "Sass"),
    e(Npm, Exact("bootstrap"), Styling, "Bootstrap"),
    e(Npm, Exact("react-bootstrap"), Styling, "Bootstrap"),
    e(Npm, Exact("@mui/material"), Styling, "Material UI"),
    e(Npm, Exact("@chakra-ui/react"), Styling, "Chakra UI"),
    e(Npm, Prefix("@vanilla-extract/"), Styling, "vanilla-extract"),
    e(Npm, Exact("unocss"), Styling, "UnoCSS"),
    e(RubyGems, Exact("tailwindcss-rails"), Styling, "Tailwind CSS"),
    e(RubyGems, Exact("sassc-rails"), Styling, "Sass"),
    e(RubyGems, Exact("dartsass-rails"), Styling, "Sass"),
    e(RubyGems, Exact("sass-rails"), Styling, "Sass"),
    e(RubyGems, Exact("bootstrap"), Styling, "Bootstrap"),
];

/// Items a framework brings with it: Django ships its ORM, Rails ActiveRecord, Laravel
/// Eloquent. Reported at `IMPLIED_CONFIDENCE`.
pub static IMPLIED: &[(&str, Category, &str)] =
    &[("Django", Orm, "Django ORM"), ("Rails", Orm, "ActiveRecord"), ("Laravel", Orm, "Eloquent")];

/// Meta-frameworks and the base they are built on: when both are found the meta-framework is
/// the framework (a Next.js app declares `react` too).
pub static META_OVER_BASE: &[(&str, &str)] =
    &[("Next.js", "React"), ("Remix", "React"), ("Nuxt", "Vue"), ("SvelteKit", "Svelte"), ("NestJS", "Express")];

/// How a touched path hints at an item.
#[derive(Debug, Clone, Copy)]
pub enum PathHint {
    /// The file name is this, or starts with it followed by `.` (`next.config.mjs`).
    FileStem(&'static str),
    /// The path ends with this (`.module.css`, `config/routes.rb`).
    Suffix(&'static str),
}

/// Path hints: (hint, category, item, confidence). Confidences stay at 0.5–0.6: a file name is
/// weaker evidence than a declared dependency.
pub static PATH_HINTS: &[(PathHint, Category, &str, f64)] = &[
    (PathHint::FileStem("next.config"), Framework, "Next.js", 0.6),
    (PathHint::FileStem("nuxt.config"), Framework, "Nuxt", 0.6),
    (PathHint::FileStem("svelte.config"), Framework, "SvelteKit", 0.55),
    (PathHint::FileStem("angular.json"), Framework, "Angular", 0.6),
    (PathHint::FileStem("manage.py"), Framework, "Django", 0.55),
    (PathHint::Suffix("config/routes.rb"), Framework, "Rails", 0.55),
    (PathHint::Suffix(".vue"), Framework, "Vue", 0.5),
    (PathHint::Suffix(".svelte"), Framework, "Svelte", 0.5),
    (PathHint::Suffix("schema.prisma"), Orm, "Prisma", 0.6),
    (PathHint::FileStem("drizzle.config"), Orm, "Drizzle", 0.6),
    (PathHint::FileStem("vitest.config"), Testing, "Vitest", 0.6),
    (PathHint::FileStem("jest.config"), Testing, "Jest", 0.6),
    (PathHint::FileStem("playwright.config"), Testing, "Playwright", 0.6),
    (PathHint::FileStem("cypress.config"), Testing, "Cypress", 0.6),
    (PathHint::FileStem("conftest.py"), Testing, "pytest", 0.55),
    // `test_*.py` is no sure sign of pytest (unittest names its files the same): `testing`
    // reads it, with the commands run and the files' imports.
    (PathHint::Suffix("_spec.rb"), Testing, "RSpec", 0.5),
    (PathHint::FileStem("tailwind.config"), Styling, "Tailwind CSS", 0.6),
    (PathHint::Suffix(".module.css"), Styling, "CSS Modules", 0.6),
    (PathHint::Suffix(".module.scss"), Styling, "CSS Modules", 0.6),
    (PathHint::Suffix(".scss"), Styling, "Sass", 0.55),
    (PathHint::Suffix(".sass"), Styling, "Sass", 0.55),
];

impl PathHint {
    pub fn matches(self, path: &str, file_name: &str) -> bool {
        match self {
            PathHint::FileStem(s) => {
                file_name == s || (file_name.starts_with(s) && file_name.as_bytes().get(s.len()) == Some(&b'.'))
            }
            PathHint::Suffix(s) => path.ends_with(s),
        }
    }
}

/// Language of a file extension (SPEC §6.1 list), lowercase as in `StackProfile::languages`.
/// A language's display name, as users and the upstream see it (SPEC §6.1): "typescript" →
/// "TypeScript", "csharp" → "C#". Accepts a display name too (stack profiles stored before
/// display names were used hold ids); anything unknown is returned trimmed.
pub fn display_language(lang: &str) -> &str {
    match lang.trim().to_lowercase().as_str() {
        "typescript" => "TypeScript",
        "javascript" => "JavaScript",
        "python" => "Python",
        "go" => "Go",
        "rust" => "Rust",
        "ruby" => "Ruby",
        "java" => "Java",
        "kotlin" => "Kotlin",
        "csharp" | "c#" => "C#",
        "php" => "PHP",
        "swift" => "Swift",
        _ => lang.trim(),
    }
}

/// The internal id of a language from its display name or id ("C#" → "csharp"), the form
/// static patterns and catalogue hints use.
pub fn language_id(lang: &str) -> String {
    match lang.trim().to_lowercase().as_str() {
        "c#" => "csharp".to_owned(),
        other => other.to_owned(),
    }
}

/// The language id of a lowercase file extension (SPEC §6.1's list): the one extension table
/// (stack detection, the offline provider and `analysis::lang_for_path` all read it).
pub fn language_of_extension(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "ts" | "tsx" | "mts" | "cts" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "py" => "python",
        "go" => "go",
        "rs" => "rust",
        "rb" => "ruby",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "cs" => "csharp",
        "php" => "php",
        "swift" => "swift",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jvm_entries_match_the_artifact() {
        let spring = CATALOG.iter().find(|e| e.name == "Spring").expect("Spring entry");
        assert!(spring.matches(Jvm, "org.springframework.boot:spring-boot-starter-web"));
        assert!(!spring.matches(Npm, "spring-boot"));
        let junit = CATALOG.iter().find(|e| e.name == "JUnit").expect("JUnit entry");
        assert!(junit.matches(Jvm, "org.junit.jupiter:junit-jupiter"));
    }

    #[test]
    fn path_hints() {
        assert!(PathHint::FileStem("next.config").matches("apps/web/next.config.mjs", "next.config.mjs"));
        assert!(!PathHint::FileStem("next.config").matches("next.configure.js", "next.configure.js"));
    }
}
