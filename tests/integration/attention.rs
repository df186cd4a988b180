//! A sequence model's ops on both devices: token and position embedding and causal multi-head
//! attention, their values against f64 references written from the definitions and their
//! gradients against central differences of those references; the residual sums.

use crate::common;

use batchscope::backend::{AttentionShape, Backend, Tensor};
use common::{Rng64, assert_close, central_differences, upload};

const H: f64 = 1e-4;
const ABS: f64 = 2e-4;
const REL: f64 = 2e-3;

fn read(b: &mut dyn Backend, t: &Tensor) -> Vec<f32> {
    b.read(t).expect("read")
}

/// Causal multi-head attention in f64 over `qkv` (`[batch · T, 3d]`): the heads' outputs side
/// by side, and the probabilities `[batch · H · T, T]`.
pub(crate) fn attention64(qkv: &[f64], s: AttentionShape) -> (Vec<f64>, Vec<f64>) {
    let (t_len, d, heads) = (s.len, s.width, s.heads);
    let dh = d / heads;
    let batch = qkv.len() / (t_len * 3 * d);
    let scale = 1.0 / (dh as f64).sqrt();
    let mut out = vec![0.0; batch * t_len * d];
    let mut probs = vec![0.0; batch * heads * t_len * t_len];
    let at =
        |n: usize, pos: usize, part: usize, h: usize| (n * t_len + pos) * 3 * d + part * d + h * dh;
    for n in 0..batch {
        for h in 0..heads {
            for i in 0..t_len {
                let scores: Vec<f64> = (0..=i)
                    .map(|j| {
                        (0..dh)
                            .map(|x| qkv[at(n, i, 0, h) + x] * qkv[at(n, j, 1, h) + x])
                            .sum::<f64>()
                            * scale
                    })
                    .collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let exps: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                let sum: f64 = exps.iter().sum();
                for (j, e) in exps.iter().enumerate() {
                    let p = e / sum;
                    probs[((n * heads + h) * t_len + i) * t_len + j] = p;
                    for x in 0..dh {
                        out[(n * t_len + i) * d + h * dh + x] += p * qkv[at(n, j, 2, h) + x];
                    }
                }
            }
        }
    }
    (out, probs)
}

/// Attention over `batch` sequences of `shape` under `L = Σ out ⊙ R`: the output and the
/// probabilities against the reference, `dqkv` against central differences.
fn attention_case(b: &mut dyn Backend, batch: usize, shape: AttentionShape) {
    let AttentionShape { len, heads, width } = shape;
    let rows = batch * len;
    let mut rng = Rng64::new((len * 31 + heads * 7 + width) as u64);
    let qkv = rng.vec(rows * 3 * width, 1.5);
    let r = rng.vec(rows * width, 1.0);
    let loss = |qkv: &[f64]| -> f64 {
        let (out, _) = attention64(qkv, shape);
        out.iter().zip(&r).map(|(o, r)| o * r).sum()
    };
    let t_qkv = upload(b, "qkv", rows, 3 * width, &qkv);
    let dout = upload(b, "dout", rows, width, &r);
    let mut out = b.zeros("out", rows, width).expect("alloc");
    let mut probs = b.zeros("probs", batch * heads * len, len).expect("alloc");
    let mut dqkv = b.zeros("dqkv", rows, 3 * width).expect("alloc");
    b.attention(&t_qkv, shape, &mut probs, &mut out)
        .expect("attention");
    let what = |w: &str| format!("batch {batch}, T {len}, {heads} heads of {width}: {w}");
    let (want_out, want_probs) = attention64(&qkv, shape);
    assert_close(&what("out"), &read(b, &out), &want_out, ABS, REL);
    // Above the diagonal every probability is exactly zero: no query sees a later key.
    assert_close(&what("probs"), &read(b, &probs), &want_probs, ABS, REL);
    b.attention_backward(&t_qkv, shape, &mut probs, &dout, &mut dqkv)
        .expect("attention_backward");
    let numeric = central_differences(&qkv, H, loss);
    assert_close(&what("dqkv"), &read(b, &dqkv), &numeric, ABS, REL);
}

/// One position (the mask leaves a query only itself), several with one head and with
/// several, heads of one value, and a batch of sequences.
fn attention(b: &mut dyn Backend) {
    for (batch, len, heads, width) in [
        (1, 1, 1, 4),
        (2, 1, 2, 4),
        (1, 5, 1, 3),
        (2, 4, 2, 6),
        (3, 3, 4, 4),
        (2, 7, 3, 6),
    ] {
        attention_case(b, batch, AttentionShape { len, heads, width });
    }
}

