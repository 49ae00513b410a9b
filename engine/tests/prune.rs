//! `ModelBuilder::prune` (seed §9 site model): a pruned copy of the shipped static model is a
//! valid file, smaller, and embeds text made of kept tokens exactly like the original at the kept
//! dims; other words still tokenise (character pieces are kept) without [UNK].

use lightembed::{Model, ModelBuilder};

fn shipped() -> (Vec<u8>, Model) {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../public/models/lightembed-en-static.bin"
    ))
    .unwrap();
    let m = Model::from_bytes(&bytes).unwrap();
    (bytes, m)
}

#[test]
fn pruned_model_embeds_kept_text_like_the_original() {
    let (bytes, model) = shipped();
    let site = "Ownership rules: each value in Rust has an owner. Borrowing lends a reference.";
    let used: std::collections::HashSet<u32> = model.tokenize(site).into_iter().collect();
    let mut b = ModelBuilder::from_model(&model);
    b.prune(
        |id, t| {
            used.contains(&id)
                || t.chars().count() == 1
                || (t.starts_with("##") && t.chars().count() == 3)
        },
        Some(128),
    )
    .unwrap();
    let pruned_bytes = b.build().unwrap();
    let pruned = Model::from_bytes(&pruned_bytes).unwrap();
    assert!(
        pruned_bytes.len() * 5 < bytes.len(),
        "{} vs {} bytes",
        pruned_bytes.len(),
        bytes.len()
    );
    assert_eq!(pruned.header().output_dim, 128);
    assert_eq!(pruned.header().valid_dims(), [32, 64, 128]);
    // Same tokens (by string), same vector at 128 dims.
    let strings = |m: &Model, text: &str| -> Vec<String> {
        m.tokenize(text)
            .iter()
            .map(|&i| m.tokenizer().id_to_token(i).unwrap().to_string())
            .collect()
    };
    assert_eq!(strings(&pruned, site), strings(&model, site));
    let a = model.embed(site, 128).unwrap();
    let p = pruned.embed(site, 128).unwrap();
    let diff = a
        .iter()
        .zip(&p)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(diff < 1e-6, "max |Δ| {diff}");
    // A word that is not in the kept text is cut into kept pieces, never [UNK].
    let unk = pruned
        .tokenizer()
        .id_to_token(pruned.tokenize("xylophone")[1])
        .unwrap()
        .to_string();
    assert_ne!(unk, "[UNK]");
    assert!(strings(&pruned, "xylophone").len() > strings(&model, "xylophone").len());
    // dims must be one the model serves.
    let mut b = ModelBuilder::from_model(&model);
    let err = b.prune(|_, _| true, Some(100)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot build model: dims 100 is not one of the model's valid dims [32, 64, 128, 256, 384]"
    );
}
