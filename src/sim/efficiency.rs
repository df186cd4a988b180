//! How much of a device's peak an op reaches, by its size: the curves the cost model uses and
//! a calibration fits.

use serde::{Deserialize, Serialize};

use crate::nn::OptimizerKind;

/// Which of a dense layer's three products.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Product {
    /// `x · W`, with the bias and activation fused.
    Forward,
    /// `xᵀ · dz`, with the bias's gradient.
    WeightGradient,
    /// `dz · Wᵀ`, with the activation's derivative.
    InputGradient,
}

impl Product {
    /// All three, in the order a step runs a layer's.
    pub const ALL: [Product; 3] = [
        Product::Forward,
        Product::WeightGradient,
        Product::InputGradient,
    ];
}

/// Efficiency against op size: `(size, share of the peak)` points, interpolated linearly in
/// log10 of the size and held flat beyond the ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve(pub Vec<(f64, f64)>);

impl Curve {
    /// The share of the peak an op of `size` reaches.
    pub fn at(&self, size: f64) -> f64 {
        let points = &self.0;
        let Some(&(first_size, first)) = points.first() else {
            return 1.0;
        };
        if size <= first_size {
            return first;
        }
        for w in points.windows(2) {
            let ((s0, e0), (s1, e1)) = (w[0], w[1]);
            if size <= s1 {
                let t = (size.log10() - s0.log10()) / (s1.log10() - s0.log10());
                return e0 + t * (e1 - e0);
            }
        }
        points.last().map_or(1.0, |p| p.1)
    }
}

/// The efficiencies a prediction uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Efficiency {
    /// Share of the arithmetic peak a matrix product reaches, by its FLOPs.
    pub compute: Curve,
    /// Share of the memory bandwidth an op reaches, by the bytes it moves.
    pub memory: Curve,
    /// Where fitted, each of a layer's three products with its own curve and the sizes at
    /// which its short dimensions halve its rate; `compute`, whatever the shape, otherwise.
    #[serde(default)]
    pub products: Option<Products>,
    /// Share of the memory bandwidth each update rule reaches, by the bytes it moves, where
    /// fitted; `memory` otherwise. Adam's square root and division cost a CPU more than SGD's
    /// multiply-add, which the bytes alone do not say.
    #[serde(default)]
    pub updates: Option<Updates>,
}

/// One product kernel's measured efficiency by shape: a table of probed shapes, read between
/// them by a locally weighted fit in the logarithms of the three dimensions. A product's
/// efficiency on a CPU is not a function of its FLOPs alone: with an inner dimension of 2 it
/// spends its time writing outputs; with one row it reads each weight once for two FLOPs; a
/// transposed operand is copied into a cache-friendly layout first. Probing shapes and reading
/// between them, as Calculon's GEMM tables do, keeps all of that without a formula for each.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductFit {
    /// `([m, n, k], share of the peak)` for each probed shape.
    pub table: Vec<([f64; 3], f64)>,
}

/// The width, in decades, of the neighbourhood a shape is read from.
const NEIGHBOURHOOD: f64 = 0.5;

impl ProductFit {
    /// The share of the peak a product of shape `dims` reaches: a locally weighted linear fit
    /// of log efficiency against the logs of the three dimensions, weighting each probe by a
    /// Gaussian of its distance in decades. Linear in the logs, it keeps the slopes the probes
    /// show (a one-row product's efficiency grows with its rows) where a plain average of
    /// neighbours would flatten them.
    pub fn at(&self, dims: [f64; 3]) -> f64 {
        let q = dims.map(|d| d.max(1.0).log10());
        // Normal equations of weighted least squares with a small ridge on the slopes, for
        // `ln e = c + Σ s_j (log d_j - log q_j)`: the intercept is the answer.
        let mut a = [[0.0f64; 4]; 4];
        let mut rhs = [0.0f64; 4];
        for (probed, efficiency) in &self.table {
            let x: [f64; 3] = std::array::from_fn(|j| probed[j].max(1.0).log10() - q[j]);
            let d2: f64 = x.iter().map(|v| v * v).sum();
            let w = (-d2 / (2.0 * NEIGHBOURHOOD * NEIGHBOURHOOD)).exp();
            let row = [1.0, x[0], x[1], x[2]];
            for i in 0..4 {
                for j in 0..4 {
                    a[i][j] += w * row[i] * row[j];
                }
                rhs[i] += w * row[i] * efficiency.ln();
            }
        }
        let total = a[0][0];
        if total <= 0.0 {
            return 1.0;
        }
        for (i, row) in a.iter_mut().enumerate().skip(1) {
            row[i] += 1e-3 * total;
        }
        solve4(a, rhs).map_or(1.0, |c| c[0].exp().clamp(1e-6, 1.0))
    }