/// The embedding of `batch` sequences of `len` tokens of a `vocab`-token vocabulary in `d`
/// values, under `L = Σ out ⊙ R`: the values gathered, and the gradients of the table and the
/// positions against central differences (a token used twice sums both rows; one never used
/// gets zero).
fn embedding_case(b: &mut dyn Backend, (batch, len, vocab, d): (usize, usize, usize, usize)) {
    let rows = batch * len;
    let mut rng = Rng64::new((batch * 13 + len * 5 + vocab) as u64);
    // Token ids: every other token of the vocabulary, some repeated.
    let ids: Vec<f64> = (0..rows)
        .map(|r| ((r * 7 + r / 3) % vocab) as f64)
        .collect();
    let table = rng.vec(vocab * d, 1.0);
    let positions = rng.vec(len * d, 1.0);
    let r = rng.vec(rows * d, 1.0);
    let embed = |table: &[f64], positions: &[f64]| -> Vec<f64> {
        (0..rows * d)
            .map(|i| {
                let (row, j) = (i / d, i % d);
                table[ids[row] as usize * d + j] + positions[(row % len) * d + j]
            })
            .collect()
    };
    let loss =
        |t: &[f64], p: &[f64]| -> f64 { embed(t, p).iter().zip(&r).map(|(o, r)| o * r).sum() };
    let t_ids = upload(b, "ids", rows, 1, &ids);
    let t_table = upload(b, "table", vocab, d, &table);
    let t_pos = upload(b, "positions", len, d, &positions);
    let dout = upload(b, "dout", rows, d, &r);
    let mut out = b.zeros("out", rows, d).expect("alloc");
    let mut dt = b.zeros("dtable", vocab, d).expect("alloc");
    let mut dp = b.zeros("dpositions", len, d).expect("alloc");
    b.embedding(&t_ids, (&t_table, &t_pos), &mut out)
        .expect("embedding");
    b.embedding_backward(&t_ids, &dout, (&mut dt, &mut dp))
        .expect("embedding_backward");
    let what = |w: &str| format!("{batch}×{len} tokens of {vocab} in {d}: {w}");
    assert_close(
        &what("out"),
        &read(b, &out),
        &embed(&table, &positions),
        ABS,
        REL,
    );
    let numeric = central_differences(&table, H, |t| loss(t, &positions));
    assert_close(&what("dtable"), &read(b, &dt), &numeric, ABS, REL);
    let numeric = central_differences(&positions, H, |p| loss(&table, p));
    assert_close(&what("dpositions"), &read(b, &dp), &numeric, ABS, REL);
}

fn embedding(b: &mut dyn Backend) {
    for case in [(1, 1, 3, 2), (2, 5, 11, 4), (3, 4, 6, 3)] {
        embedding_case(b, case);
    }
}

/// `add` and `add_into` sum value by value, and the embedding refuses rows that are not whole
/// sequences with a typed error.
fn sums_and_refusals(b: &mut dyn Backend) {
    let x = upload(b, "x", 2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let y = upload(b, "y", 2, 3, &[0.5, -2.0, 0.25, 1.0, 1.0, -6.0]);
    let mut out = b.zeros("out", 2, 3).expect("alloc");
    b.add(&x, &y, &mut out).expect("add");
    assert_eq!(read(b, &out), [1.5, 0.0, 3.25, 5.0, 6.0, 0.0]);
    b.add_into(&x, &mut out).expect("add_into");
    assert_eq!(read(b, &out), [2.5, 2.0, 6.25, 9.0, 11.0, 6.0]);
    let ids = b.zeros("ids", 5, 1).expect("alloc");
    let table = b.zeros("table", 4, 3).expect("alloc");
    let positions = b.zeros("positions", 2, 3).expect("alloc");
    let mut out = b.zeros("out", 5, 3).expect("alloc");
    let err = b
        .embedding(&ids, (&table, &positions), &mut out)
        .expect_err("5 rows are not sequences of 2");
    assert!(err.to_string().contains("whole sequences"), "{err}");
}

on_both_devices! {
    attention_gradients => super::attention;
    embedding_gradients => super::embedding;
    residual_sums => super::sums_and_refusals;
}
