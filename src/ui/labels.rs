//! How things are named and coloured on screen, the same in every panel: classes, devices,
//! precisions, memory roles, data sets, optimizers.

use egui::Color32;

use crate::data::Synthetic;
use crate::device::Device;
use crate::i18n::{BrowserKey, Key, Lang};
use crate::memory::Role;
use crate::nn::OptimizerKind;
use crate::precision::Precision;

/// A legend's entry: a colour swatch and its name as one item. In a wrapping row the pair moves
/// to the next line together — not the swatch at one line's end and its name at the next's
/// start, nor a name broken in two.
pub fn swatch(ui: &mut egui::Ui, color: Color32, text: impl Into<egui::WidgetText>) {
    const SIDE: f32 = 12.0;
    // Laid out once: its size places the pair, and the label draws this same galley.
    let galley = text.into().into_galley(
        ui,
        Some(egui::TextWrapMode::Extend),
        f32::INFINITY,
        egui::TextStyle::Body,
    );
    let gap = ui.spacing().item_spacing.x;
    let size = egui::vec2(SIDE + gap + galley.size().x, galley.size().y.max(SIDE));
    ui.allocate_ui(size, |ui| {
        ui.horizontal(|ui| {
            let (square, _) = ui.allocate_exact_size(egui::Vec2::splat(SIDE), egui::Sense::hover());
            ui.painter().rect_filled(square, 2.0, color);
            ui.add(egui::Label::new(galley));
        });
    });
}

/// Each device's colour in plots, and in the lessons' words that name it.
pub fn device_color(device: Device) -> Color32 {
    match device {
        Device::Cpu => Color32::from_rgb(90, 160, 255),
        Device::Gpu => Color32::from_rgb(120, 200, 90),
    }
}

/// The colour of a simulated figure (a line drawn dashed, a what-if line): never a device's.
pub const SIMULATED_COLOR: Color32 = Color32::from_rgb(190, 150, 230);

/// Colours of the classes: distinct on a dark background and at a projector.
pub const CLASS_COLORS: [Color32; 10] = [
    Color32::from_rgb(239, 83, 80),
    Color32::from_rgb(66, 165, 245),
    Color32::from_rgb(102, 187, 106),
    Color32::from_rgb(255, 202, 40),
    Color32::from_rgb(171, 71, 188),
    Color32::from_rgb(38, 198, 218),
    Color32::from_rgb(255, 112, 67),
    Color32::from_rgb(141, 110, 99),
    Color32::from_rgb(236, 64, 122),
    Color32::from_rgb(189, 189, 189),
];

/// The colour of class `c`.
pub fn class_color(c: usize) -> Color32 {
    CLASS_COLORS[c % CLASS_COLORS.len()]
}

/// The title of a device's column.
pub fn device_title(lang: Lang, device: Device) -> &'static str {
    match device {
        Device::Cpu => lang.tr(Key::CpuColumn),
        Device::Gpu => lang.tr(Key::GpuColumn),
    }
}

/// A backend's name as the reader reads it: the CPU backend's own ("CPU, 2 threads") in the
/// reader's language; an adapter's name as its driver gives it.
pub fn backend_name(lang: Lang, name: &str) -> String {
    if let Some(n) = name
        .strip_prefix("WebAssembly, ")
        .and_then(|rest| rest.strip_suffix(" threads"))
        .and_then(|n| n.parse::<usize>().ok())
    {
        return lang.fmt(BrowserKey::WasmBackendName, &[("n", &n)]);
    }
    let cpu = name
        .strip_prefix("CPU, ")
        .and_then(|rest| rest.split_once(" threads"))
        .and_then(|(n, tail)| Some((n.parse::<usize>().ok()?, tail)));
    match cpu {
        Some((n, "")) => lang.fmt(Key::CpuBackendName, &[("n", &n)]),
        Some((n, ", every kernel split")) => lang.fmt(Key::CpuBackendSplitName, &[("n", &n)]),
        _ => name.to_owned(),
    }
}

/// wgpu's name of an adapter's type (`DiscreteGpu`, `Cpu`, …) said in words, where it is one
/// of the kinds a classroom meets.
pub fn device_type_key(device_type: &str) -> Option<Key> {
    match device_type {
        "DiscreteGpu" => Some(Key::TypeDiscrete),
        "IntegratedGpu" => Some(Key::TypeIntegrated),
        "VirtualGpu" => Some(Key::TypeVirtual),
        "Cpu" => Some(Key::TypeSoftware),
        _ => None,
    }
}