    /// Seconds of a product of `flops` and shape `dims` on a device of `peak` FLOP/s.
    pub fn seconds(&self, flops: f64, dims: [f64; 3], peak: f64) -> f64 {
        flops / (peak * self.at(dims))
    }
}

/// The fitted efficiency of each of a dense layer's products.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Products {
    /// `x · W`.
    pub forward: ProductFit,
    /// `xᵀ · dz`.
    pub weight_gradient: ProductFit,
    /// `dz · Wᵀ`.
    pub input_gradient: ProductFit,
}

impl Products {
    /// The fit of `product`.
    pub fn get(&self, product: Product) -> &ProductFit {
        match product {
            Product::Forward => &self.forward,
            Product::WeightGradient => &self.weight_gradient,
            Product::InputGradient => &self.input_gradient,
        }
    }
}

/// The largest share of a peak a fitted efficiency may give. Above 1 happens: a profile's peak
/// is a datasheet figure a probe can beat, and an update whose values stay in the cache runs
/// faster than the memory's bandwidth (calibrating lavapipe fits 1.7). Ten times the peak would
/// predict a step too fast to be true.
pub const MAX_SHARE: f64 = 10.0;

impl Efficiency {
    /// Brings every fitted share within what [`Efficiency::validate`] accepts, so that a
    /// calibration never writes a profile its own reader refuses: on a loaded machine one probe
    /// can time absurdly fast or slow, and its share is then held at the bound (the other points
    /// are untouched).
    pub fn clamp_shares(&mut self) {
        let clamp = |e: &mut f64| {
            *e = if e.is_finite() {
                e.clamp(1e-9, MAX_SHARE)
            } else {
                1e-9
            }
        };
        let curve = |c: &mut Curve| c.0.iter_mut().for_each(|(_, e)| clamp(e));
        curve(&mut self.compute);
        curve(&mut self.memory);
        if let Some(p) = &mut self.products {
            for fit in [
                &mut p.forward,
                &mut p.weight_gradient,
                &mut p.input_gradient,
            ] {
                fit.table.iter_mut().for_each(|(_, e)| clamp(e));
            }
        }
        if let Some(u) = &mut self.updates {
            for fit in [&mut u.sgd, &mut u.momentum, &mut u.adam] {
                curve(&mut fit.curve);
                fit.call_us = fit.call_us.clamp(0.0, 1e6);
            }
        }
    }

    /// Checks every point of every table: sizes positive, shares between 0 and [`MAX_SHARE`],
    /// an update's costs within reason. Names the table and the point when one is not.
    pub fn validate(&self) -> Result<(), String> {
        let share = |table: &str, i: usize, x: f64| {
            if x.is_finite() && x > 0.0 && x <= MAX_SHARE {
                Ok(())
            } else {
                Err(format!(
                    "efficiency.{table}, point {}: share {x} must be above 0 and at most \
                     {MAX_SHARE}",
                    i + 1
                ))
            }
        };
        let size = |table: &str, i: usize, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(format!(
                    "efficiency.{table}, point {}: size {x} must be a positive number",
                    i + 1
                ))
            }
        };
        let curve = |table: &str, c: &Curve| -> Result<(), String> {
            for (i, &(s, e)) in c.0.iter().enumerate() {
                size(table, i, s)?;
                share(table, i, e)?;
            }
            Ok(())
        };
        curve("compute", &self.compute)?;
        curve("memory", &self.memory)?;
        if let Some(p) = &self.products {
            for (name, fit) in [
                ("products.forward", &p.forward),
                ("products.weight_gradient", &p.weight_gradient),
                ("products.input_gradient", &p.input_gradient),
            ] {
                for (i, (dims, e)) in fit.table.iter().enumerate() {
                    for &d in dims {
                        size(name, i, d)?;
                    }
                    share(name, i, *e)?;
                }
            }
        }
        if let Some(u) = &self.updates {
            for (name, fit) in [
                ("updates.sgd", &u.sgd),
                ("updates.momentum", &u.momentum),
                ("updates.adam", &u.adam),
            ] {
                curve(name, &fit.curve)?;
                if !(fit.call_us.is_finite() && (0.0..=1e6).contains(&fit.call_us)) {
                    return Err(format!(
                        "efficiency.{name}: call_us {} must be from 0 to 1000000",
                        fit.call_us
                    ));
                }
                if !(fit.in_step.is_finite() && (0.1..=100.0).contains(&fit.in_step)) {
                    return Err(format!(
                        "efficiency.{name}: in_step {} must be from 0.1 to 100",
                        fit.in_step
                    ));
                }
            }
        }
        Ok(())
    }

    /// Seconds of a product of `flops` on a device of `peak` FLOP/s: from its own fit where the
    /// profile has one, else from `compute`.
    pub fn product_seconds(
        &self,
        flops: f64,
        product: Option<Product>,
        dims: Option<[f64; 3]>,
        peak: f64,
    ) -> f64 {
        match (&self.products, product, dims) {
            (Some(fits), Some(product), Some(dims)) => fits.get(product).seconds(flops, dims, peak),
            _ => flops / (peak * self.compute.at(flops)),
        }
    }
}

