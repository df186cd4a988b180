//! Every string the UI shows, in English and Simplified Chinese, in one table.
//!
//! The `strings!` macro makes a missing translation a compile error: each key must give both.
//! Placeholders are written `{name}` and filled by [`Lang::fmt`].

use serde::{Deserialize, Serialize};

/// A UI language.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// Both languages, in menu order.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The language's own name, for the switcher.
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Zh => "简体中文",
        }
    }

    /// Parses `en` or `zh`.
    pub fn parse(code: &str) -> Option<Self> {
        match code.to_ascii_lowercase().as_str() {
            "en" | "english" => Some(Lang::En),
            "zh" | "zh-cn" | "zh_cn" | "cn" => Some(Lang::Zh),
            _ => None,
        }
    }

    /// The text of `key` in this language.
    pub fn tr(self, key: Key) -> &'static str {
        key.text(self)
    }

    /// The text of `key` with each `{name}` replaced by its value.
    pub fn fmt(self, key: Key, args: &[(&str, &dyn std::fmt::Display)]) -> String {
        let mut text = self.tr(key).to_owned();
        for (name, value) in args {
            text = text.replace(&format!("{{{name}}}"), &value.to_string());
        }
        text
    }
}

macro_rules! strings {
    ($($key:ident => $en:expr, $zh:expr;)*) => {
        /// A translatable UI string.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Key { $($key),* }

        impl Key {
            /// Every key, for completeness tests.
            pub const ALL: &'static [Key] = &[$(Key::$key),*];

            fn text(self, lang: Lang) -> &'static str {
                match self {
                    $(Key::$key => match lang { Lang::En => $en, Lang::Zh => $zh },)*
                }
            }
        }
    };
}

