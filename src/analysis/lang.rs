//! The languages the analysis reads, and which one a file is in (from its extension or a
//! well-known file name). Which grammar parses a file of a language is `syntax::Grammar`'s.

use std::path::Path;

/// The languages the static rules understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    TypeScript,
    JavaScript,
    Python,
    Go,
    Rust,
    Ruby,
    CSharp,
    Java,
}

impl Lang {
    /// The name stored in `Pattern::language`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::TypeScript => "typescript",
            Lang::JavaScript => "javascript",
            Lang::Python => "python",
            Lang::Go => "go",
            Lang::Rust => "rust",
            Lang::Ruby => "ruby",
            Lang::CSharp => "csharp",
            Lang::Java => "java",
        }
    }
}

/// The language of a file, from its extension (Ruby also from a few well-known file names).
pub fn lang_for_path(path: &str) -> Option<Lang> {
    let p = Path::new(path);
    let file_name = p.file_name()?.to_str()?;
    if matches!(file_name, "Gemfile" | "Rakefile" | "Guardfile") {
        return Some(Lang::Ruby);
    }
    let ext = p.extension()?.to_str()?.to_ascii_lowercase();
    // Stubs and Rake files are not in the stack list, but the analysis reads them.
    let id = match ext.as_str() {
        "pyi" => "python",
        "rake" => "ruby",
        other => super::stack::language_of_extension(other)?,
    };
    Some(match id {
        "typescript" => Lang::TypeScript,
        "javascript" => Lang::JavaScript,
        "python" => Lang::Python,
        "go" => Lang::Go,
        "rust" => Lang::Rust,
        "ruby" => Lang::Ruby,
        "csharp" => Lang::CSharp,
        "java" => Lang::Java,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lang_for_path_by_extension() {
        assert_eq!(lang_for_path("app/page.tsx"), Some(Lang::TypeScript));
        assert_eq!(lang_for_path("x/y.cjs"), Some(Lang::JavaScript));
        assert_eq!(lang_for_path("Gemfile"), Some(Lang::Ruby));
        assert_eq!(lang_for_path("types.pyi"), Some(Lang::Python));
        assert_eq!(lang_for_path("README.md"), None);
        assert_eq!(lang_for_path("noext"), None);
    }
}
