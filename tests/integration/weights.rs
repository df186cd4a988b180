//! Trained weights as safetensors files: read back by Python's `safetensors` and `NumPy`, whose
//! forward pass from the file as PyTorch would compute it (NCHW images, `x @ W.T + b`) gives the
//! same logits as the model that wrote it; and `train --save-weights` / `--load-weights`.

use std::process::Command;

use batchscope::backend::Activation;
use batchscope::data::ImageShape;
use batchscope::nn::{LayerSpec, Loss, ModelSpec, Network, OptimizerKind, Shape};

use crate::common;

/// Python with `safetensors` and `numpy` (the test script installs them into
/// `target/pylib`), or `None` where they cannot be had (a failure under CI=true).
fn python() -> Option<Command> {
    let lib = concat!(env!("CARGO_MANIFEST_DIR"), "/target/pylib");
    let python = || {
        let mut c = Command::new("python3");
        c.env("PYTHONPATH", lib);
        c
    };
    let found = python()
        .args(["-c", "import safetensors.numpy, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(python());
    }
    let why =
        "python3 with safetensors and numpy (scripts/test.sh installs them into target/pylib)";
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    eprintln!("skipped: needs {why}");
    None
}

fn act(function: Activation) -> LayerSpec {
    LayerSpec::Activation { function }
}

#[test]
fn saved_weights_give_pytorchs_outputs_in_numpy() {
    let Some(_) = python() else { return };
    let image = ImageShape {
        width: 6,
        height: 4,
        channels: 2,
    };
    let models = [
        (
            Shape::Flat(2),
            None,
            vec![
                LayerSpec::Dense { units: 16 },
                act(Activation::Relu),
                LayerSpec::Dense { units: 16 },
                act(Activation::Tanh),
                LayerSpec::Dense { units: 3 },
            ],
        ),
        (
            Shape::Image(image),
            Some([image.height, image.width, image.channels]),
            vec![
                LayerSpec::Conv2d {
                    filters: 3,
                    kernel: 3,
                },
                act(Activation::Relu),
                LayerSpec::MaxPool2d,
                LayerSpec::Flatten,
                LayerSpec::Dense { units: 5 },
                LayerSpec::LayerNorm,
                act(Activation::Gelu),
                LayerSpec::Dense { units: 3 },
            ],
        ),
    ];
    let dir = std::env::temp_dir().join(format!("batchscope-weights-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (n, (input, hwc, list)) in models.into_iter().enumerate() {
        let spec =
            ModelSpec::from_layers(input, list.clone(), Loss::SoftmaxCrossEntropy).expect("fits");
        let mut cpu = common::cpu();
        let (batch, features) = (4, input.values());
        let mut net = Network::new(&mut cpu, &spec, OptimizerKind::Adam, batch, 5).expect("model");
        // A few steps, so the biases and LayerNorm's scale and shift are not their start.
        let x: Vec<f32> = (0..batch * features)
            .map(|i| ((i * 37 % 23) as f32 / 11.0) - 1.0)
            .collect();
        let targets: Vec<f32> = (0..batch).map(|r| (r % 3) as f32).collect();
        net.load_batch(&mut cpu, &x, &targets).expect("batch");
        for _ in 0..3 {
            net.train_step(&mut cpu, 0.05).expect("step");
        }
        let params = net.read_parameters(&mut cpu).expect("read");
        let tensors = batchscope::nn::torch_tensors(&spec, &params);
        let bytes = batchscope::nn::to_safetensors(&tensors).expect("serialised");
        let file = dir.join(format!("model{n}.safetensors"));
        std::fs::write(&file, bytes).expect("write");
        let rows: Vec<&[f32]> = x.chunks(features).collect();
        let inputs = serde_json::json!({ "layers": list, "image": hwc, "x": rows });
        let inputs_file = dir.join(format!("inputs{n}.json"));
        std::fs::write(&inputs_file, inputs.to_string()).expect("write");
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/integration/python/torch_forward.py"
        );
        let output = python()
            .expect("python")
            .args([script.as_ref(), file.as_os_str(), inputs_file.as_os_str()])
            .output()
            .expect("python runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        let theirs: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("the script's JSON");
        // Every tensor of the file has PyTorch's name and shape for its layer.
        for t in &tensors {
            assert_eq!(
                theirs["shapes"][&t.name],
                serde_json::json!(t.shape),
                "{}",
                t.name
            );
        }
        let ours = net.predict(&mut cpu, &x).expect("predict");
        let logits: Vec<f64> = theirs["logits"]
            .as_array()
            .expect("logits")
            .iter()
            .flat_map(|row| row.as_array().expect("a row").clone())
            .map(|v| v.as_f64().expect("a number"))
            .collect();
        assert_eq!(ours.len(), logits.len());
        for (i, (&a, &b)) in ours.iter().zip(&logits).enumerate() {
            let err = (f64::from(a) - b).abs();
            assert!(
                err <= 1e-4 * (1.0 + b.abs()),
                "model {n} logit {i}: ours {a}, NumPy's {b}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn batchscope(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_batchscope"))
        .args(args)
        .env(
            "XDG_DATA_HOME",
            std::env::temp_dir().join("batchscope-weights-data"),
        )
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `train --save-weights` writes a file `--load-weights` reads into the same model; a model of
/// other widths is refused with each tensor that does not fit named.
#[test]
fn train_saves_and_loads_weights() {
    let file = std::env::temp_dir().join(format!("batchscope-{}.safetensors", std::process::id()));
    let path = file.to_str().expect("UTF-8 path");
    let common = ["--device", "cpu", "--steps", "20"];
    let (code, stderr) = batchscope(&[&["train", "--save-weights", path][..], &common].concat());
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) = batchscope(&[&["train", "--load-weights", path][..], &common].concat());
    assert_eq!(code, 0, "{stderr}");
    let other = [
        "train",
        "--load-weights",
        path,
        "--layers",
        "2,32,3",
        "--steps",
        "5",
    ];
    let (code, stderr) = batchscope(&other);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`0.weight` is [16, 2] in the file; the model needs [32, 2]"),
        "{stderr}"
    );
    assert!(stderr.contains("no layer for"), "{stderr}");
    std::fs::remove_file(&file).ok();
}
