//! A convolution's forward pass, parameter gradients and input gradient on the CPU, straight
//! from the images (the kernels are in `direct.rs`, which says why): no patch matrix is made or
//! kept.

use web_time::Instant;

use super::CpuBackend;
use super::direct::{self, Vectors};
use super::tuning::{Choice, ConvKey, ConvPass, Tuning};
use super::values::{slots, store, view, view_mut};
use crate::backend::checks;
use crate::backend::error::BackendError;
use crate::backend::params::{Activation, ConvShape};
use crate::backend::tensor::Tensor;
use crate::device::Device;

impl CpuBackend {
    /// `out = act(x ⊛ w + b)`, image by image over the pool.
    pub(super) fn conv_forward_op(
        &mut self,
        x: &Tensor,
        s: ConvShape,
        (w, b, act): (&Tensor, &Tensor, Activation),
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::conv_forward(Device::Cpu, x, s, (w, b), out)?;
        let mut work = self.take_working(&[x, w, b, out])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let (x_f, w_f, b_f) = (view(x, s0)?, view(w, s1)?, view(b, s2)?);
        let out_f = view_mut(out, &mut *s3, false)?;
        let key = ConvKey {
            shape: s,
            pass: ConvPass::Forward,
        };
        let (narrow, trial) = self.narrow(key);
        let vectors = Vectors::new(s.channels_out, narrow);
        let mut padded = std::mem::take(&mut self.padded_weights);
        direct::pad_weights(w_f, b_f, vectors.cp, &mut padded);
        let relu = act == Activation::Relu;
        let start = trial.then(Instant::now);
        self.rows(out_f, s.pixels() * s.channels_out, |(i, out)| {
            let image = &x_f[i * s.image_in()..(i + 1) * s.image_in()];
            direct::conv_image(image, &padded, s, relu, vectors, out);
            if !relu && act != Activation::Identity {
                for v in out {
                    *v = act.apply(*v);
                }
            }
        });
        self.record_narrow(key, narrow, start);
        self.padded_weights = padded;
        store(out, s3, &mut self.census);
        self.working = work;
        Ok(())
    }

    /// `dw = Σ patches(x)ᵀ · dz` from the images, then `db = Σ dz`, timed as two kernels as
    /// the dense layers' are. Each thread sums a fixed run of the images into its own padded
    /// partial gradient; the partials are then added in thread order, so the result does not
    /// depend on scheduling.
    pub(super) fn conv_backward_params_op(
        &mut self,
        x: &Tensor,
        s: ConvShape,
        dz: &Tensor,
        (dw, db): (&mut Tensor, &mut Tensor),
    ) -> Result<(), BackendError> {
        let batch = checks::conv_backward_params(Device::Cpu, x, s, dz, (dw, db))?;
        let mut work = self.take_working(&[x, dz, dw, db])?;
        let [s0, s1, s2, s3] = slots(&mut work);
        let (x_f, dz_f) = (view(x, s0)?, view(dz, s1)?);
        let clock = self.op_start();
        let key = ConvKey {
            shape: s,
            pass: ConvPass::WeightGrad,
        };
        let (narrow, trial) = self.narrow(key);
        let start = trial.then(Instant::now);
        let vectors = Vectors::new(s.channels_out, narrow);
        let (cp, size) = (vectors.cp, s.patch() * vectors.cp);
        let parts = if self.parallel(dz_f.len()) {
            self.threads.clamp(1, batch.max(1))
        } else {
            1
        };
        let per_part = batch.div_ceil(parts);
        let mut partials = std::mem::take(&mut self.partials);
        partials.clear();
        partials.resize(parts * size, 0.0);
        let (image_in, image_out) = (s.image_in(), s.pixels() * s.channels_out);
        let part = |(p, sums): (usize, &mut [f32])| {
            for i in p * per_part..((p + 1) * per_part).min(batch) {
                let image = &x_f[i * image_in..(i + 1) * image_in];
                let dz = &dz_f[i * image_out..(i + 1) * image_out];
                direct::weight_grad_image(image, dz, s, vectors, sums);
            }
        };
        self.chunks(&mut partials, size, parts > 1, part);
        self.record_narrow(key, narrow, start);
        let dw_f = view_mut(dw, &mut *s2, false)?;
        for (row, dw_row) in dw_f.chunks_exact_mut(s.channels_out).enumerate() {
            for (o, v) in dw_row.iter_mut().enumerate() {
                *v = (0..parts).map(|p| partials[p * size + row * cp + o]).sum();
            }
        }
        store(dw, s2, &mut self.census);
        self.op_end("weight_grad", clock);
        // The bias gradient: each thread sums the same run of images' rows as above into its
        // own partial sums, added in thread order (on one thread it had taken a quarter of the
        // first block's parameter gradients at batch 256 on two threads, measured).
        let clock = self.op_start();
        let cols = s.channels_out;
        let rows = per_part * s.pixels() * cols;
        partials.clear();
        partials.resize(parts * cols, 0.0);
        let sum = |(p, sums): (usize, &mut [f32])| {
            let start = (p * rows).min(dz_f.len());
            let end = ((p + 1) * rows).min(dz_f.len());
            super::ops::column_sums(&dz_f[start..end], sums);
        };
        self.chunks(&mut partials, cols, parts > 1, sum);
        let db_f = view_mut(db, &mut *s3, false)?;
        for (j, v) in db_f.iter_mut().enumerate() {
            *v = (0..parts).map(|p| partials[p * cols + j]).sum();
        }
        self.partials = partials;
        store(db, s3, &mut self.census);
        self.op_end("bias_grad", clock);
        self.working = work;
        Ok(())
    }

