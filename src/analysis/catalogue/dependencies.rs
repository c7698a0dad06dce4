//! Catalogue data: a missing module or package, one entry per ecosystem (issue 31: a pytest
//! `ModuleNotFoundError` was explained with `package.json` and "Cannot find module"). Like
//! `errors`, these have no static-analysis signals: `analysis::failures` classifies a failed
//! call's error as a missing dependency, tells its language from the error's words, the command
//! or the session, and names one of these. Each speaks only its own ecosystem's tools (pip and
//! `pyproject.toml`, `go get` and `go.mod`, `Cargo.toml`, the Gemfile and bundle, the build file,
//! the `PackageReference`, `package.json`), so the precision rule on the session's language
//! (`analysis::precision`) never has to refuse one where it was chosen.

use super::{BugEdit, Entry};
use crate::analysis::Lang;
use crate::analysis::concepts::Level;

/// Every entry here: a missing dependency, taught from the error the developer met.
const fn missing(
    name: &'static str,
    description: &'static str,
    tokens: &'static [&'static str],
    example: &'static str,
) -> Entry {
    Entry {
        name,
        category: "architecture_pattern",
        difficulty: Level::Junior,
        description,
        signals: &[],
        stack_hints: &[],
        tokens,
        example,
        facts: ["", "", ""],
        myths: ["", "", ""],
        order_prompt: "",
        steps: &[],
        reading: ["", ""],
        bugs: &[],
        open: ["", ""],
        follow_up: "",
        holds_in: &[],
        variants: &[],
        generic: false,
    }
}