/// Solves `a · x = b` by Gaussian elimination with partial pivoting; `None` when singular.
fn solve4(mut a: [[f64; 4]; 4], mut b: [f64; 4]) -> Option<[f64; 4]> {
    for col in 0..4 {
        let pivot = (col..4).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (top, below) = a.split_at_mut(col + 1);
        let pivot_row = top[col];
        for (offset, row) in below.iter_mut().enumerate() {
            let f = row[col] / pivot_row[col];
            for (value, p) in row.iter_mut().zip(pivot_row).skip(col) {
                *value -= f * p;
            }
            b[col + 1 + offset] -= f * b[col];
        }
    }
    let mut x = [0.0; 4];
    for row in (0..4).rev() {
        let tail: f64 = (row + 1..4).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    Some(x)
}

/// One update rule's fitted cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateFit {
    /// Share of the memory bandwidth by the bytes it moves.
    pub curve: Curve,
    /// Microseconds each tensor's update costs inside a training step beyond what the update
    /// alone takes (the step's state and caches), measured against plain SGD's.
    #[serde(default)]
    pub call_us: f64,
    /// How much slower its memory traffic runs inside a step than probed alone: a step's
    /// backward pass has pushed the rule's state (momentum, Adam's moments) out of the caches.
    #[serde(default = "one")]
    pub in_step: f64,
}

fn one() -> f64 {
    1.0
}

/// The fitted cost of each update rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Updates {
    /// Plain SGD.
    pub sgd: UpdateFit,
    /// SGD with momentum.
    pub momentum: UpdateFit,
    /// Adam.
    pub adam: UpdateFit,
}

impl Updates {
    /// The fit of `rule` (`AdamW` runs Adam's kernel: Adam's fit).
    pub fn get(&self, rule: OptimizerKind) -> &UpdateFit {
        match rule {
            OptimizerKind::Sgd => &self.sgd,
            OptimizerKind::Momentum => &self.momentum,
            OptimizerKind::Adam | OptimizerKind::AdamW => &self.adam,
        }
    }

    /// The fit of `rule`, to change.
    pub fn get_mut(&mut self, rule: OptimizerKind) -> &mut UpdateFit {
        match rule {
            OptimizerKind::Sgd => &mut self.sgd,
            OptimizerKind::Momentum => &mut self.momentum,
            OptimizerKind::Adam | OptimizerKind::AdamW => &mut self.adam,
        }
    }
}

impl Default for Efficiency {
    /// Estimates in the shape Calculon's GEMM tables have (a few percent for kernels of
    /// thousands of FLOPs, most of the peak for billions), until a calibration replaces them.
    fn default() -> Self {
        Self {
            compute: Curve(vec![
                (1e4, 0.01),
                (1e6, 0.05),
                (1e8, 0.30),
                (1e9, 0.60),
                (1e11, 0.80),
            ]),
            memory: Curve(vec![(1e3, 0.02), (1e5, 0.20), (1e7, 0.70), (1e9, 0.85)]),
            products: None,
            updates: None,
        }
    }
}
