//! Sweeps: one setting varied over a list of values, each value measured on a device as `bench`
//! measures it (a warm-up, then repeated timed runs), repeated until the runs agree (the
//! interquartile range under a tenth of the median) or a time cap is reached, in which case the
//! point is marked noisy. Then the crossover: the value where the GPU's samples/s first reach
//! the CPU's, interpolated on log scales between the two measured points around it.
//!
//! The caller runs the devices one at a time, so that neither shares its cores with the other:
//! a GPU slowed by the CPU's work would be shown as "the GPU".

mod export;
mod measure;
mod run;
mod setting;
mod stats;

pub use export::to_csv;
pub use measure::{Point, PointPlan, measure_point, measure_point_until};
pub use run::{Note, Report, Results, run};
pub use setting::{MAX_VALUES, Parameter, Sweep, Value, with_value};
pub use stats::{Crossover, Shortfall, crossover, crossover_of_rows, iqr_of_sorted};
