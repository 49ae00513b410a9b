//! Fuzz `Model::from_bytes` over arbitrary bytes: it must return `Ok` or `Err`, never panic,
//! never allocate unbounded memory. When a mutated file happens to load, embedding must work too.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(model) = lightembed::Model::from_bytes(data) {
        let dims = *model.valid_dims().last().expect("a loaded model offers output_dim");
        let v = model.embed("fuzzing the engine, ünïcödé 漢字", dims).expect("valid dims embed");
        assert_eq!(v.len(), dims);
    }
});