pub const ENTRIES: &[Entry] = &[
    Entry {
        facts: [
            "A bare import name like \"zod\" resolves to an installed package; a path like \"./cart\" resolves to a file of the project.",
            "A package must be declared in package.json so that every fresh install gets it, not only be present on one machine.",
            "The lock file pins the exact versions installed, so a missing or different transitive package shows up the same way on every machine.",
        ],
        myths: [
            "If an import works on my machine, the package is declared correctly for everyone.",
            "\"Cannot find module\" always means the package does not exist in the registry.",
            "Installing a package globally is the right fix for a project's missing import.",
        ],
        order_prompt: "Order the steps of fixing \"Cannot find module 'zod'\".",
        steps: &[
            "read the module name the error reports",
            "decide whether it is a package name or a path of the project",
            "look for it in package.json and the lock file",
            "add and install the package, or fix the name or path",
            "run the command again",
        ],
        reading: [
            "Where does the first line look for \"zod\", and what must be true of the project for it to be found on a fresh clone?",
            "A bare name is resolved from the installed packages (node_modules here), so zod must be declared in package.json (and pinned in the lock file) and installed; otherwise the import fails with Cannot find module 'zod' even though the code is right.",
        ],
        bugs: &[BugEdit {
            from: "from \"zod\"",
            to: "from \"zod-schema\"",
            answer: "There is no installed package named zod-schema: the import fails with Cannot find module 'zod-schema' before any code runs. The name must match the declared, installed package.",
        }],
        open: [
            "A teammate's CI build fails with a missing module that works on your laptop. How do you find out why, and how do you keep it from happening again?",
            "Compare what is declared with what is installed: the package may be installed locally by hand, globally, or as a transitive dependency of something else, but not declared in package.json; or the lock file was not committed, or the case of a file path differs (macOS is case-insensitive, Linux CI is not). Fix by declaring the dependency explicitly and committing the lock file; prevent it with clean installs in CI (npm ci) and a linter rule against undeclared imports.",
        ],
        follow_up: "What is the difference between a package being installed on your machine and being declared by the project?",
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        ..missing(
            "Missing modules and dependencies",
            "An import resolves to a package the project declares and installs, or to a file of the project by its path. \"Cannot find module\" means one of those links is broken: the package is not installed or not declared, the name is misspelt, or the relative path is wrong.",
            &["import", "from", "z"],
            "import { z } from \"zod\";\n\nexport const CartItem = z.object({\n  productId: z.string(),\n  quantity: z.number().int().positive(),\n});",
        )
    },
    Entry {
        facts: [
            "ModuleNotFoundError names the module Python could not import; the first thing to check is whether it is installed in the environment that ran the command.",
            "Each virtualenv has its own installed packages, so pip install must run with the interpreter that runs the code (python -m pip inside the activated environment).",
            "Dependencies belong in pyproject.toml (or a requirements file) so that a fresh environment gets them, and installing the project itself (pip install -e .) makes its own package importable from the tests.",
        ],
        myths: [
            "If pip install printed success, every Python on the machine can now import the package.",
            "ModuleNotFoundError always means the package does not exist anywhere.",
            "Adding the project's folder to the import path by hand in each file is the right fix for a project that cannot import itself.",
        ],
        order_prompt: "Order the steps of fixing \"ModuleNotFoundError: No module named 'requests'\".",
        steps: &[
            "read the module name the error reports",
            "check which interpreter and virtualenv ran the command",
            "decide whether it is a third-party package or a module of the project",
            "declare it in pyproject.toml and install it there, or make the project importable",
            "run the command again",
        ],
        reading: [
            "What must be true of the environment for `import requests` to work on a fresh checkout of this project?",
            "requests is a third-party package, so it must be installed in the virtualenv that runs the code and declared in pyproject.toml (or the requirements file) so that every fresh environment gets it; otherwise the import fails with ModuleNotFoundError: No module named 'requests' before fetch_rate ever runs.",
        ],
        bugs: &[BugEdit {
            from: "import requests",
            to: "import request",
            answer: "There is no module named request: loading the file fails with ModuleNotFoundError: No module named 'request'. The import must name the module the installed package provides.",
        }],
        open: [
            "CI fails with ModuleNotFoundError for a package that imports fine on your machine. How do you find out why, and how do you keep it from happening again?",
            "Compare what is declared with what is installed: on your machine the package may be installed for another interpreter or virtualenv, or come in as a dependency of something else, without being declared in pyproject.toml; or the tests cannot import the project itself because it is not installed (pip install -e .) or they run from another directory. Declare the dependency and pin it with a lock or constraints file, install with the interpreter that runs the tests (python -m pip), and build CI environments from scratch so an undeclared import fails there first.",
        ],
        follow_up: "Why can pip install succeed and the import still fail in the same terminal?",
        holds_in: &[Lang::Python],
        ..missing(
            "Missing Python packages and imports",
            "An import names a package installed in the active virtualenv or a module of the project on the import path. ModuleNotFoundError means Python found neither: the package was never installed there with pip or never declared in pyproject.toml, or the project itself is not importable from where the command ran.",
            &["import", "from"],
            "from decimal import Decimal\n\nimport requests\n\n\ndef fetch_rate(url):\n    return Decimal(requests.get(url, timeout=5).json()[\"rate\"])",
        )
    },
    Entry {
        facts: [
            "An import path outside the standard library must belong to a module required in go.mod, or the build stops with no required module provides package.",
            "go get adds the module to go.mod at a version and records its checksums, and go mod tidy adds what the imports need and drops what they no longer use.",
            "The checksum file next to go.mod pins exactly what was downloaded, so every machine builds the same dependency code and a changed module fails verification instead of building silently.",
        ],
        myths: [
            "A module that is in the module cache on my machine is available to every build of the project.",
            "The import path only has to match the package's name, not where its module is published.",
            "Copying the dependency's files into the project by hand is the usual way to add one.",
        ],
        order_prompt: "Order the steps of fixing \"no required module provides package github.com/google/uuid\".",
        steps: &[
            "read the import path the error reports",
            "check whether it is the standard library, this module or another module",
            "look for the module in go.mod",
            "add it with go get, or fix the import path",
            "build again",
        ],
        reading: [
            "What must go.mod contain for the uuid import to build on a fresh clone?",
            "github.com/google/uuid is outside the standard library, so go.mod must require the module that provides it (go get github.com/google/uuid adds it with its checksums); without that requirement the build fails with no required module provides package github.com/google/uuid before anything is compiled.",
        ],
        bugs: &[BugEdit {
            from: "\"github.com/google/uuid\"",
            to: "\"github.com/google/uid\"",
            answer: "No required module provides the package github.com/google/uid: the import path has a typo, so the build stops before compiling main. The path must match the module's published path.",
        }],
        open: [
            "A teammate's build fails with no required module provides package for an import that builds for you. How do you find out why, and how do you keep it from happening again?",
            "Compare go.mod with what the code imports: the module may be in your module cache or a workspace file on your machine without being required in go.mod, or go.mod and its checksum file were not committed after go get. Run go mod tidy and commit both files, check that the import path matches the module's published path (case too), and have CI build from a clean module cache with go mod verify so a missing requirement fails there first.",
        ],
        follow_up: "Why does go mod tidy change go.mod when you add an import?",
        ..missing(
            "Missing Go modules and packages",
            "A Go import path names a package inside a module, and go.mod lists the modules the build may use, at exact versions. \"no required module provides package\" means the import names a module go.mod does not require, or a path with a typo, so the build stops before compiling.",
            &["import"],
            "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/google/uuid\"\n)\n\nfunc main() {\n\tfmt.Println(uuid.NewString())\n}",
        )
    },
    Entry {
        facts: [
            "A use path must start at something the compiler knows: this crate, the standard library, or a dependency listed in Cargo.toml.",
            "cargo add puts the dependency in Cargo.toml, and Cargo.lock pins its exact version for every build of the project.",
            "Some items exist only when a crate feature is enabled (serde's derive macros need its derive feature), so an unresolved import can be a missing feature rather than a missing crate.",
        ],
        myths: [
            "An unresolved import means the crate failed to download, so building again fixes it.",
            "Any crate in the local registry cache can be used without being declared.",
            "Making every module public is the way to fix an unresolved import inside your own crate.",
        ],
        order_prompt: "Order the steps of fixing \"error[E0432]: unresolved import `serde`\".",
        steps: &[
            "read the path the compiler could not resolve",
            "decide whether it names this crate, std or a dependency",
            "look for the dependency and its features in Cargo.toml",
            "add it with cargo add, enable the feature, or fix the path",
            "build again",
        ],
        reading: [
            "What must Cargo.toml contain for `use serde::Deserialize;` and the derive to compile?",
            "serde must be a dependency in Cargo.toml with its derive feature enabled (cargo add serde --features derive); without the dependency the use line is error[E0432] unresolved import, and without the feature the Deserialize derive macro is not found.",
        ],
        bugs: &[BugEdit {
            from: "use serde::Deserialize;",
            to: "use serde::Deserialise;",
            answer: "serde has no item named Deserialise: the compiler reports error[E0432] unresolved import `serde::Deserialise`, and the derive cannot be found either. The path must name an item that exists.",
        }],
        open: [
            "After a dependency upgrade, several use lines no longer resolve. How do you work through them?",
            "Read the first unresolved path and check the crate's changelog and docs for the version now in Cargo.lock: items get moved between modules, renamed, or put behind features. Fix the paths or enable the feature in Cargo.toml rather than pinning an old version blindly, build with --locked in CI so the lock file decides what is used, and keep the upgrade in a commit of its own so that a revert is easy.",
        ],
        follow_up: "Why can an import fail even though the crate is listed in Cargo.toml?",
        holds_in: &[Lang::Rust],
        ..missing(
            "Unresolved imports and missing crates",
            "A use path names an item of this crate, of the standard library, or of a dependency declared in Cargo.toml. error[E0432] (unresolved import) means the path leads nowhere: the crate is not a dependency, the feature that provides the item is off, or a module or item name is wrong.",
            &["use", "crate"],
            "use serde::Deserialize;\n\n#[derive(Deserialize)]\npub struct Config {\n    pub port: u16,\n}",
        )
    },
    Entry {
        facts: [
            "LoadError names the file or gem that require could not find; check that the gem is in the Gemfile and installed for this project.",
            "bundle install installs what the Gemfile asks for and Gemfile.lock pins the exact versions, so the code must run inside that bundle to see them.",
            "require_relative loads a file by its path from the current file, while require searches the load path, so a project file loaded with require fails wherever the load path differs.",
        ],
        myths: [
            "A gem installed with gem install is available to every project's bundle.",
            "cannot load such file always means the gem does not exist.",
            "Adding the gem's folder to the load path by hand in each file is the right fix.",
        ],
        order_prompt: "Order the steps of fixing \"cannot load such file -- faraday (LoadError)\".",
        steps: &[
            "read the file or gem name the error reports",
            "decide whether it is a gem or a file of the project",
            "look for the gem in the Gemfile and Gemfile.lock",
            "add it and run bundle install, or fix the path",
            "run the command again through the bundle",
        ],
        reading: [
            "What must be true of the project for `require \"faraday\"` to work on a fresh checkout?",
            "faraday is a gem, so it must be listed in the Gemfile, installed with bundle install (pinned in Gemfile.lock), and the code must run inside the bundle; otherwise require raises cannot load such file -- faraday (LoadError). json comes with Ruby and needs no entry.",
        ],
        bugs: &[BugEdit {
            from: "require \"faraday\"",
            to: "require \"farady\"",
            answer: "There is no gem or file named farady: require raises LoadError (cannot load such file -- farady) as the file loads, before RateClient is defined.",
        }],
        open: [
            "A script works on your machine but fails in production with LoadError for a gem. How do you find out why, and how do you keep it from happening again?",
            "Check whether the gem is declared: it may be installed globally on your machine but missing from the Gemfile, or sit in a group (development, test) that production does not install, or the script runs outside the bundle. Declare it in the right group, commit Gemfile.lock, run the script through the bundle, and build deploys with a frozen bundle install so an undeclared gem fails there first.",
        ],
        follow_up: "What is the difference between require and require_relative?",
        holds_in: &[Lang::Ruby],
        ..missing(
            "Missing gems and require paths",
            "require loads a gem installed for the project's bundle, or a file found on the load path. LoadError (cannot load such file) means Ruby found neither: the gem is not in the Gemfile or not installed, the code runs outside the bundle, or the path is wrong.",
            &["require", "gem"],
            "require \"json\"\nrequire \"faraday\"\n\nclass RateClient\n  def rate(url)\n    JSON.parse(Faraday.get(url).body).fetch(\"rate\")\n  end\nend",
        )
    },
    Entry {
        facts: [
            "The compiler sees only the JDK, the project's own classes and the libraries the build file declares, so an import from an undeclared library fails with package does not exist.",
            "A dependency's scope decides where it is visible: a test-scoped library compiles in the tests but not in the main code.",
            "The build tool resolves transitive dependencies too, so code should declare what it imports directly instead of relying on a library that another dependency happens to bring.",
        ],
        myths: [
            "If the IDE shows no error, the build file declares every library the code imports.",
            "package does not exist always means the library is not published anywhere.",
            "Copying the library's jar into the source folder is the usual way to add a dependency.",
        ],
        order_prompt: "Order the steps of fixing \"error: package com.fasterxml.jackson.databind does not exist\".",
        steps: &[
            "read the package the compiler reports",
            "decide whether it is the JDK, the project or a library",
            "look for the library and its scope in the build file",
            "declare it with the right scope, or fix the import",
            "build again",
        ],
        reading: [
            "What must the build declare for the ObjectMapper import to compile on a fresh checkout?",
            "ObjectMapper comes from Jackson's databind library, which is not part of the JDK, so the build file must declare that dependency in a scope the main code sees; otherwise javac reports that package com.fasterxml.jackson.databind does not exist, on the import line.",
        ],
        bugs: &[BugEdit {
            from: "jackson.databind",
            to: "jackson.databinding",
            answer: "There is no package com.fasterxml.jackson.databinding: javac stops with package does not exist on the import line, and ObjectMapper cannot be found either.",
        }],
        open: [
            "The build passes in the IDE but fails on CI with package does not exist. How do you find out why, and how do you keep it from happening again?",
            "Compare the IDE's classpath with the build's: the IDE may have a library added by hand or another profile, the dependency may be declared only in test scope, or another dependency used to bring it in transitively and no longer does. Declare every library the code imports directly, with the right scope, make the build tool the one source of truth for the IDE, and run a clean build from an empty local cache on CI so an undeclared library fails there first.",
        ],
        follow_up: "Why can an import compile in the tests but not in the main sources?",
        holds_in: &[Lang::Java],
        ..missing(
            "Missing Java packages and build dependencies",
            "An import names a class of this project, of the JDK, or of a library the build file declares (Maven's POM or Gradle's build script). \"package … does not exist\" means the compiler found no such package on the classpath: the dependency is not declared, has the wrong scope, or the name is wrong.",
            &["import"],
            "import com.fasterxml.jackson.databind.ObjectMapper;\n\npublic class Rates {\n    private final ObjectMapper mapper = new ObjectMapper();\n}",
        )
    },
    Entry {
        facts: [
            "CS0246 names the type or namespace the compiler could not find; check for a missing using directive and for the package that provides it.",
            "dotnet add package writes a PackageReference into the project file and the restore downloads it, so every build of the project gets the same package.",
            "Each project lists its own references, so a type used in one project of a solution is not visible in another until that project references the package or the project itself.",
        ],
        myths: [
            "A package restored on my machine is available to every project of the solution.",
            "CS0246 always means the package does not exist.",
            "Copying the package's DLL next to the code is the usual way to add a dependency.",
        ],
        order_prompt: "Order the steps of fixing \"error CS0246: The type or namespace name 'Serilog' could not be found\".",
        steps: &[
            "read the type or namespace the compiler reports",
            "check for a missing using directive",
            "look for the package's PackageReference in the project file",
            "add it with dotnet add package, or fix the name",
            "build again",
        ],
        reading: [
            "What must the project contain for `using Serilog;` to compile on a fresh clone?",
            "Serilog is a NuGet package, so the project file must reference it with a PackageReference (dotnet add package Serilog writes one) and the restore must run; without it the compiler reports CS0246: the type or namespace name 'Serilog' could not be found.",
        ],
        bugs: &[BugEdit {
            from: "using Serilog;",
            to: "using Serilogs;",
            answer: "There is no namespace Serilogs: the compiler reports CS0246 (the type or namespace name 'Serilogs' could not be found), and LoggerConfiguration cannot be found either.",
        }],
        open: [
            "A build fails on CI with CS0246 for a type that compiles in your IDE. How do you find out why, and how do you keep it from happening again?",
            "Compare what the failing project references with what the IDE built: the type may come from a package referenced only by another project of the solution, from a DLL referenced by path on your machine, or from a package restored locally whose PackageReference was never committed. Reference the package in each project that uses it (or centrally, with pinned versions), restore from a clean cache on CI, and treat warnings about missing references as errors.",
        ],
        follow_up: "Why can one project of a solution use a package that another project cannot?",
        holds_in: &[Lang::CSharp],
        ..missing(
            "Missing NuGet packages and namespaces",
            "A using directive names a namespace of the framework, of the project, or of a package the project file references with a PackageReference. CS0246 (type or namespace not found) means the compiler found no such type: the package is not referenced, a using directive is missing, or the name is wrong.",
            &["using"],
            "using Serilog;\n\npublic static class Startup\n{\n    public static ILogger CreateLogger() => new LoggerConfiguration().CreateLogger();\n}",
        )
    },
];
