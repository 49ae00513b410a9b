//! SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", 2014): the
//! project's one deterministic PRNG. 64 bits of state, no platform entropy, the same sequence on
//! every target (native, wasm32, and `reference/fingerprint.py`'s Python copy). Used for the
//! customer fingerprint rotation (`lightembed fingerprint`), HNSW level draws
//! (`lightembed_index`) and seeded test data.

/// Increment added to the state before each output (the 64-bit golden ratio).
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
/// First finaliser multiplier.
pub const MIX1: u64 = 0xBF58_476D_1CE4_E5B9;
/// Second finaliser multiplier.
pub const MIX2: u64 = 0x94D0_49BB_1331_11EB;

/// SplitMix64: `state += GAMMA; z = state; z = (z ^ z>>30)·MIX1; z = (z ^ z>>27)·MIX2;
/// return z ^ z>>31` (all wrapping). The state is public so that a generator can be stored and
/// restored exactly (the index file keeps its HNSW generator's state).
///
/// ```
/// use lightembed::rng::SplitMix64;
/// let mut r = SplitMix64::new(0);
/// assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF); // the published first output for seed 0
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    /// The current state; the next output is computed from `state + GAMMA`.
    pub state: u64,
}

impl SplitMix64 {
    /// A generator whose first output is computed from `state + GAMMA`.
    pub fn new(state: u64) -> Self {
        SplitMix64 { state }
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(MIX1);
        z = (z ^ (z >> 27)).wrapping_mul(MIX2);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` by modulo (a bias below 2⁻³² for the `n` this project uses; test data
    /// and sampling only). `n` must be > 0.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `[0, 1)` with 24 bits of precision (every value is an exact `f32`).
    pub fn uniform_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}