/// A precision's name as the columns and the setup show it.
pub fn precision_label(lang: Lang, precision: Precision) -> String {
    match precision {
        Precision::Fp32 => "FP32".to_owned(),
        Precision::Fp16 => format!("FP16 ({})", lang.tr(Key::StoredComputed)),
        Precision::Bf16 => format!("BF16 ({})", lang.tr(Key::StoredComputed)),
        Precision::Mixed => format!(
            "{} ({})",
            lang.tr(Key::MixedPrecision),
            lang.tr(Key::StoredComputed)
        ),
    }
}
/// A span's name in `lang`: the core records English names; kernels and API calls
/// (`linear_forward`, `queue.submit`) keep their code names.
pub fn span_name(lang: Lang, name: &str) -> &str {
    crate::i18n::SpanKey::of(name).map_or(name, |key| lang.tr(key))
}

/// A format's short name for table headers: FP32, FP16, BF16, or "mixed" in `lang`.
pub fn precision_short(lang: Lang, precision: Precision) -> &'static str {
    match precision {
        Precision::Fp32 => "FP32",
        Precision::Fp16 => "FP16",
        Precision::Bf16 => "BF16",
        Precision::Mixed => lang.tr(Key::MixedPrecision),
    }
}

/// The colour of a role, the same in every memory view.
pub fn role_color(role: Role) -> Color32 {
    match role {
        Role::Parameters => Color32::from_rgb(66, 165, 245),
        Role::Gradients => Color32::from_rgb(239, 83, 80),
        Role::OptimizerState => Color32::from_rgb(171, 71, 188),
        Role::Activations => Color32::from_rgb(102, 187, 106),
        Role::Inputs => Color32::from_rgb(255, 167, 38),
        Role::Workspace => Color32::from_rgb(141, 110, 99),
        Role::Internal => Color32::from_rgb(120, 120, 120),
    }
}

/// The translated name of a role.
pub fn role_key(role: Role) -> Key {
    role.key()
}

/// `1`, or `1e-6`.
pub fn weight_text(w: f32) -> String {
    if w == 1.0 {
        "1".to_owned()
    } else {
        format!("{w:e}")
    }
}

/// The translated name of a generator.
pub fn dataset_key(kind: Synthetic) -> Key {
    match kind {
        Synthetic::Spiral => Key::Spiral,
        Synthetic::Moons => Key::Moons,
        Synthetic::Circles => Key::Circles,
        Synthetic::Xor => Key::Xor,
        Synthetic::Blobs => Key::Blobs,
    }
}

/// A data set's name as runs record it, in `lang`: the shipped sets and the generators by their
/// translated names, a file or folder by its own name.
pub fn data_name(lang: Lang, name: &str) -> String {
    if crate::data::shipped::shipped(name).is_some() {
        lang.tr(shipped_keys(name).0).to_owned()
    } else if let Some(kind) = Synthetic::parse(name) {
        lang.tr(dataset_key(kind)).to_owned()
    } else {
        name.to_owned()
    }
}

/// The translated name and description of a shipped set.
pub fn shipped_keys(name: &str) -> (Key, Key) {
    match name {
        "iris" => (Key::Iris, Key::AboutIris),
        "wine" => (Key::Wine, Key::AboutWine),
        "breast_cancer" => (Key::BreastCancer, Key::AboutBreastCancer),
        "digits" => (Key::Digits, Key::AboutDigits),
        "penguins" => (Key::Penguins, Key::AboutPenguins),
        "mnist" => (Key::Mnist, Key::AboutMnist),
        "diabetes" => (Key::Diabetes, Key::AboutDiabetes),
        "autompg" => (Key::AutoMpg, Key::AboutAutoMpg),
        "shakespeare" => (Key::Shakespeare, Key::AboutShakespeare),
        "poems" => (Key::Poems, Key::AboutPoems),
        _ => (Key::FashionMnist, Key::AboutFashionMnist),
    }
}

/// The translated name of an optimizer.
pub fn optimizer_key(kind: OptimizerKind) -> Key {
    match kind {
        OptimizerKind::Sgd => Key::Sgd,
        OptimizerKind::Momentum => Key::Momentum,
        OptimizerKind::Adam => Key::Adam,
        OptimizerKind::AdamW => Key::AdamW,
    }
}

/// An op of the cost model by name, in `lang`: built from what the op is, not from its English
/// name (which the command line and the JSON keep).
pub fn op_name(lang: Lang, op: &crate::sim::cost::Op) -> String {
    let name = first_op_name(lang, op);
    if op.recomputed {
        lang.fmt(crate::i18n::LeverKey::OpRecomputed, &[("op", &name)])
    } else {
        name
    }
}