strings! {
    AppTitle => "BatchScope", "BatchScope 批次透视";
    Tagline => "Why does deep learning need a GPU — and when doesn't it?", "深度学习为什么需要 GPU？什么时候又不需要？";
    Setup => "Setup", "设置";
    Data => "Data set", "数据集";
    Source => "Source", "来源";
    Generators => "Generated (2-D)", "生成的（二维）";
    RealData => "Real data sets", "真实数据集";
    Iris => "Iris flowers", "鸢尾花";
    Wine => "Wine", "葡萄酒";
    BreastCancer => "Breast cancer (Wisconsin)", "乳腺癌（威斯康星）";
    Digits => "Digits 8×8", "手写数字 8×8";
    Penguins => "Palmer penguins", "帕尔默企鹅";
    Mnist => "MNIST digits", "MNIST 手写数字";
    FashionMnist => "Fashion-MNIST", "Fashion-MNIST 服饰";
    DataSeed => "data seed", "数据种子";
    Spiral => "Spiral", "螺旋";
    Moons => "Moons", "双月";
    Circles => "Circles", "同心圆";
    Xor => "XOR", "异或";
    Blobs => "Gaussian blobs", "高斯团";
    Samples => "Samples", "样本数";
    Classes => "Classes", "类别数";
    Noise => "Noise", "噪声";
    TestShare => "Test share", "测试集比例";
    Model => "Model", "模型";
    HiddenLayers => "Hidden layers", "隐藏层";
    AddLayer => "Add layer", "添加层";
    RemoveLayer => "Remove last layer", "删除最后一层";
    Activation => "Activation", "激活函数";
    Parameters => "Parameters: {n}", "参数量：{n}";
    ParametersTip => "Weights and biases: Σ (inputs × outputs + outputs) over the layers.", "权重与偏置：对每层求和 (输入 × 输出 + 输出)。";
    Training => "Training", "训练";
    Optimizer => "Optimizer", "优化器";
    Sgd => "SGD", "SGD（随机梯度下降）";
    Momentum => "SGD + momentum 0.9", "SGD + 动量 0.9";
    Adam => "Adam", "Adam";
    LearningRate => "Learning rate", "学习率";
    BatchSize => "Batch size", "批大小";
    BatchSizeTip => "Rows per step. Larger batches give a GPU more parallel work per kernel launch.", "每步的样本行数。批越大，GPU 每次启动内核时可并行的工作越多。";
    Seed => "Seed", "随机种子";
    SeedTip => "Same seed, same data and same initial weights on both devices: their FP32 curves agree.", "相同的种子意味着两台设备上数据与初始权重相同：FP32 曲线一致。";
    DevicesHeading => "Devices", "设备";
    TrainOnCpu => "Train on the CPU", "在 CPU 上训练";
    TrainOnGpu => "Train on the GPU", "在 GPU 上训练";
    Run => "Run", "运行";
    RunTip => "Train continuously on every enabled device (Space).", "在所有启用的设备上持续训练（空格键）。";
    Pause => "Pause", "暂停";
    Step => "Step", "单步";
    StepTip => "Train exactly one batch (→).", "只训练一个批次（→ 键）。";
    Reset => "Reset", "重置";
    ResetTip => "Apply the settings and start again from the initial weights (R).", "应用设置并从初始权重重新开始（R 键）。";
    SettingsChanged => "Settings changed: press Reset (R) to apply them.", "设置已更改：按“重置”（R 键）生效。";
    Language => "Language", "语言";
    CpuColumn => "CPU", "CPU";
    GpuColumn => "GPU", "GPU";
    StepCounter => "Step {n}", "第 {n} 步";
    EpochCounter => "epoch {n}", "第 {n} 轮";
    SamplesPerSecond => "Samples/s", "样本/秒";
    SamplesPerSecondTip => "Training rows per second over the last interval, measured by the wall clock up to a sync with the device.", "最近一段时间内每秒训练的样本行数，用挂钟计时，截至与设备同步的时刻。";
    StepTime => "Step time", "每步耗时";
    StepTimeTip => "Mean wall-clock time of one training step over the last interval.", "最近一段时间内单个训练步的平均挂钟时间。";
    KernelTime => "GPU kernels (last step)", "GPU 内核时间（最近一步）";
    KernelTimeTip => "Time the GPU spent in this step's kernels, from GPU timestamp queries.", "本步内核在 GPU 上的执行时间，来自 GPU 时间戳查询。";
    KernelTimeNone => "no timestamps on this adapter", "此适配器不支持时间戳";
    Loss => "Loss", "损失";
    Accuracy => "Accuracy", "准确率";
    TrainSeries => "train", "训练集";
    TestSeries => "test", "测试集";
    BatchSeries => "batches", "批次";
    DecisionBoundary => "Decision boundary", "决策边界";
    DecisionBoundaryTip => "The class the model predicts at each point; brighter means more confident. Dots are the data.", "模型在每个位置预测的类别，颜色越亮置信度越高；圆点是数据。";
    NotYet => "Press Run to start.", "按“运行”开始。";
    Starting => "Starting the device…", "正在启动设备…";
    Disabled => "Turned off in the setup panel.", "已在设置面板中关闭。";
    NoAdapterTitle => "No GPU adapter", "没有 GPU 适配器";
    NoAdapterHelp => "The CPU column keeps working. To train here too, install a Vulkan driver for your GPU, or the software adapter: sudo apt-get install mesa-vulkan-drivers", "CPU 一栏照常工作。要在这里训练，请安装 GPU 的 Vulkan 驱动，或软件适配器：sudo apt-get install mesa-vulkan-drivers";
    SoftwareAdapter => "Software adapter: {name} runs the GPU code on the CPU. Its speed says nothing about a real GPU.", "软件适配器：{name} 在 CPU 上运行 GPU 代码，它的速度不代表真实 GPU。";
    Adapter => "Adapter", "适配器";
    Backend => "API", "图形接口";
    DeviceType => "Type", "类型";
    Threads => "{n} threads", "{n} 个线程";
    ErrorTitle => "Training stopped", "训练已停止";
    Measured => "All figures are measured on this machine in this run.", "所有数字均为本机本次运行的实测值。";
    Keys => "Keys: Space run/pause · → step · R reset", "快捷键：空格 运行/暂停 · → 单步 · R 重置";
    Layer => "Layer {n}", "第 {n} 层";
    Running => "running", "运行中";
    Paused => "paused", "已暂停";
    Settings => "Invalid settings", "设置无效";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_two_different_nonempty_texts_or_a_shared_name() {
        for &key in Key::ALL {
            let (en, zh) = (Lang::En.tr(key), Lang::Zh.tr(key));
            assert!(!en.is_empty() && !zh.is_empty(), "{key:?}");
            // Placeholders must match, or a translation would drop a number.
            let holes = |s: &str| s.matches('{').count();
            assert_eq!(holes(en), holes(zh), "{key:?}");
        }
        assert_eq!(Lang::Zh.fmt(Key::StepCounter, &[("n", &12)]), "第 12 步");
    }
}
