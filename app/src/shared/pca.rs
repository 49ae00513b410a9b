//! Two-component PCA for the playground's scatter plot.
//!
//! Power iteration with deflation on the covariance `XᵀX / n` of the centred rows, applied
//! implicitly (`v ← Xᵀ(X v)`), so the cost is `O(iterations · n · d)` and no `d × d` matrix is
//! formed. Deterministic: the start vectors are fixed.

/// A fitted projection: the mean and two unit principal axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Pca {
    /// Column means (length `d`).
    pub mean: Vec<f32>,
    /// First and second principal axes (each length `d`, unit norm, orthogonal).
    pub axes: [Vec<f32>; 2],
    /// Variance along each axis.
    pub variance: [f32; 2],
    /// Total variance (trace of the covariance).
    pub total_variance: f32,
}

const ITERATIONS: usize = 60;

impl Pca {
    /// Fits the two leading components of `rows` (`n` rows of length `d`, row-major in `data`).
    /// Returns `None` when there are fewer than 2 rows or `d == 0`.
    pub fn fit(data: &[f32], d: usize) -> Option<Pca> {
        if d == 0 || data.len() < 2 * d || !data.len().is_multiple_of(d) {
            return None;
        }
        let n = data.len() / d;
        let mut mean = vec![0f64; d];
        for row in data.chunks_exact(d) {
            for (m, &x) in mean.iter_mut().zip(row) {
                *m += x as f64;
            }
        }
        for m in &mut mean {
            *m /= n as f64;
        }
        let centred: Vec<f64> = data
            .chunks_exact(d)
            .flat_map(|row| row.iter().zip(&mean).map(|(&x, &m)| x as f64 - m))
            .collect();
        let total: f64 = centred.iter().map(|x| x * x).sum::<f64>() / n as f64;

        let mut axes: Vec<Vec<f64>> = Vec::with_capacity(2);
        let mut variance = [0f32; 2];
        for (k, var) in variance.iter_mut().enumerate() {
            // Fixed, non-degenerate start vector.
            let mut v: Vec<f64> = (0..d)
                .map(|i| 1.0 + ((i * 7 + k * 13) % 11) as f64 / 11.0)
                .collect();
            normalise(&mut v);
            let mut lambda = 0.0;
            for _ in 0..ITERATIONS {
                let mut w = cov_times(&centred, n, d, &v);
                for a in &axes {
                    // Deflate: remove the found component.
                    let p = dot(&w, a);
                    for (wi, ai) in w.iter_mut().zip(a) {
                        *wi -= p * ai;
                    }
                }
                lambda = dot(&w, &v);
                if normalise(&mut w) == 0.0 {
                    break;
                }
                v = w;
            }
            *var = lambda.max(0.0) as f32;
            axes.push(v);
        }
        let to32 = |v: &Vec<f64>| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        Some(Pca {
            mean: mean.iter().map(|&m| m as f32).collect(),
            axes: [to32(&axes[0]), to32(&axes[1])],
            variance,
            total_variance: total as f32,
        })
    }

    /// Coordinates of `row` (length `d`) on the two axes.
    pub fn project(&self, row: &[f32]) -> (f32, f32) {
        let mut xy = [0f32; 2];
        for (k, axis) in self.axes.iter().enumerate() {
            xy[k] = row
                .iter()
                .zip(&self.mean)
                .zip(axis)
                .map(|((&x, &m), &a)| (x - m) * a)
                .sum();
        }
        (xy[0], xy[1])
    }

    /// Fraction of the total variance the two axes explain.
    pub fn explained(&self) -> f32 {
        if self.total_variance > 0.0 {
            ((self.variance[0] + self.variance[1]) / self.total_variance).min(1.0)
        } else {
            0.0
        }
    }
}

fn cov_times(x: &[f64], n: usize, d: usize, v: &[f64]) -> Vec<f64> {
    let mut out = vec![0f64; d];
    for row in x.chunks_exact(d) {
        let s = dot(row, v);
        for (o, &r) in out.iter_mut().zip(row) {
            *o += s * r;
        }
    }
    for o in &mut out {
        *o /= n as f64;
    }
    out
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn normalise(v: &mut [f64]) -> f64 {
    let n = dot(v, v).sqrt();
    if n > 0.0 {
        for x in v.iter_mut() {
            *x /= n;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_dominant_directions() {
        // Points spread along (1,1,0) strongly and (1,-1,0) weakly.
        let mut data = Vec::new();
        for i in 0..50 {
            let t = i as f32 - 25.0;
            let s = if i % 2 == 0 { 1.0 } else { -1.0 };
            data.extend_from_slice(&[t + s, t - s, 0.0]);
        }
        let p = Pca::fit(&data, 3).unwrap();
        let a0 = &p.axes[0];
        // (The ±1 offsets correlate slightly with t, so the axis is only close to the diagonal.)
        assert!(
            (a0[0].abs() - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-2,
            "{a0:?}"
        );
        assert!((a0[0] - a0[1]).abs() < 1e-2);
        let a1 = &p.axes[1];
        assert!((a1[0] + a1[1]).abs() < 1e-2, "{a1:?}");
        let ortho: f32 = a0.iter().zip(a1).map(|(x, y)| x * y).sum();
        assert!(ortho.abs() < 1e-4);
        assert!(p.explained() > 0.999);
        let (x, _) = p.project(&[10.0, 10.0, 0.0]);
        assert!(x.abs() > 10.0);
    }

    #[test]
    fn too_few_rows_is_none() {
        assert!(Pca::fit(&[1.0, 2.0], 2).is_none());
        assert!(Pca::fit(&[], 0).is_none());
    }
}
