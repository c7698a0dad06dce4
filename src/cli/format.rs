//! Pure helpers shared by the admin commands: parsing `--since`, ages, cutting text to a
//! column, left-aligned tables, and percent-encoding for the worker's URLs. No I/O here, so
//! every rule has its unit test beside it.

use crate::clock::Millis;

/// Width a table row aims for when the terminal's width is unknown (`COLUMNS` unset, or
/// stdout is not a terminal). At 80 the fixed columns of `vl jobs list` (~60) would leave an
/// error message under 20 characters; 100 keeps ~40 and fits common default windows.
pub const DEFAULT_WIDTH: usize = 100;

/// The narrowest the last (free-text) column of a table is ever cut to.
pub const MIN_LAST_COLUMN: usize = 24;

/// Parses `--since`: milliseconds since the epoch (`1764400000000`), or a duration before
/// `now` made of `<number><unit>` parts with units `s`, `m`, `h`, `d`, `w` (`30m`, `2h`,
/// `1d`, `1h30m`).
pub fn parse_since(raw: &str, now: Millis) -> Result<Millis, String> {
    let raw = raw.trim();
    let invalid = || {
        format!(
            "--since takes milliseconds since the epoch (e.g. 1764400000000) or a duration ago \
             such as 30m, 2h, 1d or 1h30m; not {raw:?}"
        )
    };
    if raw.is_empty() {
        return Err(invalid());
    }
    if raw.bytes().all(|b| b.is_ascii_digit()) {
        return raw.parse().map_err(|_| invalid());
    }
    let mut total: Millis = 0;
    let mut digits = String::new();
    for c in raw.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: Millis = match c.to_ascii_lowercase() {
            's' => 1_000,
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            'w' => 7 * 86_400_000,
            _ => return Err(invalid()),
        };
        let n: Millis = digits.parse().map_err(|_| invalid())?;
        total = n.checked_mul(unit).and_then(|ms| total.checked_add(ms)).ok_or_else(invalid)?;
        digits.clear();
    }
    if !digits.is_empty() {
        return Err(invalid()); // a trailing number without a unit: "2h30"
    }
    Ok(now.saturating_sub(total))
}

/// A short age: `now`, `42s`, `5m`, `3h`, `2d`.
pub fn age(ms: Millis) -> String {
    let secs = ms.max(0) / 1000;
    match secs {
        0 => "now".into(),
        1..=119 => format!("{secs}s"),
        120..=7_199 => format!("{}m", secs / 60),
        7_200..=172_799 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// A time relative to now, from `now - at`: `just now`, `42s ago`, or `in 5m` for a time to
/// come (a retry's `run_at`).
pub fn relative(since: Millis) -> String {
    match since {
        -999..=999 => "just now".into(),
        1000.. => format!("{} ago", age(since)),
        _ => format!("in {}", age(since.saturating_neg())),
    }
}

/// One line of at most `width` characters: line breaks become spaces, runs of blanks one
/// space, and a cut text ends with `…`.
pub fn cut(text: &str, width: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= width {
        return flat;
    }
    let mut out: String = flat.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A left-aligned table; every column is as wide as its widest cell, except the last, which
/// is cut so that a row fits `width` (never below [`MIN_LAST_COLUMN`]).
pub fn table(headers: &[&str], rows: &[Vec<String>], width: usize) -> String {
    let columns = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns.saturating_sub(1)) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let fixed: usize = widths.iter().take(columns.saturating_sub(1)).map(|w| w + 2).sum();
    let last = width.saturating_sub(fixed).max(MIN_LAST_COLUMN);
    let mut out = String::new();
    let mut line = |cells: Vec<String>| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == columns {
                text.push_str(&cut(cell, last));
            } else {
                text.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(headers.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        line(row.clone());
    }
    out
}

/// Everything but RFC 3986's unreserved characters (`A-Z a-z 0-9 - _ . ~`) is encoded.
const NOT_UNRESERVED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Percent-encodes a URL path segment or query value (RFC 3986 unreserved characters stay).
pub fn encode(raw: &str) -> String {
    percent_encoding::utf8_percent_encode(raw, NOT_UNRESERVED).to_string()
}

/// A session id from a job's lane (`session:<id>`); other lanes are shown as they are.
pub fn session_of_lane(lane: Option<&str>) -> &str {
    match lane {
        Some(lane) => lane.strip_prefix("session:").unwrap_or(lane),
        None => "-",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = 1_795_958_734_123;

    #[test]
    fn since_takes_epoch_millis_or_a_duration_ago() {
        assert_eq!(parse_since("1764400000000", NOW), Ok(1_764_400_000_000));
        assert_eq!(parse_since("30m", NOW), Ok(NOW - 30 * 60_000));
        assert_eq!(parse_since("2h", NOW), Ok(NOW - 2 * 3_600_000));
        assert_eq!(parse_since("1d", NOW), Ok(NOW - 86_400_000));
        assert_eq!(parse_since("1h30m", NOW), Ok(NOW - 90 * 60_000));
        assert_eq!(parse_since(" 45S ", NOW), Ok(NOW - 45_000));
        assert_eq!(parse_since("1w", NOW), Ok(NOW - 7 * 86_400_000));
    }

    #[test]
    fn since_refuses_what_it_cannot_read() {
        for bad in ["", "h", "2x", "2h30", "-5m", "yesterday", "99999999999999999999999d"] {
            let error = parse_since(bad, NOW).unwrap_err();
            assert!(error.contains("30m, 2h, 1d"), "{bad:?}: {error}");
        }
    }

    #[test]
    fn ages_are_short() {
        assert_eq!(age(0), "now");
        assert_eq!(age(-5), "now");
        assert_eq!(age(42_000), "42s");
        assert_eq!(age(5 * 60_000), "5m");
        assert_eq!(age(3 * 3_600_000), "3h");
        assert_eq!(age(3 * 86_400_000), "3d");
        assert_eq!(relative(200), "just now");
        assert_eq!(relative(42_000), "42s ago");
        assert_eq!(relative(-5 * 60_000), "in 5m");
    }

    #[test]
    fn cut_flattens_and_marks_the_cut() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("two\nlines   here", 40), "two lines here");
        assert_eq!(cut("abcdefghij", 5), "abcd…");
        assert_eq!(cut("ééééé", 3), "éé…");
    }

    #[test]
    fn tables_align_and_cut_the_last_column() {
        let rows = vec![
            vec!["1".to_owned(), "ingest".to_owned(), "x".repeat(80)],
            vec!["12".to_owned(), "sync".to_owned(), "ok".to_owned()],
        ];
        let text = table(&["ID", "KIND", "ERROR"], &rows, 40);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "ID  KIND    ERROR");
        assert_eq!(lines[2], "12  sync    ok");
        assert_eq!(lines[1].chars().count(), 40);
        assert!(lines[1].ends_with('…'));
    }

    #[test]
    fn encoding_keeps_unreserved_characters() {
        assert_eq!(encode("demo-cart_1.x~"), "demo-cart_1.x~");
        assert_eq!(encode("a b/c?d&é"), "a%20b%2Fc%3Fd%26%C3%A9");
    }

    #[test]
    fn lanes_show_their_session() {
        assert_eq!(session_of_lane(Some("session:abc")), "abc");
        assert_eq!(session_of_lane(Some("other")), "other");
        assert_eq!(session_of_lane(None), "-");
    }
}
