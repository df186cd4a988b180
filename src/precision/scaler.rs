//! Dynamic loss scaling, as PyTorch's `GradScaler` does it.

use serde::Serialize;

/// Dynamic loss scaling with the semantics of PyTorch's `torch.cuda.amp.GradScaler`: the loss
/// gradient is multiplied by `scale` so that small gradients survive FP16; before the update the
/// gradients are divided by it again and checked; a non-finite one skips the step and halves the
/// scale, and 2000 good steps in a row double it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GradScaler {
    /// The current scale.
    pub scale: f32,
    /// Good steps since the scale last changed.
    pub growth_tracker: u32,
    /// Steps skipped so far because a gradient was not finite.
    pub skipped: u64,
    /// `(step, scale)` at each change of scale, for the loss-scale history.
    pub history: Vec<(u64, f32)>,
}

impl GradScaler {
    /// PyTorch's initial scale.
    pub const INITIAL_SCALE: f32 = 65536.0;
    /// Factor after a run of good steps.
    pub const GROWTH_FACTOR: f32 = 2.0;
    /// Factor after a step with a non-finite gradient.
    pub const BACKOFF_FACTOR: f32 = 0.5;
    /// Good steps before the scale grows.
    pub const GROWTH_INTERVAL: u32 = 2000;

    /// Reports whether step `step`'s unscaled gradients were all finite; returns whether the
    /// optimizer may apply them (`false`: skip the step), and updates the scale.
    pub fn update(&mut self, step: u64, all_finite: bool) -> bool {
        if all_finite {
            self.growth_tracker += 1;
            if self.growth_tracker == Self::GROWTH_INTERVAL {
                self.scale *= Self::GROWTH_FACTOR;
                self.growth_tracker = 0;
                self.history.push((step, self.scale));
            }
        } else {
            self.scale *= Self::BACKOFF_FACTOR;
            self.growth_tracker = 0;
            self.skipped += 1;
            self.history.push((step, self.scale));
        }
        all_finite
    }
}

impl Default for GradScaler {
    fn default() -> Self {
        Self {
            scale: Self::INITIAL_SCALE,
            growth_tracker: 0,
            skipped: 0,
            history: vec![(0, Self::INITIAL_SCALE)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::GradScaler;

    #[test]
    fn the_scaler_backs_off_on_overflow_and_grows_after_2000_good_steps() {
        let mut s = GradScaler::default();
        assert_eq!(s.scale, 65536.0);
        // An overflow: the step is skipped and the scale halves.
        assert!(!s.update(1, false));
        assert_eq!((s.scale, s.skipped, s.growth_tracker), (32768.0, 1, 0));
        // 1999 good steps change nothing; the 2000th doubles the scale.
        for step in 2..=2000 {
            assert!(s.update(step, true));
        }
        assert_eq!(s.scale, 32768.0);
        assert!(s.update(2001, true));
        assert_eq!((s.scale, s.growth_tracker), (65536.0, 0));
        assert_eq!(s.history, [(0, 65536.0), (1, 32768.0), (2001, 65536.0)]);
    }
}