/// [`op_name`] of an op run once.
fn first_op_name(lang: Lang, op: &crate::sim::cost::Op) -> String {
    use crate::i18n::LayerKey;
    use crate::sim::cost::{LOSS_OP, OpKind, Product, Updated};
    let layer = op.layer.unwrap_or(0);
    if let (Some(plain), Some(_)) = (op.plain, op.layer) {
        // A layer that multiplies no matrix: its pass, or the update of its parameters.
        let key = match (op.kind, plain.gradient) {
            (OpKind::Update, _) => LayerKey::OpPlainUpdate,
            (_, true) => LayerKey::OpPlainGradient,
            (_, false) => LayerKey::OpPlain,
        };
        return lang.fmt(key, &[("layer", &layer), ("what", &lang.tr(plain.what))]);
    }
    let key = match (op.kind, op.product, op.layer) {
        (OpKind::Copy, ..) => return lang.tr(Key::OpUpload).to_owned(),
        (OpKind::Elementwise, ..) if op.name == LOSS_OP => return lang.tr(Key::OpLoss).to_owned(),
        (OpKind::MatMul, Some(Product::Forward), Some(_)) => Key::OpForward,
        (OpKind::MatMul, Some(Product::WeightGradient), Some(_)) => Key::OpWeightGradient,
        (OpKind::MatMul, Some(Product::InputGradient), Some(_)) => Key::OpInputGradient,
        (OpKind::Update, _, Some(_)) => match op.updates {
            Some(Updated::Biases) => Key::OpUpdateBiases,
            Some(Updated::Both) => Key::OpUpdateLayer,
            _ => Key::OpUpdateWeights,
        },
        _ => return op.name.clone(),
    };
    lang.fmt(key, &[("layer", &layer)])
}

/// A hardware profile's name in `lang`. Shipped profiles are named by their makers (proper
/// names, the same in both languages); this machine's calibrated profiles carry an English name
/// in their file, and are named here in Chinese from what they record of the device.
pub fn profile_name(lang: Lang, p: &crate::sim::profile::Profile) -> String {
    match (lang, p.id.as_str(), &p.adapter) {
        (Lang::Zh, "local-cpu", _) => lang.tr(Key::LocalCpuProfile).to_owned(),
        (Lang::Zh, "local-gpu", Some(adapter)) => {
            let key = if adapter.software {
                Key::LocalSoftwareGpuProfile
            } else {
                Key::LocalGpuProfile
            };
            lang.fmt(key, &[("adapter", &adapter.name)])
        }
        _ => p.name.clone(),
    }
}

/// The batch an update learns from, with the micro-batches it is made of where it is
/// accumulated: `256 (4 × 64)`.
pub fn batch_text(config: &crate::train::TrainConfig) -> String {
    batch_parts(config.effective_batch(), config.batch)
}

/// `batch` rows an update run `micro` at a time, as [`batch_text`] writes them.
pub fn batch_parts(batch: usize, micro: usize) -> String {
    if micro > 0 && micro < batch {
        format!("{batch} ({} × {micro})", batch / micro)
    } else {
        batch.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::profile::shipped;

    #[test]
    fn this_machines_profiles_are_named_in_chinese_and_shipped_ones_keep_their_names() {
        let mut p = shipped().remove(0);
        let shipped_name = p.name.clone();
        assert_eq!(profile_name(Lang::Zh, &p), shipped_name);
        p.id = "local-gpu".into();
        p.name = "this machine's GPU (llvmpipe (LLVM 15.0.6, 256 bits)) — a software adapter: it \
                  runs on the CPU"
            .into();
        p.adapter = Some(crate::sim::profile::LocalAdapter {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            software: true,
        });
        assert_eq!(
            profile_name(Lang::Zh, &p),
            "本机的 GPU（llvmpipe (LLVM 15.0.6, 256 bits)），软件适配器：它在 CPU 上运行"
        );
        assert_eq!(profile_name(Lang::En, &p), p.name);
        p.id = "local-cpu".into();
        assert_eq!(profile_name(Lang::Zh, &p), "本机的 CPU");
    }

    /// In a wrapping row narrower than its entries, each legend entry's name stays on one line
    /// with its swatch before it: the name starts right of the swatch on every line.
    #[test]
    fn a_legend_entry_wraps_as_one_piece() {
        use egui_kittest::kittest::Queryable as _;
        let names = [
            "Parameters 1.4 KiB",
            "Optimizer state 2.9 KiB",
            "Workspace 152.4 KiB",
        ];
        let h = egui_kittest::Harness::builder()
            .with_size(egui::vec2(230.0, 300.0))
            .build_ui(|ui| {
                ui.horizontal_wrapped(|ui| {
                    for (i, name) in names.iter().enumerate() {
                        swatch(ui, class_color(i), *name);
                    }
                });
            });
        let rows: Vec<egui::Rect> = names.iter().map(|n| h.get_by_label(n).rect()).collect();
        for (name, rect) in names.iter().zip(&rows) {
            // The window's margin (8) and the swatch (12) come before every name.
            assert!(
                rect.left() >= 20.0,
                "{name} at {rect:?}: its swatch is elsewhere"
            );
            assert!(rect.height() < 30.0, "{name} broken over lines: {rect:?}");
        }
        assert!(
            rows[1].top() > rows[0].bottom(),
            "the row wrapped: {rows:?}"
        );
    }
}
