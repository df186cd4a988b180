//! The integration tests, as one binary: the crate, wgpu and the test harness are linked once,
//! not once per file. Each file is a module, named for what it tests; `common` holds what they
//! share (the backends, reference maths, the child-process runner).
#![expect(
    clippy::expect_used,
    reason = "test code, helpers included: a test that cannot set up what it tests has nothing \
              to report but why"
)]

#[macro_use]
mod common;

mod accumulation;
mod attention;
mod checkpointing;
mod cli;
mod cnn;
mod convolution;
mod data_input;
mod datasets;
mod generation;
mod gpt;
mod gpu_kernels;
mod gradients;
mod hostile;
mod hostile_files;
mod journey;
mod lessons;
mod memory;
mod norm;
mod precision;
mod selftest;
mod sweep;
mod training;
mod weights;
mod window;