    /// `dx = dz ⊛ᵀ w`: the forward kernel run on the output's gradient with the transposed
    /// weights (see `direct::pad_transposed_weights`), image by image over the pool.
    pub(super) fn conv_backward_input_op(
        &mut self,
        dz: &Tensor,
        w: &Tensor,
        s: ConvShape,
        dx: &mut Tensor,
    ) -> Result<(), BackendError> {
        checks::conv_backward_input(Device::Cpu, dz, w, s, dx)?;
        let mut work = self.take_working(&[dz, w, dx])?;
        let [s0, s1, s2, _] = slots(&mut work);
        let (dz_f, w_f) = (view(dz, s0)?, view(w, s1)?);
        let dx_f = view_mut(dx, &mut *s2, false)?;
        // The transpose maps the output's channels to the input's.
        let t = ConvShape {
            channels_in: s.channels_out,
            channels_out: s.channels_in,
            ..s
        };
        let key = ConvKey {
            shape: s,
            pass: ConvPass::InputGrad,
        };
        let (narrow, trial) = self.narrow(key);
        let vectors = Vectors::new(t.channels_out, narrow);
        let mut padded = std::mem::take(&mut self.padded_weights);
        direct::pad_transposed_weights(w_f, s, vectors.cp, &mut padded);
        let start = trial.then(Instant::now);
        self.rows(dx_f, s.image_in(), |(i, dx)| {
            let dz = &dz_f[i * t.image_in()..(i + 1) * t.image_in()];
            direct::conv_image(dz, &padded, t, false, vectors, dx);
        });
        self.record_narrow(key, narrow, start);
        self.padded_weights = padded;
        store(dx, s2, &mut self.census);
        self.working = work;
        Ok(())
    }
}

impl CpuBackend {
    /// Whether a pass runs on narrow vectors (see `direct::arch`), and whether this call is a
    /// trial to be timed.
    ///
    /// Where 8 channels or fewer fill half an AVX-512 vector, AVX2's vectors of 8 waste no
    /// lanes but have half the registers (no two-row tiles). Which wins depends on the CPU:
    /// measured at batch 256 on MNIST, on an AMD Zen 4 (whose AVX-512 runs at AVX2's rate per
    /// lane) the 1 → 8 block's forward pass went from 29% to 38% of one core's FMA peak and
    /// the 8 → 16 block's input gradient from 30% to 57%, while the 1 → 8 block's weight
    /// gradient went from 19% to 16%. So each pass is timed both ways in its first steps, as
    /// products are (`tuning.rs`), and keeps the faster. Both compute every output with the
    /// same multiply-adds in the same order, so the choice never changes a result.
    fn narrow(&self, key: ConvKey) -> (bool, bool) {
        if !direct::narrow_differs(key.vector_channels()) {
            return (false, false);
        }
        self.conv_tuning
            .get(&key)
            .map_or(Choice::Try(false), Tuning::next)
            .way()
    }

    /// Notes the time of a trial started at `start` (none when the call was not one).
    fn record_narrow(&mut self, key: ConvKey, narrow: bool, start: Option<Instant>) {
        if let Some(start) = start {
            let ns = start.elapsed().as_nanos() as u64;
            self.conv_tuning.entry(key).or_default().record(narrow, ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Split;
    use super::*;
    use crate::backend::traits::{ComputeOps, DeviceMemory};

    /// The parameter gradients split over threads (images in runs of unequal length) equal
    /// one thread's, and the bias gradient is the sum of every pixel's output gradient. The
    /// values are multiples of 1/16 whose sums are exact in f32, so any order gives the same.
    #[test]
    fn parameter_gradients_over_threads_sum_every_image() {
        let s = ConvShape {
            height: 6,
            width: 5,
            channels_in: 2,
            channels_out: 3,
            kernel: 3,
        };
        let batch = 5;
        let grads = |threads: usize| {
            let mut cpu = CpuBackend::with_split(threads, Split::Always).expect("pool");
            let x = cpu.filled("x", batch, s.image_in()).expect("x");
            let dz = cpu
                .filled("dz", batch * s.pixels(), s.channels_out)
                .expect("dz");
            let mut dw = cpu.zeros("dw", s.patch(), s.channels_out).expect("dw");
            let mut db = cpu.zeros("db", 1, s.channels_out).expect("db");
            cpu.conv_backward_params(&x, s, &dz, (&mut dw, &mut db))
                .expect("gradients");
            let dz = cpu.read(&dz).expect("read");
            let (dw, db) = (cpu.read(&dw).expect("dw"), cpu.read(&db).expect("db"));
            (dz, dw, db)
        };
        let (dz, dw_one, db_one) = grads(1);
        for threads in [2, 3] {
            let (_, dw, db) = grads(threads);
            assert_eq!(dw, dw_one, "{threads} threads");
            assert_eq!(db, db_one, "{threads} threads");
        }
        for (j, got) in db_one.iter().enumerate() {
            let want: f64 = dz.iter().skip(j).step_by(3).map(|v| f64::from(*v)).sum();
            assert_eq!(f64::from(*got), want, "bias {j}");
        }
    }
}
