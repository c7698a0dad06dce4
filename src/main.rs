//! The `vl` binary: parses the command line and calls into the library.

fn main() {
    println!("vl");
}
