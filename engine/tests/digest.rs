//! `Model::from_bytes_with_digest`: the same model as `from_bytes` when the digest is the file's,
//! the hash-mismatch error (naming the supplied digest) when it is not, and every other rule
//! still checked.

use lightembed::{LoadError, Model};
use sha2::{Digest, Sha256};

fn shipped() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../public/models/lightembed-en-static.bin"
    ))
    .unwrap()
}

fn digest(b: &[u8]) -> [u8; 32] {
    Sha256::digest(&b[..b.len() - 32]).into()
}

#[test]
fn a_right_digest_loads_the_same_model() {
    let b = shipped();
    let a = Model::from_bytes(&b).unwrap();
    let m = Model::from_bytes_with_digest(&b, digest(&b)).unwrap();
    assert_eq!(a.sha256(), m.sha256());
    assert_eq!(
        a.embed("ownership and borrowing", 128).unwrap(),
        m.embed("ownership and borrowing", 128).unwrap()
    );
}

#[test]
fn a_wrong_digest_is_the_hash_mismatch() {
    let b = shipped();
    let wrong = [7u8; 32];
    match Model::from_bytes_with_digest(&b, wrong) {
        Err(LoadError::HashMismatch { computed, stored }) => {
            assert_eq!(computed, wrong);
            assert_eq!(stored, digest(&b));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn other_rules_are_still_checked() {
    // A bad header field behind a matching digest (trailer redone): refused by its own rule,
    // with from_bytes's message.
    let mut b = shipped();
    b[14] = 2; // n_layers 2 in a static file: the sections no longer match the header
    b[15] = 3; // n_heads 3: 256 % 3 != 0
    let n = b.len() - 32;
    let d = digest(&b);
    b[n..].copy_from_slice(&d);
    let err = Model::from_bytes_with_digest(&b, d).unwrap_err();
    assert!(!matches!(err, LoadError::HashMismatch { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        Model::from_bytes(&b).unwrap_err().to_string()
    );
    // Too short: refused before the digest matters.
    assert!(matches!(
        Model::from_bytes_with_digest(&b[..10], [0; 32]),
        Err(LoadError::FileTooShort { .. })
    ));
}
