//! The dashboard at `GET /`: one self-contained HTML page (its CSS and JavaScript inlined, no
//! CDN, no build step) that polls the JSON API. The sources are `index.html`, `style.css` and
//! `app.js` beside this file, embedded with `include_str!` and assembled once.
//!
//! # Security
//! The page shows user data (job errors, payloads, session ids). `app.js` inserts text only as
//! text nodes; as a second line, the response carries a Content-Security-Policy that allows
//! exactly the inlined script and stylesheet (by SHA-256 hash) and same-origin fetches, so
//! markup smuggled into the page could neither run a script nor load anything. Hashes rather
//! than a per-response nonce: the assets are constant, so the policy is computed once, and no
//! random source is needed. The page makes only same-origin requests, which the Origin/Host
//! guards of [`crate::http::server`] accept as they are.

use std::sync::OnceLock;

use crate::http::wire::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

const HTML: &str = include_str!("index.html");
const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("app.js");

struct Page {
    html: String,
    csp: String,
}

fn assembled() -> &'static Page {
    static PAGE: OnceLock<Page> = OnceLock::new();
    PAGE.get_or_init(|| {
        assert!(
            HTML.contains("{{STYLE}}") && HTML.contains("{{SCRIPT}}"),
            "index.html must have the {{STYLE}} and {{SCRIPT}} placeholders"
        );
        let html = HTML.replace("{{STYLE}}", STYLE).replace("{{SCRIPT}}", SCRIPT);
        let csp = format!(
            "default-src 'none'; script-src '{}'; style-src '{}'; connect-src 'self'; img-src 'self' data:; \
             base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            csp_hash(SCRIPT),
            csp_hash(STYLE)
        );
        Page { html, csp }
    })
}

/// The page, as `text/html; charset=utf-8`, never cached (a new binary may serve a new page).
pub fn page() -> Response {
    let page = assembled();
    Response::new(200, "text/html; charset=utf-8", page.html.clone())
        .with_header("Content-Security-Policy", page.csp.clone())
        .with_header("X-Content-Type-Options", "nosniff")
        .with_header("Referrer-Policy", "no-referrer")
}

/// `sha256-<base64>` of an inline element's text, as CSP hash sources spell it.
fn csp_hash(text: &str) -> String {
    // The base64 crate is already in the tree (ureq uses it).
    format!("sha256-{}", STANDARD.encode(Sha256::digest(text.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (input, expected) in cases {
            assert_eq!(STANDARD.encode(input.as_bytes()), expected, "{input:?}");
        }
    }

    #[test]
    fn the_page_inlines_its_assets_and_the_policy_allows_exactly_them() {
        let page = assembled();
        assert!(!page.html.contains("{{"), "a placeholder was left in the page");
        assert!(page.html.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(page.html.contains(&format!("<style>{STYLE}</style>")));
        // The hash of the empty string, a known value, proves the digest is spelled right.
        assert_eq!(csp_hash(""), "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        assert!(page.csp.contains(&format!("script-src '{}'", csp_hash(SCRIPT))));
        assert!(!page.csp.contains("unsafe-inline"));
    }

    #[test]
    fn the_script_never_uses_inner_html() {
        // Every text from the API must go in as text (see app.js's header).
        for banned in [".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write"] {
            assert!(!SCRIPT.contains(banned), "app.js uses {banned}");
        }
    }
}
