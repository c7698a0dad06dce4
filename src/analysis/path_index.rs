//! Finding a session's files by a cited path without scanning them all (issue 43 §4): the
//! files that [`path_matches`] a cited path, from two maps built once per job, so a lookup
//! costs a few hash probes and not one comparison (and two allocations) per file of the
//! session. The answer is exactly `path_matches`'s: the maps give candidates, each confirmed
//! with `path_matches` itself.
//!
//! `path_matches(captured, cited)` holds when the two paths (cleaned: trimmed, `\` as `/`, no
//! leading `./`) are equal or one is the other's tail after a `/`. So each captured path is
//! indexed by its tails after a `/` (and itself), for a cited path that is one of them; and
//! by itself without its leading `/`, for a cited path one of whose tails it is.

use std::collections::HashMap;

use super::concepts::path_matches;

/// The files of a session by the paths that can cite them.
pub struct PathIndex<'a> {
    paths: Vec<&'a str>,
    /// A captured path's tails after each `/`, and the whole path: file numbers, in order.
    by_tail: HashMap<String, Vec<usize>>,
    /// A captured path without its leading `/`s: file numbers, in order.
    by_whole: HashMap<String, Vec<usize>>,
}

impl<'a> PathIndex<'a> {
    /// The index of `paths` (file `i` is `paths[i]`).
    pub fn new(paths: impl IntoIterator<Item = &'a str>) -> PathIndex<'a> {
        let paths: Vec<&str> = paths.into_iter().collect();
        let mut by_tail: HashMap<String, Vec<usize>> = HashMap::with_capacity(paths.len() * 3);
        let mut by_whole: HashMap<String, Vec<usize>> = HashMap::with_capacity(paths.len());
        for (i, path) in paths.iter().enumerate() {
            let clean = clean(path);
            if clean.is_empty() {
                continue;
            }
            for tail in tails(&clean) {
                push(&mut by_tail, tail, i);
            }
            push(&mut by_whole, clean.trim_start_matches('/'), i);
        }
        PathIndex { paths, by_tail, by_whole }
    }

    /// The files `cited` names (`path_matches(file, cited)`), in file order.
    pub fn matching(&self, cited: &str) -> Vec<usize> {
        let clean = clean(cited);
        if clean.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<usize> = Vec::new();
        let mut add = |ids: Option<&Vec<usize>>| found.extend(ids.into_iter().flatten().copied());
        add(self.by_tail.get(clean.as_str()));
        add(self.by_tail.get(clean.trim_start_matches('/')));
        for tail in tails(&clean) {
            add(self.by_whole.get(tail.trim_start_matches('/')));
        }
        found.sort_unstable();
        found.dedup();
        found.retain(|&i| path_matches(self.paths[i], cited));
        found
    }

    /// The first file `cited` names, as `files.iter().position(|f| path_matches(f, cited))`.
    pub fn first(&self, cited: &str) -> Option<usize> {
        self.matching(cited).first().copied()
    }
}

/// A test without allocation that holds whenever `path_matches(captured, cited)` does: the two
/// paths end in the same name (what one path's tail of the other keeps). For a scan of a few
/// files where an index would not pay for itself, before the real test.
pub fn may_match(captured: &str, cited: &str) -> bool {
    name(captured) == name(cited)
}

/// The last name of a path (after its last `/` or `\\`), ends trimmed.
fn name(path: &str) -> &str {
    path.trim().rsplit(['/', '\\']).next().unwrap_or("")
}

fn push(map: &mut HashMap<String, Vec<usize>>, key: &str, i: usize) {
    let ids = map.entry(key.to_owned()).or_default();
    if ids.last() != Some(&i) {
        ids.push(i);
    }
}

/// As `path_matches` cleans a path.
fn clean(path: &str) -> String {
    let path = path.trim().replace('\\', "/");
    path.trim_start_matches("./").to_string()
}

/// `path` itself and each of its tails after a `/`.
fn tails(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once(path).chain(path.match_indices('/').map(|(at, _)| &path[at + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (captured, cited) pair of a set of spellings: the index finds exactly the files a
    /// scan with `path_matches` finds, in the same order.
    #[test]
    fn the_index_finds_what_a_scan_finds() {
        let captured = [
            "src/a.ts",
            "/home/x/proj/src/a.ts",
            "lib/src/a.ts",
            "a.ts",
            "src\\b.ts",
            "./src/c.ts",
            " src/d.ts ",
            "/abs/only.py",
            "",
            "src/data.ts",
            "x//y.rs",
            "pkg/a.ts",
        ];
        let cited = [
            "src/a.ts",
            "a.ts",
            "/home/x/proj/src/a.ts",
            "/other/root/lib/src/a.ts",
            "./src/b.ts",
            "src/c.ts",
            "src/d.ts",
            "only.py",
            "/abs/only.py",
            "abs/only.py",
            "",
            "/",
            "data.ts",
            "y.rs",
            "/y.rs",
            "x//y.rs",
            "missing.go",
            "proj/src/a.ts",
        ];
        let index = PathIndex::new(captured.iter().copied());
        for c in cited {
            let scan: Vec<usize> = (0..captured.len()).filter(|&i| path_matches(captured[i], c)).collect();
            assert_eq!(index.matching(c), scan, "cited {c:?}");
            assert_eq!(index.first(c), captured.iter().position(|f| path_matches(f, c)), "cited {c:?}");
            for f in captured {
                assert!(!path_matches(f, c) || may_match(f, c), "may_match({f:?}, {c:?})");
            }
        }
    }

    #[test]
    fn many_files_are_found_by_their_own_tails() {
        let paths: Vec<String> = (0..3_000).map(|i| format!("pkg{i:04}/lib/cart.ts")).collect();
        let index = PathIndex::new(paths.iter().map(String::as_str));
        assert_eq!(index.first("pkg1234/lib/cart.ts"), Some(1234));
        assert_eq!(index.first("/home/ann/shop/pkg0007/lib/cart.ts"), Some(7));
        assert_eq!(index.matching("lib/cart.ts").len(), 3_000, "a shared tail names every file with it");
        assert_eq!(index.first("lib/other.ts"), None);
    }
}
