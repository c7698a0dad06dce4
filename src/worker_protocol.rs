//! What the worker and its clients (the hooks, the CLI) both speak, kept below both so that
//! neither depends on the other: the proof a listener gives that it is the user's worker, where
//! an HTTP/1.1 head ends in bytes read in pieces, and the sentence that says who holds the
//! worker's port when it is not the worker. Pure but for [`port_held`], which asks the OS.
//!
//! # The proof
//! A port on 127.0.0.1 is first come, first served: after a reboot any local process may take
//! the worker's port before the worker does. So before a hook or the CLI sends the key, the
//! admin token or an event, it sends a fresh random nonce (`GET /api/proof?nonce=<hex>`) and
//! the worker answers `hex(HMAC-SHA256(key, CONTEXT || nonce || port))` under the user key
//! ([`prove`]); the client computes the same and compares in constant time ([`verify`]). The
//! route itself lives in `http::routes::proof`, the client's side in `worker_client`.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// What the MAC is about, so it can never be mistaken for another use of the key.
pub const CONTEXT: &[u8] = b"vibelearn worker proof v1\0";

/// Nonce bytes a client sends (hex on the wire); the route takes 16 to 64.
pub const NONCE_BYTES: usize = 32;

fn mac_of(key: &str, nonce: &[u8], port: u16) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(CONTEXT);
    mac.update(nonce);
    mac.update(&port.to_be_bytes());
    mac
}

/// The proof a worker holding `key` and listening on `port` gives for `nonce`, as hex.
pub fn prove(key: &str, nonce: &[u8], port: u16) -> String {
    hex::encode(mac_of(key, nonce, port).finalize().into_bytes())
}

/// Whether `proof` (hex) is what the user's worker on `port` answers to `nonce`, compared in
/// constant time.
pub fn verify(key: &str, nonce: &[u8], port: u16, proof: &str) -> bool {
    match hex::decode(proof) {
        Ok(tag) => mac_of(key, nonce, port).verify_slice(&tag).is_ok(),
        Err(_) => false,
    }
}

/// Where the head that starts at `buf[0]` ends, looking only at bytes from `from` on (minus the
/// three a terminator can straddle), so a caller that reads in pieces scans each byte once.
/// The head ends at the first empty line: `\r\n\r\n` or `\n\n` (a bare `\n` is a line end too,
/// RFC 9112 §2.2). Header lines cannot contain a newline, so the first one is the end.
pub fn find_end(buf: &[u8], from: usize) -> Option<usize> {
    let start = from.saturating_sub(3);
    let mut i = start;
    while let Some(offset) = buf.get(i..)?.iter().position(|b| *b == b'\n') {
        let at = i + offset;
        match buf.get(at + 1) {
            Some(b'\n') => return Some(at + 2),
            Some(b'\r') if buf.get(at + 2) == Some(&b'\n') => return Some(at + 3),
            _ => i = at + 1,
        }
    }
    None
}

/// The port of `host:port` (0 when there is none).
pub fn port_of(addr: &str) -> u16 {
    addr.rsplit(':').next().and_then(|p| p.parse().ok()).unwrap_or(0)
}

/// What to tell a person when the worker's port at `addr` is held by a process that is not
/// the user's worker: who holds it (pid and program, where the OS tells), and how to choose
/// another port.
pub fn port_held(addr: &str) -> String {
    let port = port_of(addr);
    let holder = match crate::platform::port_holder(port) {
        Some((pid, Some(name))) => format!(" (pid {pid}, {name})"),
        Some((pid, None)) => format!(" (pid {pid})"),
        None => String::new(),
    };
    format!(
        "port {port} is held by another process{holder}, not your VibeLearn worker; choose another port: set \
         \"VIBELEARN_WORKER_PORT\" to a free one (e.g. {}) in settings.json in the data dir or in the \
         environment, then run `vl worker start`",
        port.wrapping_add(1)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_only_for_its_key_nonce_and_port() {
        let proof = prove("key", b"0123456789abcdef", 37778);
        assert!(verify("key", b"0123456789abcdef", 37778, &proof));
        assert!(!verify("other", b"0123456789abcdef", 37778, &proof), "another key");
        assert!(!verify("key", b"0123456789abcdeF", 37778, &proof), "another nonce");
        assert!(!verify("key", b"0123456789abcdef", 37779, &proof), "relayed from another port");
        assert!(!verify("key", b"0123456789abcdef", 37778, "zz"), "not hex");
        assert!(!verify("key", b"0123456789abcdef", 37778, &proof[..62]), "cut short");
    }

    #[test]
    fn the_end_of_a_head_is_found_once_across_pieces() {
        let raw = b"GET / HTTP/1.1\r\nHost: h\r\n\r\nBODY";
        assert_eq!(find_end(raw, 0), Some(raw.len() - 4));
        // Fed in pieces, the terminator straddling two reads is still found.
        for split in 1..raw.len() {
            let first = find_end(&raw[..split], 0);
            let end = first.or_else(|| find_end(raw, split));
            assert_eq!(end, Some(raw.len() - 4), "split at {split}");
        }
        assert_eq!(find_end(b"GET / HTTP/1.1\nHost: h\n\nrest", 0), Some(24));
        assert_eq!(find_end(b"GET / HTTP/1.1\r\nHost: h\r\n", 0), None);
    }
}
