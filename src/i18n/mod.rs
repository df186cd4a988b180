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
    DenseLayers => "Dense layers after the blocks", "卷积块之后的全连接层";
    ModelMlp => "MLP", "MLP（多层感知机）";
    ModelMlpTip => "A multi-layer perceptron: every input feeds every unit of the next layer.", "多层感知机：每个输入都连接到下一层的每个单元。";
    ModelCnn => "CNN", "CNN（卷积网络）";
    ModelCnnTip => "A convolutional network: small filters slide over the image, then dense layers classify what they found.", "卷积网络：小滤波器在图像上滑动，之后由全连接层根据提取的特征分类。";
    ModelCnnNeedsImages => "A CNN needs images: choose digits, MNIST, Fashion-MNIST or an image folder.", "CNN 需要图像：请选择手写数字、MNIST、Fashion-MNIST 或图像文件夹。";
    ConvBlocks => "Convolution blocks (filters)", "卷积块（滤波器数）";
    ConvBlocksTip => "Each block: a convolution with zero padding, the activation, then 2×2 max pooling, which halves the image.", "每个卷积块：补零卷积、激活函数，再做 2×2 最大池化，使图像边长减半。";
    ConvBlock => "block {n}", "第 {n} 块";
    AddConvBlock => "Add block", "添加卷积块";
    RemoveConvBlock => "Remove last block", "删除最后一块";
    ConvKernel => "Kernel", "卷积核";
    Presets => "Presets", "预设";
    PresetLenet => "LeNet-like", "类 LeNet";
    PresetLenetTip => "Two 5×5 blocks of 6 and 16 filters, then dense layers of 120 and 84: the shape of LeCun's LeNet-5.", "两个 5×5 卷积块（6 和 16 个滤波器），再接 120 和 84 的全连接层：LeCun 的 LeNet-5 的结构。";
    PresetTinyVgg => "TinyVGG-like", "类 TinyVGG";
    PresetTinyVggTip => "Two 3×3 blocks of 10 filters each straight into the classes, after the CNN Explainer's TinyVGG (which has two convolutions in each block).", "两个各含 10 个滤波器的 3×3 卷积块直接接到类别，仿照 CNN Explainer 的 TinyVGG（其每块有两层卷积）。";
    FlopsPerSample => "FLOPs per sample (forward): {n}", "每个样本的前向 FLOPs：{n}";
    FlopsPerSampleTip => "2 × multiply-adds of one forward pass: the dense layers' inputs × outputs, and for each convolution pixels × kernel² × channels in × filters.", "一次前向传播的乘加数 × 2：全连接层为输入 × 输出，卷积层为像素数 × 卷积核² × 输入通道 × 滤波器数。";
    AddLayer => "Add layer", "添加层";
    RemoveLayer => "Remove last layer", "删除最后一层";
    Activation => "Activation", "激活函数";
    Parameters => "Parameters: {n}", "参数量：{n}";
    ParametersTip => "Weights and biases: Σ (inputs × outputs + outputs) over the layers; a convolution's inputs are its kernel² × channels in.", "权重与偏置：对每层求和 (输入 × 输出 + 输出)；卷积层的输入数为卷积核² × 输入通道数。";
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
    KernelTime => "GPU kernels (last timed step)", "GPU 内核时间（最近计时的一步）";
    KernelTimeTip => "Time the GPU spent in the kernels of the last step whose kernels were timed, from GPU timestamp queries (timing may be sampled: see Time GPU kernels).", "最近一个被计时步骤的内核在 GPU 上的执行时间，来自 GPU 时间戳查询（计时可能是抽样的：见“GPU 内核计时”）。";
    KernelTimeNone => "no timestamps on this adapter", "此适配器不支持时间戳";
    KernelTimeNotYet => "no step timed yet", "尚无计时的步骤";
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
    TypeDiscrete => "discrete GPU (its own memory)", "独立显卡（有自己的显存）";
    TypeIntegrated => "integrated GPU (shares the host's memory)", "集成显卡（与主机共用内存）";
    TypeVirtual => "virtual GPU", "虚拟 GPU";
    TypeSoftware => "software: runs on the CPU", "软件：在 CPU 上运行";
    MatmulKernel => "Products", "矩阵乘法";
    MatmulOne => "one output per invocation", "每个调用算一个输出";
    MatmulBlocks => "{block} outputs per invocation, {tile} per workgroup", "每个调用算 {block} 个输出，每个工作组 {tile}";
    MatmulTuned => "Timed fastest of {count} kernel variants on {n}×{n}×{n} products on this adapter ({rate} GFLOP/s, {date}). `batchscope tune` times them again.", "在这个适配器上用 {n}×{n}×{n} 的乘法测了 {count} 种内核，这一种最快（{rate} GFLOP/s，{date}）。`batchscope tune` 会重新计时。";
    SplitKOn => "Thin weight gradients (few outputs, a long sum) are split along the sum, so more of the GPU works on them: timed {split} against {whole} GFLOP/s whole.", "窄的权重梯度（输出少、求和长）沿求和方向拆开，让更多 GPU 单元参与：计时结果为拆开 {split}、不拆 {whole} GFLOP/s。";
    SplitKOff => "Thin weight gradients are not split along their sum: timed {whole} GFLOP/s whole against {split} split.", "窄的权重梯度不拆开求和：计时结果为不拆 {whole}、拆开 {split} GFLOP/s。";
    MatmulFromLimits => "Chosen from the adapter's limits, not timed: the first run that opens this GPU times the variants.", "按适配器的限制选择，未经计时：第一次在这块 GPU 上运行时会对各内核计时。";
    Threads => "{n} threads", "{n} 个线程";
    ErrorTitle => "Training stopped", "训练已停止";
    Measured => "All figures are measured on this machine in this run.", "所有数字均为本机本次运行的实测值。";
    Keys => "Keys: Space run/pause · → step · R reset", "快捷键：空格 运行/暂停 · → 单步 · R 重置";
    Layer => "Layer {n}", "第 {n} 层";
    Running => "running", "运行中";
    Paused => "paused", "已暂停";
    PausingShort => "pausing…", "正在暂停…";
    PausingWait => "Pausing… (waiting for the {device}'s step)", "正在暂停…（等待{device}完成当前这一步）";
    PausingTip => "The device finishes the step it is on, then stops: on a slow device that can take a moment.", "设备会先做完手头这一步再停下：在较慢的设备上可能要等一会儿。";
    SettingsKept => "The run goes on with the settings it had.", "当前训练继续使用原来的设置。";
    Settings => "Invalid settings", "设置无效";
    DropToOpen => "Drop to open this data set", "松开鼠标以打开此数据集";
    Diabetes => "Diabetes (regression)", "糖尿病（回归）";
    AutoMpg => "Auto MPG (regression)", "汽车油耗 MPG（回归）";
    RealRegression => "Real data sets: regression", "真实数据集：回归";
    YourData => "Your data", "你的数据";
    AboutIris => "Iris flowers: 150 × 4 measurements of sepals and petals, 3 species (setosa, versicolor, virginica).", "鸢尾花：150 朵花 × 4 项萼片与花瓣测量值，3 个品种（山鸢尾、杂色鸢尾、维吉尼亚鸢尾）。";
    AboutWine => "Wine: 178 wines × 13 chemical measurements, 3 grape cultivars.", "葡萄酒：178 种酒 × 13 项化学测量值，3 个葡萄品种。";
    AboutBreastCancer => "Breast Cancer Wisconsin: 569 tissue samples × 30 cell measurements, malignant or benign.", "威斯康星乳腺癌：569 份组织样本 × 30 项细胞测量值，恶性或良性。";
    AboutDigits => "Handwritten digits, 8×8 pixels: 1,797 images, 10 classes.", "手写数字，8×8 像素：1,797 张图像，10 个类别。";
    AboutPenguins => "Palmer penguins: 342 penguins × 4 body measurements, 3 species (Adelie, Chinstrap, Gentoo).", "帕尔默企鹅：342 只企鹅 × 4 项身体测量值，3 个物种（阿德利、帽带、巴布亚）。";
    AboutMnist => "MNIST handwritten digits, 28×28 pixels: 10,000 images, 10 classes.", "MNIST 手写数字，28×28 像素：10,000 张图像，10 个类别。";
    AboutFashionMnist => "Fashion-MNIST clothing, 28×28 pixels: 10,000 images, 10 classes.", "Fashion-MNIST 服饰图像，28×28 像素：10,000 张图像，10 个类别。";
    AboutDiabetes => "Diabetes: 442 patients × 10 measurements; predict disease progression one year later (a number: regression).", "糖尿病：442 名患者 × 10 项测量值；预测一年后的病情进展（一个数值：回归）。";
    AboutAutoMpg => "Auto MPG: 392 cars × 7 measurements; predict fuel use in miles per gallon (regression).", "汽车油耗：392 辆汽车 × 7 项测量值；预测每加仑英里数（回归）。";
    OpenFile => "Open file…", "打开文件…";
    OpenFileTip => "Open a CSV file or an IDX file (e.g. train-images-idx3-ubyte.gz) of your own (Ctrl+O). You can also drop a file on the window.", "打开你自己的 CSV 文件或 IDX 文件（例如 train-images-idx3-ubyte.gz）（Ctrl+O）。也可以把文件拖放到窗口上。";
    OpenFolder => "Open folder…", "打开文件夹…";
    OpenFolderTip => "Open a folder of images with one sub-folder per class (cat/, dog/, …), PNG or JPEG.", "打开一个图像文件夹，每个类别一个子文件夹（cat/、dog/ …），PNG 或 JPEG 格式。";
    OpenFileTitle => "Open a data set file", "打开数据集文件";
    OpenFolderTitle => "Open an image folder (one sub-folder per class)", "打开图像文件夹（每个类别一个子文件夹）";
    OpenButton => "Open", "打开";
    Cancel => "Cancel", "取消";
    FileLabel => "File:", "文件：";
    ShowHidden => "Show hidden", "显示隐藏文件";
    Refresh => "Refresh", "刷新";
    ParentFolder => "Parent folder", "上级文件夹";
    Preview => "Preview", "预览";
    PreviewTip => "Show what the loaded data set holds.", "查看已加载数据集的内容。";
    Loading => "Loading {name}…", "正在加载 {name}…";
    DataErrorTitle => "Could not load the data set", "无法加载数据集";
    DataErrorKept => "Nothing changed: the previous data set stays loaded.", "没有任何改变：之前的数据集仍然保留。";
    Dismiss => "Dismiss", "关闭";
    TestShareTip => "Share of the rows held out for testing: the model never trains on them, so their accuracy shows how well it generalises.", "留作测试的样本比例：模型从不在这些样本上训练，因此它们的准确率反映模型的泛化能力。";
    StandardiseBox => "Standardise features", "标准化特征";
    StandardiseTip => "Shift and scale each feature to mean 0 and standard deviation 1, using the training part only. Features in very different units (grams next to millimetres) otherwise slow training down or stop it. Images are scaled by one mean and deviation per colour channel, so a pixel means the same wherever it is.", "仅用训练部分的统计量，把每个特征平移缩放为均值 0、标准差 1。如果特征单位差别很大（克与毫米并列），不标准化会让训练变慢甚至停滞。图像则按每个颜色通道的一个均值和标准差缩放，使同样的像素值在任何位置含义相同。";
    ParametersUnknown => "Parameters: known once the data is loaded", "参数量：数据加载后可知";
    TabTraining => "Training", "训练";
    TabExperiments => "Experiments", "实验";
    ExperimentsIntro => "Vary one setting, measure both devices at each value, and see where the GPU overtakes the CPU. The devices are measured one after the other, never at once, and training pauses meanwhile: nothing else shares their cores.", "改变一个设置，在每个取值上测量两个设备，看 GPU 在哪里超过 CPU。两个设备依次测量、从不同时进行，其间训练暂停：没有别的工作与它们共用核心。";
    SweepVary => "over", "取值";
    SweepBatch => "Batch size", "批大小";
    SweepWidth => "Hidden width", "隐藏层宽度";
    SweepDepth => "Hidden layers", "隐藏层数";
    SweepThreads => "CPU threads", "CPU 线程数";
    SweepWorkers => "Loader workers", "加载线程";
    SweepPrecision => "Precision", "精度";
    SweepValuesTip => "The values, separated by commas: whole numbers, or fp32, fp16, bf16, mixed for the precision.", "取值，用逗号分隔：整数；精度则为 fp32、fp16、bf16、mixed。";
    RunSweep => "Run sweep", "运行扫描";
    RunSweepTip => "Each value is measured as the bench command measures it: a warm-up, then timed runs until they agree within 10% (interquartile range) or 3 s have passed.", "每个取值的测量方式与 bench 命令相同：先预热，再计时运行，直到结果的四分位距在 10% 以内或已过 3 秒。";
    SweepRunning => "Measuring…", "测量中…";
    SweepFairness => "Measured one device at a time on this machine, in this run; the live training was paused.", "在本机本次运行中依次测量各设备；实时训练已暂停。";
    StepTimeMs => "Step time (ms)", "每步时间（毫秒）";
    Crossover => "crossover", "交叉点";
    SweepSimOn => "What if: simulate on", "假设：模拟于";
    SweepSimNone => "no profile", "不模拟";
    SweepSimTip => "Adds a dashed line: the sweep's values predicted on that hardware profile (simulated, not measured; see the Simulator tab), and where it would overtake this CPU as measured. A classroom without that GPU can still see where the lines cross.", "增加一条虚线：扫描的各取值在该硬件配置上的预测（模拟值，非实测；见“模拟器”页），以及它会在哪里超过本机实测的 CPU。没有这块 GPU 的课堂也能看到两条线在哪里相交。";
    SweepMeasuredLine => "{device} (measured)", "{device}（实测）";
    SweepSimulatedLine => "{name} (simulated)", "{name}（模拟）";
    SweepSimulatedColumn => "{name} samples/s (simulated)", "{name} 样本/秒（模拟）";
    SweepSimCrossoverLine => "crossover with the simulated GPU", "与模拟 GPU 的交叉点";
    SweepSimCrossover => "{name}, simulated, against this CPU, measured: {text}", "模拟的 {name} 对比本机实测的 CPU：{text}";
    CrossoverAt => "The GPU overtakes the CPU at about {value} (interpolated on log scales between the measured {low} and {high}).", "GPU 在约 {value} 处超过 CPU（在实测的 {low} 与 {high} 之间按对数刻度插值）。";
    CrossoverFromStart => "The GPU is at least as fast as the CPU from the first value measured ({value}).", "从测量的第一个取值（{value}）起，GPU 就不慢于 CPU。";
    CrossoverNothing => "No crossover: no value was measured on both devices.", "没有交叉点：没有任何取值在两个设备上都测到。";
    CrossoverSoftware => "No crossover in this range: the GPU is a software adapter, which runs its kernels on the CPU's own cores, so it cannot overtake them.", "此范围内没有交叉点：GPU 是软件适配器，它在 CPU 自己的核心上运行内核，因此无法超过 CPU。";
    CrossoverSlower => "No crossover in this range: the GPU stayed slower (at best {pct}% of the CPU's samples/s, at {at}). Try larger values.", "此范围内没有交叉点：GPU 一直更慢（最好时为 CPU 样本/秒的 {pct}%，在 {at} 处）。请尝试更大的取值。";
    Noisy => "noisy", "波动大";
    SweepSamplesRaised => "The generator's samples were raised from {from} to {to} so that the training part holds the largest batch.", "生成器的样本数从 {from} 提高到 {to}，使训练部分能容纳最大的批。";
    SweepSkipped => "{device}, {setting} {value}: not measured ({why}).", "{device}，{setting} {value}：未测量（{why}）。";
    SweepLeftOut => "{device}: left out ({why}).", "{device}：未参与（{why}）。";
    SweepCancelled => "Cancelled: the points measured so far are shown.", "已取消：显示目前已测得的点。";
    SweepCancelledByRun => "Cancelled because training was started again: a sweep shares its cores with nothing.", "因重新开始训练而取消：扫描不与任何工作共用核心。";
    SweepPointTip => "Interquartile range {iqr}% of the median, over {runs} timed runs of {steps} steps.", "四分位距为中位数的 {iqr}%，共 {runs} 次计时运行，每次 {steps} 步。";
    TabData => "Data preview", "数据预览";
    PreviewEmpty => "No data set loaded yet: open a file or a folder, drop one on the window, or choose a real data set in the setup panel.", "尚未加载数据集：打开文件或文件夹、把文件拖放到窗口上，或在设置面板中选择一个真实数据集。";
    TrainOnThis => "Train on this data set", "在此数据集上训练";
    TrainingOnThis => "Training on this data set", "正在使用此数据集训练";
    TrainOnThisTip => "Apply the settings with this data set and start from the initial weights (like Reset).", "以此数据集应用设置，并从初始权重重新开始（与“重置”相同）。";
    Scatter => "Scatter of two features:", "两个特征的散点图：";
    AxisX => "across", "横轴";
    AxisY => "up", "纵轴";
    ScatterCaptionClasses => "Values as read, before standardisation; colour = class.", "原始读取值（未标准化）；颜色表示类别。";
    ScatterCaptionTarget => "Values as read, before standardisation; colour = target value, blue low to red high.", "原始读取值（未标准化）；颜色表示目标值，蓝色低、红色高。";
    SampleGrid => "The first {n} images of each class, {w}×{h} pixels:", "每个类别的前 {n} 张图像，{w}×{h} 像素：";
    MoreClasses => "… and {n} more classes", "……还有 {n} 个类别";
    Rows => "Rows", "行数";
    RowsSplit => "{n} (train {train} · test {test})", "{n}（训练 {train} · 测试 {test}）";
    Features => "Features", "特征";
    AndMore => ", … {n} more", "，……另有 {n} 个";
    Images => "Images", "图像";
    Grey => "grey", "灰度";
    Rgb => "RGB", "RGB 彩色";
    Task => "Task", "任务";
    TaskAuto => "auto", "自动";
    TaskTip => "Classification predicts one of several classes (softmax cross-entropy, accuracy); regression predicts a number (mean squared error, R², mean absolute error). Auto: text or at most 20 whole numbers are classes, other numbers a regression target.", "分类预测若干类别之一（softmax 交叉熵，准确率）；回归预测一个数值（均方误差、R²、平均绝对误差）。自动：文本或不超过 20 个不同整数视为类别，其他数值视为回归目标。";
    Classification => "classification", "分类";
    Regression => "regression", "回归";
    LabelColumn => "Label column", "标签列";
    TargetRange => "Target", "目标值";
    TargetRangeValue => "from {lo} to {hi}, mean {mean}", "从 {lo} 到 {hi}，均值 {mean}";
    ClassCounts => "Classes", "类别";
    Standardise => "Standardisation", "标准化";
    StandardiseOn => "on: mean 0, deviation 1 from the training part", "开启：按训练部分统计量变为均值 0、标准差 1";
    StandardiseOff => "off: values as read", "关闭：使用原始值";
    InMemory => "In memory", "内存占用";
    HowToRead => "How to read it:", "读取方式：";
    ImageSide => "Image size", "图像尺寸";
    R2 => "R²", "R²（决定系数）";
    R2Tip => "Coefficient of determination: 1 is a perfect fit, 0 is no better than always predicting the mean.", "决定系数：1 表示完美拟合，0 表示不比总是预测平均值更好。";
    Mae => "Mean absolute error", "平均绝对误差";
    MaeTip => "Average distance between prediction and true value, in the target's own units.", "预测值与真实值之间的平均距离，单位与目标值相同。";
    Confusion => "Confusion matrix (test set)", "混淆矩阵（测试集）";
    ConfusionTip => "Rows: true class; columns: predicted class. The diagonal holds the correct predictions; shade = share of that true class.", "行：真实类别；列：预测类别。对角线为预测正确的样本；颜色深浅表示占该真实类别的比例。";
    ConfusionCell => "{n} test rows of {truth} predicted as {predicted}", "{n} 个真实类别为 {truth} 的测试样本被预测为 {predicted}";
    Predicted => "predicted class →", "预测类别 →";
    TrueClass => "↑ true class", "↑ 真实类别";
    ConfusionAxes => "rows: true class · columns: predicted class", "行：真实类别 · 列：预测类别";
    PredictedSamples => "Test images and the class predicted", "测试图像及其预测类别";
    PredictedSamplesTip => "The first test images with this device's prediction in the corner: green where right, red where wrong.", "前几张测试图像，角上是本设备的预测：绿色为正确，红色为错误。";
    LearnedFilters => "First-layer filters (learned)", "第一层滤波器（学习所得）";
    LearnedFiltersTip => "Each convolution filter of the first block, its weights drawn as pixels (dark low, bright high): edge and stroke detectors appear as training goes on.", "第一个卷积块的每个滤波器，权重画成像素（暗为低、亮为高）：随着训练，会出现边缘和笔画检测器。";
    FeatureMaps => "Feature maps of the first test image", "第一张测试图像的特征图";
    FeatureMapsTip => "What each first-layer filter makes of the first test image after the activation: bright where the filter found its pattern.", "第一层每个滤波器经激活后对第一张测试图像的响应：越亮表示越符合该滤波器的模式。";
    FiltersNeedCnn => "Choose CNN in the setup to see learned filters and feature maps.", "在设置中选择 CNN，即可查看学到的滤波器和特征图。";
    PredictedVsTrue => "Predicted vs true {target} (test set)", "预测值与真实 {target} 对比（测试集）";
    PredictedVsTrueTip => "Each dot is a test row; a perfect model puts every dot on the diagonal.", "每个点是一个测试样本；完美模型的所有点都在对角线上。";
    TrueValue => "true", "真实值";
    PredictedValue => "predicted", "预测值";
    AdviceDataLoading => "The {device} waits for data: {share}% of each step goes to the data loader (the rule fires above 5%). Raise Loader workers (now {workers}) or the prefetch depth, or lower the storage latency.", "{device} 在等数据：每步有 {share}% 的时间花在数据加载上（超过 5% 即提示）。增加“加载线程”（现为 {workers}）或预取深度，或降低存储延迟。";
    AdviceSmallBatch => "The GPU computes only {busy}% of each step with batches of {batch} rows (the rule fires under 50%): the batch is too small to fill it, and fixed costs per step dominate. Raise the Batch size.", "批大小为 {batch} 行时，GPU 每步只有 {busy}% 的时间在计算（低于 50% 即提示）：批太小，填不满 GPU，每步的固定开销占了主导。增大“批大小”。";
    AdviceSyncEveryStep => "The loss is read back after {synced}% of the steps, like calling .item() every step: each read waits until the device has finished all its work ({sync}% of each step here). Set Read the loss to every 50 steps.", "{synced}% 的步骤结束时都读回了损失，就像每步都调用 .item()：每次读取都要等设备做完所有工作（这里占每步的 {sync}%）。把“读取损失”设为每 50 步。";
    AdviceTransfers => "Copying each batch to the GPU takes {memcpy} ms, longer than its kernels ({kernel} ms): the copy, not the computing, sets the pace. Try Upload: staging ring, or a wider model that does more work per byte.", "把每批数据复制到 GPU 需要 {memcpy} 毫秒，比它的计算内核（{kernel} 毫秒）还长：决定速度的是复制而不是计算。试试“上传：暂存环”，或使用每字节数据计算量更大的更宽模型。";
    Journey => "Batch journey", "批次旅程";
    Timeline => "Timeline", "时间线";
    TimelineTip => "The last steps as lanes of spans from real clocks. Scroll or pinch to zoom, drag to pan, double-click to see everything; hover a span for its name, duration and bytes.", "最近几步，每条泳道上是来自真实时钟的时间段。滚轮或双指缩放，拖动平移，双击查看全部；悬停查看名称、时长和字节数。";
    TimelineEmpty => "Nothing recorded yet: press Run or Step with Record spans on.", "尚无记录：打开“记录时间段”后按运行或单步。";
    LaneMain => "training thread", "训练线程";
    LaneLoader => "loader worker {i}", "加载线程 {i}";
    LaneTransfer => "host→device copy", "主机→设备复制";
    LaneKernelsGpu => "GPU queue (kernels)", "GPU 队列（内核）";
    LaneKernelsCpu => "CPU kernels (rayon)", "CPU 内核（rayon）";
    LaneReadback => "device→host readback", "设备→主机回读";
    LaneSync => "sync waits", "同步等待";
    CatKernel => "Kernel", "内核计算";
    CatMemcpy => "Memcpy", "内存复制";
    CatSync => "Sync", "同步";
    CatDataLoader => "DataLoader", "数据加载";
    CatCpuExec => "CPU Exec", "CPU 执行";
    CatOther => "Other", "其他";
    SpanDuration => "{duration}", "{duration}";
    SpanBytes => "{bytes} moved", "搬运 {bytes}";
    SpanStep => "step {n}", "第 {n} 步";
    ClockHost => "host clock", "主机时钟";
    ClockGpu => "GPU timestamp query", "GPU 时间戳查询";
    ClockObserved => "host-observed: submit to seen done (an upper bound)", "主机观测：从提交到看到完成（上限）";
    Breakdown => "Step breakdown", "每步时间分解";
    BreakdownTip => "Each step's wall time split by what the device and the training thread were doing. Each instant counts once, highest category first (Kernel, Memcpy, Sync, DataLoader, CPU Exec), so the parts add up to the step.", "每步的实际耗时按设备和训练线程在做的事拆分。每个时刻只计一次，按优先级（内核、复制、同步、数据加载、CPU 执行）归类，所以各部分之和等于该步时间。";
    BusyShare => "{device} busy {busy}% of the step", "{device} 计算时间占每步的 {busy}%";
    MeanStep => "mean step {ms}", "平均每步 {ms}";
    BadLearningRate => "learning rate {value}: choose a value above 0 and at most {max}", "学习率 {value}：请选择大于 0 且不超过 {max} 的值";
    BadLossWeight => "loss weight {value}: choose a value from {min} to 1", "损失权重 {value}：请选择 {min} 到 1 之间的值";
    BadBatchSize => "batch size {value}: choose between 1 and {max}", "批大小 {value}：请选择 1 到 {max} 之间的值";
    BadBatchForData => "batch size {batch} is larger than the {rows} training rows of {data}: choose at most {rows}", "批大小 {batch} 超过了 {data} 的 {rows} 行训练数据：请选择不超过 {rows} 的值";
    BadLayerWidth => "layer width {value}: choose between 1 and {max}", "层宽度 {value}：请选择 1 到 {max} 之间的值";
    RestoreUnreadable => "The saved settings could not be read ({why}): the app starts with the defaults.", "无法读取已保存的设置（{why}）：应用以默认设置启动。";
    RestoreField => "Saved setting not used: {name} ({why}). The default is used instead.", "未使用已保存的设置：{name}（{why}）。改用默认值。";
    RestoreDataGone => "The data set used last time, {path}, is no longer there: the generated data set is used instead.", "上次使用的数据集 {path} 已不存在：改用生成的数据集。";
    RestoreDidNotFit => "The saved settings do not fit {data} ({why}): the defaults are used instead.", "已保存的设置不适用于 {data}（{why}）：改用默认设置。";
    RestoreDismiss => "Dismiss", "关闭提示";
    SavedLang => "language", "语言";
    SavedDevices => "choice of devices", "设备选择";
    SavedSharing => "how the devices share the machine", "设备如何共用本机";
    SharingLabel => "Side by side:", "并排运行：";
    SharingTip => "How the two columns share this machine while both train. A teacher must never show a GPU slowed by the CPU column as the GPU.", "两列同时训练时如何共用本机。教师不应把被 CPU 列拖慢的 GPU 当作“GPU 的速度”展示。";
    SharingTurns => "Taking turns", "轮流";
    SharingTurnsTip => "One device trains while the other waits, each turn from one report to the next (about 0.1 s). Each is timed only in its own turns, so each column shows the device alone. Both train at about half their own pace.", "一个设备训练时另一个等待，每轮从一次报告到下一次（约 0.1 秒）。每个设备只在自己的轮次内计时，所以每列显示的是该设备单独运行的速度。两者的训练进度都约为单独运行时的一半。";
    SharingTogether => "Both at once", "同时运行";
    SharingTogetherTip => "Both train at the same time and share the cores: the CPU's kernel threads, the GPU's submitting thread and, on a software adapter, the GPU's kernels too. Each column shows its device slowed by the other.", "两者同时训练、共用核心：CPU 的内核线程、GPU 的提交线程，以及软件适配器上的 GPU 内核。每列显示的都是被另一方拖慢的设备。";
    SharingSpare => "Leave a core for the GPU", "给 GPU 留一个核心";
    SharingSpareTip => "Both train at the same time, the CPU on one thread fewer, so the GPU's submitting thread never waits for a core. Switching to or from it restarts the run: the CPU's thread pool is rebuilt.", "两者同时训练，CPU 少用一个线程，让 GPU 的提交线程不必等待核心。切换到此项或从此项切回会重新开始训练：CPU 的线程池需要重建。";
    SharingTurnsNote => "Taking turns with the {other}: timed only in its own turns, so this is the {device} alone.", "与 {other} 轮流：只在自己的轮次内计时，因此这是 {device} 单独运行的速度。";
    SharingTogetherNote => "Training at the same time as the {other}, on the same cores: this figure is the {device} slowed by the {other}.", "与 {other} 同时在相同的核心上训练：这个数字是被 {other} 拖慢的 {device}。";
    SharingSpareCpuNote => "One core left for the GPU: the CPU trains on {n} threads, at the same time as the GPU.", "给 GPU 留了一个核心：CPU 用 {n} 个线程训练，与 GPU 同时进行。";
    SharingSpareOneCore => "Only one core: none can be left for the GPU, so both share it.", "只有一个核心：无法给 GPU 留出核心，两者共用它。";
    SharingSpareGpuNote => "A core is left for this column's submitting thread, at the same time as the CPU.", "给本列的提交线程留了一个核心，与 CPU 同时训练。";
    SharingSpareSoftware => "A software adapter computes its kernels on the CPU's cores too: only taking turns gives it the machine alone.", "软件适配器也在 CPU 的核心上计算内核：只有轮流运行才能让它独占本机。";
    SweepExport => "Export CSV…", "导出 CSV…";
    SweepExportTip => "Save the points as CSV in the style of hyperfine's export: one row per device and value, the setting as parameter_<name>, units in the column names, full precision. Opens in any spreadsheet.", "按 hyperfine 导出的格式把测量点保存为 CSV：每个设备和取值一行，设置列名为 parameter_<名称>，单位写在列名中，保留全部精度。可用任何电子表格打开。";
    SweepSaved => "Sweep saved to {path}", "扫描结果已保存到 {path}";
    SweepSaveFailed => "Could not save the sweep to {path}: {error}", "无法把扫描结果保存到 {path}：{error}";
    ServingTitle => "Serving: one request at a time", "部署：一次一个请求";
    ServingIntro => "A deployed model answers requests as they come. After training, each device answers requests of one row and of a batch: copy in, forward, read back, each request timed on the host clock. A GPU that wins on throughput can lose on one request: every request pays its copies and its sync.", "部署后的模型按请求到来的顺序作答。训练之后，每个设备分别回答单行请求和整批请求：复制进去、前向计算、读回结果，每个请求都用主机时钟计时。吞吐量占优的 GPU 在单个请求上可能落后：每个请求都要付出复制和同步的代价。";
    ServingRun => "Time requests", "测量请求延迟";
    ServingRunTip => "Pauses training, then on each device in turn (never both at once) trains a copy of the applied settings and times its requests. The live columns keep their models.", "暂停训练，然后依次在每个设备上（从不同时进行）用已应用的设置训练一个副本并测量请求延迟。实时的两列保留各自的模型。";
    ServingRunning => "measuring one device at a time…", "逐个设备测量中…";
    ServingPlan => "Measured in this run: {steps} training steps of the applied settings, then {requests} timed requests of 1 row and {requests} of {batch} rows on each device, one device at a time.", "本次实测：用已应用的设置训练 {steps} 步，然后在每个设备上依次计时 {requests} 个单行请求和 {requests} 个 {batch} 行的请求。";
    ServingCancelled => "Cancelled: the devices not listed were not measured.", "已取消：未列出的设备没有测量。";
    ServingSoftware => "The GPU here is a software adapter: its latency says nothing about a real GPU.", "这里的 GPU 是软件适配器：它的延迟不代表真实 GPU。";
    ServingCpuFaster => "One request: the CPU answered in {cpu} (median), the GPU in {gpu}: the CPU is {ratio}× faster.", "单个请求：CPU 的中位延迟为 {cpu}，GPU 为 {gpu}：CPU 快 {ratio} 倍。";
    ServingGpuFaster => "One request: the CPU answered in {cpu} (median), the GPU in {gpu}: the GPU is {ratio}× faster.", "单个请求：CPU 的中位延迟为 {cpu}，GPU 为 {gpu}：GPU 快 {ratio} 倍。";
    ServingDevice => "Device", "设备";
    ServingRows => "Rows / request", "每个请求的行数";
    ServingP50 => "p50", "p50";
    ServingP99 => "p99", "p99";
    ServingMax => "max", "最大";
    ServingThroughput => "Throughput", "吞吐量";
    ServingRowsPerS => "{rate} rows/s", "{rate} 行/秒";
    ServingMadeOf => "One request is made of", "一个请求的组成";
    ServingMadeOfTip => "The spans of one recorded request by kind: copies (Memcpy), kernels, syncs, host work. On the GPU every request pays its copies in and out and a sync.", "一个被记录的请求按类型统计的时间段：复制（Memcpy）、内核、同步、主机工作。在 GPU 上，每个请求都要付出输入输出的复制和一次同步。";
    TabSimulator => "Simulator", "模拟器";
    SimIntro => "What one training step of the applied settings would cost on hardware this machine may not have, predicted op by op from each profile's published figures (roofline model: each op is limited by arithmetic, by memory traffic or by the host's launch). Every figure on this tab is simulated, not measured; `batchscope profiles` lists each figure's source.", "用各硬件配置公开的参数逐个算子预测：已应用设置的一步训练在本机可能没有的硬件上需要多少时间（屋顶线模型：每个算子受限于算力、内存流量或主机的启动开销）。本页的每个数字都是模拟值，不是实测值；`batchscope profiles` 列出每个参数的来源。";
    SimProfile => "Profile", "硬件配置";
    SimHeadline => "Simulated on {name}: one step {step}, {rate} samples/s, {bound} (simulated, not measured)", "模拟：{name} 上每步 {step}，每秒 {rate} 个样本，{bound}（模拟值，非实测）";
    SimMeasuredHere => "Measured here: {device} step {step} (last interval)", "本机实测：{device} 每步 {step}（最近一段）";
    SimAxes => "Roofline (log-log): arithmetic intensity in FLOP per byte against TFLOP/s", "屋顶线（双对数）：算术强度（每字节 FLOP）对 TFLOP/s";
    SimRoof => "roof", "屋顶";
    SimRidge => "ridge point", "脊点";
    SimRoofNote => "Roof: {peak} TFLOP/s peak, {bandwidth} GB/s memory; ops left of the ridge point ({ridge} FLOP/byte) cannot reach the peak however well written. Points: each op at the FLOP/s it would attain (simulated).", "屋顶：峰值 {peak} TFLOP/s，内存带宽 {bandwidth} GB/s；脊点（{ridge} FLOP/字节）左侧的算子无论写得多好都达不到峰值。点：每个算子预计能达到的 FLOP/s（模拟值）。";
    SimCalibrate => "Calibrate this machine", "校准本机";
    SimCalibrateTip => "Measures this machine's CPU and GPU adapter with short probes (the peak, the memory bandwidth, each update rule, each product at some twenty shapes, the host's cost per op and per step, the GPU's upload), as `batchscope calibrate` does, and adds a profile for each to the list: then the prediction for these settings can be checked against the measured step. Training pauses meanwhile, and each device is probed alone. About 20 s on a CPU, longer on a software adapter.", "像 `batchscope calibrate` 一样，用简短的探测测量本机的 CPU 和 GPU 适配器（峰值、内存带宽、每种更新规则、每种矩阵乘法的约二十种形状、每个算子和每步的主机开销、GPU 的上传），并为每个设备在列表中加入一个配置：这样就能把对当前设置的预测与实测的每步时间对照。期间训练暂停，每个设备单独探测。CPU 约需 20 秒，软件适配器更久。";
    SimCalibrating => "Calibrating the {device}: {what}", "正在校准 {device}：{what}";
    SimCalibrated => "Calibrated: {names}. Choose one above to check the model against this machine.", "已校准：{names}。在上方选择其一，即可用本机检验模型。";
    SimCalibrationCancelled => "Calibration cancelled; the profiles made before stay.", "校准已取消；之前生成的配置保留。";
    SimCalibrationFailed => "The {device} could not be calibrated: {why}", "无法校准 {device}：{why}";
    SimCheck => "Check on this machine: predicted {predicted}, measured {measured} on the {device} column: error {error}", "在本机检验：预测 {predicted}，“{device}”列实测 {measured}：误差 {error}";
    SimCheckWaiting => "Train on the {device} to check this profile's prediction against the measured step.", "在 {device} 上训练，即可把这个配置的预测与实测的每步时间对照。";
    WhatIfGpu => "What if the GPU were", "假设 GPU 是";
    WhatIfGpuTip => "Predicts this step on a GPU this machine may not have, from its published figures (the Simulator tab shows how, op by op). Simulated, not measured: the column below is what this machine measured.", "根据公开参数预测这一步在本机可能没有的 GPU 上的表现（“模拟器”页逐个算子展示其算法）。这是模拟值，不是实测值：下面这一列才是本机的实测结果。";
    WhatIfLine => "{name}: {rate} samples/s, one step {step}, {bound} (simulated, not measured)", "{name}：每秒 {rate} 个样本，每步 {step}，{bound}（模拟值，非实测）";
    SimMemoryTitle => "Memory on this profile (estimated)", "此配置上的内存（估算）";
    SimMemoryFits => "This model at batch {batch} needs about {needs} of this profile's {capacity}: it fits. The largest batch that fits: {largest}.", "此模型在批量 {batch} 时约需 {needs}，此配置有 {capacity}：放得下。能放下的最大批量：{largest}。";
    SimMemoryDoesNotFit => "This model at batch {batch} needs about {needs}, more than this profile's {capacity}: it does not fit. The largest batch that fits: {largest}.", "此模型在批量 {batch} 时约需 {needs}，超过此配置的 {capacity}：放不下。能放下的最大批量：{largest}。";
    SimMemoryNone => "none (not even one row)", "没有（连一行都放不下）";
    SimZeroTitle => "A {model} ({params} parameters), mixed precision and Adam, spread over", "{model}（{params} 个参数），混合精度与 Adam，分布在";
    SimZeroGpus => " GPUs", " 块 GPU 上";
    SimZeroTip => "Memory per GPU of the model states (parameters, gradients, optimizer state) with the ZeRO paper's formulas (Rajbhandari et al., 2020): plain data parallelism keeps all on every GPU, 16 bytes per parameter; ZeRO stage 1 splits the optimizer state across the GPUs, stage 2 the gradients too, stage 3 the parameters too. Activations are not counted.", "按 ZeRO 论文（Rajbhandari 等，2020）的公式估算每块 GPU 上模型状态（参数、梯度、优化器状态）的内存：普通数据并行在每块 GPU 上保存全部，每个参数 16 字节；ZeRO 第 1 阶段把优化器状态分摊到各 GPU，第 2 阶段连梯度也分摊，第 3 阶段连参数也分摊。不计激活值。";
    SimStageDp => "data parallel", "数据并行";
    SimStageZero1 => "ZeRO stage 1 (optimizer state split)", "ZeRO 第 1 阶段（分摊优化器状态）";
    SimStageZero2 => "ZeRO stage 2 (+ gradients)", "ZeRO 第 2 阶段（+ 梯度）";
    SimStageZero3 => "ZeRO stage 3 (+ parameters)", "ZeRO 第 3 阶段（+ 参数）";
    SimZeroFits => "fits in each GPU's {capacity}", "每块 GPU 的 {capacity} 放得下";
    SimZeroDoesNotFit => "does not fit in one GPU's {capacity}", "单块 GPU 的 {capacity} 放不下";
    SimZeroNote => "Estimated, per GPU, model states only (the ZeRO paper's accounting: 2 + 2 + 12 bytes per parameter); activations, buffers and fragmentation come on top. \"Parameter sharding or several GPUs\" in numbers.", "估算值，按每块 GPU 计，仅模型状态（ZeRO 论文的算法：每个参数 2 + 2 + 12 字节）；激活值、缓冲区和碎片另计。这就是“参数分片或多块 GPU”的具体数字。";
    EcoTitle => "The ecosystem: what would train this network", "生态：用什么软件来训练这个网络";
    EcoTip => "Why the ecosystem favours GPUs: a framework does not write its own kernels, it calls the vendor's tuned libraries through the vendor's stack. Facts with their sources, from assets/ecosystem.toml.", "为什么生态偏向 GPU：框架并不自己编写内核，而是通过厂商的软件栈调用厂商调优过的库。以下事实及其来源见 assets/ecosystem.toml。";
    EcoOnProfile => "On {name} a framework would train with", "在 {name} 上，框架会用";
    EcoThisApp => "This app ({here})", "本应用（{here}）";
    EcoAdapter => "on this machine: {name} through {api}{software}", "本机：{name}，经由 {api}{software}";
    EcoSoftwareAdapter => ", a software adapter that runs on the CPU", "，这是在 CPU 上运行的软件适配器";
    EcoNoAdapter => "no GPU adapter is up on this machine", "本机没有可用的 GPU 适配器";
    EcoHeading => "{heading}: {name}", "{heading}：{name}";
    EcoRunsOn => "Runs on: {devices}", "运行于：{devices}";
    EcoSources => "Sources:", "来源：";
    LocalCpuProfile => "this machine's CPU", "本机的 CPU";
    LocalGpuProfile => "this machine's GPU ({adapter})", "本机的 GPU（{adapter}）";
    LocalSoftwareGpuProfile => "this machine's GPU ({adapter}), a software adapter: it runs on the CPU", "本机的 GPU（{adapter}），软件适配器：它在 CPU 上运行";
    ProbingUpdates => "the update rules on {values} values", "各更新规则处理 {values} 个值";
    ProbingProducts => "the products of a {in}×{out} layer at batch {batch}", "{in}×{out} 层在批大小 {batch} 时的矩阵乘法";
    ProbingTooSlow => "nothing larger of {in}×{out}: a call at batch {batch} would take over a second", "{in}×{out} 不再测更大的：批大小 {batch} 时一次调用会超过一秒";
    ProbingTinySteps => "steps of tiny models", "小模型的训练步";
    ProbingMidSteps => "steps of small and mid-sized models", "中小模型的训练步";
    ProbingRuleSteps => "steps with each update rule", "各更新规则的训练步";
    OpUpload => "upload batch", "上传批次";
    OpLoss => "loss and its gradient", "损失及其梯度";
    OpForward => "layer {layer} forward", "第 {layer} 层 前向";
    OpWeightGradient => "layer {layer} weight gradient", "第 {layer} 层 权重梯度";
    OpInputGradient => "layer {layer} input gradient", "第 {layer} 层 输入梯度";
    OpPooling => "layer {layer} max pooling", "第 {layer} 层 最大池化";
    OpPoolingGradient => "layer {layer} pooling gradient", "第 {layer} 层 池化梯度";
    OpUpdateWeights => "layer {layer} update weights", "第 {layer} 层 更新权重";
    OpUpdateBiases => "layer {layer} update biases", "第 {layer} 层 更新偏置";
    OpUpdateLayer => "layer {layer} update weights and biases", "第 {layer} 层 更新权重和偏置";
    SimMeasuredPoints => "Measured (this run)", "实测（本次运行）";
    SimMeasuredHover => "{op}: {intensity} FLOP/byte, {tflops} TFLOP/s reached, {time} (measured in this run)", "{op}：{intensity} FLOP/字节，实际达到 {tflops} TFLOP/s，{time}（本次运行实测）";
    SimHover => "{op}: {intensity} FLOP/byte, {tflops} TFLOP/s, {time}, {bound} (simulated)", "{op}：{intensity} FLOP/字节，{tflops} TFLOP/s，{time}，{bound}（模拟）";
    SimOp => "Op", "算子";
    SimFlops => "FLOPs", "FLOP 数";
    SimBytes => "Bytes", "字节数";
    SimTime => "Time (simulated)", "时间（模拟）";
    SimBound => "Bound", "瓶颈";
    BoundCompute => "compute-bound", "受算力限制";
    BoundMemory => "memory-bound", "受内存带宽限制";
    BoundOverhead => "overhead-bound", "受启动开销限制";
    BoundLink => "link-bound", "受主机链路限制";
    TabHistory => "History", "历史记录";
    HistoryIntro => "Every finished run and sweep, with its settings and what was measured in it, kept across restarts. A run finishes when Reset or a restored entry replaces it, or when the window closes. Speeds are the mean over the run's training time (evaluations and waits for a turn left out).", "每次完成的训练和扫描，连同其设置和实测结果，重启后仍会保留。按“重置”或恢复某条记录而被替换、或关闭窗口时，一次训练即告完成。速度是整个训练时间内的平均值（不含评估和等待轮次的时间）。";
    HistoryEmpty => "No finished runs yet: train, then press Reset (or run a sweep), and the run appears here.", "还没有完成的训练：训练后按“重置”（或运行一次扫描），记录就会出现在这里。";
    HistoryCompare => "Compare", "对比";
    HistoryCompareTip => "Tick two or more entries to see them side by side below.", "勾选两条或更多记录，在下方并排对比。";
    HistoryFinished => "Finished", "完成时间";
    HistoryKind => "Kind", "类型";
    HistoryModel => "Model", "模型";
    HistoryModelText => "hidden {hidden}, batch {batch}, {precision}", "隐藏层 {hidden}，批大小 {batch}，{precision}";
    HistoryCpuRate => "CPU samples/s", "CPU 样本/秒";
    HistoryGpuRate => "GPU samples/s", "GPU 样本/秒";
    HistoryResult => "Result", "结果";
    HistoryRun => "Run", "训练";
    HistorySweep => "Sweep of {parameter}", "扫描 {parameter}";
    HistoryBestAt => "best {rate} at {value}", "最高 {rate}（取值 {value}）";
    HistoryCrossoverAt => "GPU reaches the CPU at ≈ {value}", "GPU 在约 {value} 处追上 CPU";
    HistoryNoCrossover => "GPU did not reach the CPU", "GPU 未追上 CPU";
    HistoryNoCrossoverSoftware => "GPU did not reach the CPU (software adapter)", "GPU 未追上 CPU（软件适配器）";
    HistoryRestore => "Restore", "恢复";
    HistoryRestoreTip => "Put this entry's settings and devices into the setup and start a new run with them (the run in progress is kept in the history).", "把这条记录的设置和设备放回设置面板，并用它们开始新的训练（当前训练会保存在历史记录中）。";
    HistoryDelete => "Delete", "删除";
    HistoryDeleteTip => "Remove this entry from the history.", "从历史记录中删除这一条。";
    HistoryTickTwo => "Tick two or more entries to compare them side by side.", "勾选两条或更多记录即可并排对比。";
    HistoryComparison => "Comparison", "并排对比";
    HistoryOptimizer => "Optimizer", "优化器";
    HistoryDeviceName => "device", "设备";
    HistorySamples => "Samples/s", "样本/秒";
    HistorySteps => "steps", "步数";
    HistoryEvalStep => "last evaluated at step", "最后评估于第几步";
    HistoryTestLoss => "test loss", "测试损失";
    HistoryTimeToTarget => "time to target", "达到目标用时";
    HistoryPeakMemory => "peak memory", "峰值内存";
    HistoryLeftOut => "{n} saved history entries could not be read and were left out.", "有 {n} 条已保存的历史记录无法读取，已略去。";
    ProfilesUnreadable => "The calibrated profiles saved last time could not be read ({why}): calibrate again on the Simulator tab.", "无法读取上次保存的校准配置（{why}）：请在“模拟器”页重新校准。";
    HistoryUnreadable => "The saved history could not be read ({why}): it starts empty.", "无法读取已保存的历史记录（{why}）：历史记录从空开始。";
    SavedData => "data settings", "数据设置";
    SavedSource => "data set", "数据集";
    SavedHidden => "hidden layers", "隐藏层";
    SavedConv => "convolution blocks", "卷积块";
    SavedConvKernel => "convolution kernel", "卷积核";
    SavedActivation => "activation", "激活函数";
    SavedOptimizer => "optimizer", "优化器";
    SavedLr => "learning rate", "学习率";
    SavedBatch => "batch size", "批大小";
    SavedSeed => "seed", "随机种子";
    SavedAugment => "augmentation", "数据增强";
    SavedPrecision => "precision", "精度";
    SavedLossWeight => "loss weight", "损失权重";
    SavedPipeline => "pipeline settings", "流水线设置";
    BadNoDevice => "no device chosen: train on the CPU, the GPU or both", "未选择设备：请在 CPU、GPU 或两者上训练";
    BadConvData => "Convolution blocks need images, and the samples of {data} are rows of numbers: choose an image data set (digits, MNIST, Fashion-MNIST, an image folder) or remove the blocks", "卷积块需要图像，而 {data} 的样本是一行行数字：请选择图像数据集（手写数字、MNIST、Fashion-MNIST、图像文件夹）或删除卷积块";
    BadConvBlocks => "{value} convolution blocks: choose at most {max}", "{value} 个卷积块：请选择不超过 {max} 个";
    BadConvChannels => "A convolution block of {value} filters: choose 1 to {max}", "含 {value} 个滤波器的卷积块：请选择 1 到 {max} 个";
    BadConvKernel => "A {value}×{value} kernel: choose 3×3 or 5×5", "{value}×{value} 的卷积核：请选择 3×3 或 5×5";
    BadConvImage => "{blocks} convolution blocks halve {width}×{height} images {blocks} times, which leaves no pixel: remove a block", "{blocks} 个卷积块会把 {width}×{height} 的图像减半 {blocks} 次，一个像素也不剩：请删除一个卷积块";
    BadDepth => "{value} hidden layers: choose at most {max}", "{value} 个隐藏层：请选择不超过 {max} 个";
    BadParameters => "a model of {value} parameters: choose fewer or narrower layers (at most {max} parameters)", "模型有 {value} 个参数：请减少层数或层宽度（最多 {max} 个参数）";
    BadHostMemory => "this run needs about {needs} of memory (estimated: weights, gradients, optimizer state and activations), more than the {available} this computer has available: use fewer or narrower layers, a smaller batch, or a smaller data set", "本次运行估计需要约 {needs} 内存（权重、梯度、优化器状态和激活值），超过本机当前可用的 {available}：请减少层数或层宽度、减小批大小，或使用更小的数据集";
    BadAugmentNoise => "augmentation noise {value}: choose between 0 and {max}", "增强噪声 {value}：请选择 0 到 {max} 之间的值";
    BadAugmentShift => "augmentation shift {value} px: choose at most {max}", "增强平移 {value} 像素：请选择不超过 {max} 的值";
    BadMemoryBudget => "memory budget of {bytes} bytes: choose at least {min} ({shown})", "内存预算 {bytes} 字节：请选择至少 {min}（{shown}）";
    BadKernelTiming => "time kernels every {value} steps: choose at most {max}", "每 {value} 步计时一次内核：请选择不超过 {max} 的值";
    BadStopAt => "stop condition {value}: choose 1 to 100000 epochs, or a test accuracy (or R²) above 0 and at most 1", "停止条件 {value}：请选择 1 到 100000 个轮次，或大于 0 且不超过 1 的测试准确率（或 R²）";
    StopAtLabel => "Stop", "停止条件";
    StopAtTip => "When training stops by itself, and how long it took to get there: wall time on this device from its first step, end to end (data loading, copies and the evaluations that check the target included; a wait for the other device's turn left out). The accuracy target is checked on the test set after every epoch, as the command line's --until-accuracy does. Applies at once.", "训练何时自动停止，以及达到目标用了多久：本设备从第一步起的实际耗时，端到端计算（包括数据加载、复制以及检查目标的评估；不含等待另一设备轮次的时间）。准确率目标在每个轮次结束后在测试集上检查，与命令行的 --until-accuracy 相同。立即生效。";
    StopNever => "never (until paused)", "不自动停止（直到暂停）";
    StopEpochs => "after epochs", "达到轮次后";
    StopMetric => "at test accuracy / R²", "达到测试准确率 / R² 时";
    ReachedTarget => "Reached {target} at step {step} in {time} (this device's own time, end to end)", "在第 {step} 步达到 {target}，用时 {time}（本设备自身时间，端到端）";
    TargetEpochs => "{n} epochs", "{n} 个轮次";
    TargetMetric => "test accuracy / R² {value}", "测试准确率 / R² {value}";
    BadSyncEvery => "read the loss every {value} steps: choose between 1 and {max}", "每 {value} 步读取一次损失：请选择 1 到 {max} 之间的值";
    BadLoaderWorkers => "{value} loader workers: choose at most {max}", "{value} 个加载线程：请选择不超过 {max} 个";
    BadPrefetch => "prefetch depth {value}: choose between 1 and {max}", "预取深度 {value}：请选择 1 到 {max} 之间的值";
    BadStorageLatency => "storage latency {value} ms: choose between 0 and {max}", "存储延迟 {value} 毫秒：请选择 0 到 {max} 之间的值";
    BadQueuedBatches => "{workers} loader workers × prefetch depth {prefetch} × {batch} per batch could hold {queued} of batches waiting, more than {max}: lower the prefetch depth, the workers or the batch size", "{workers} 个加载线程 × 预取深度 {prefetch} × 每批 {batch}，排队的批次可能占用 {queued}，超过 {max}：请降低预取深度、加载线程数或批大小";
    BadTestShare => "test share {value}: choose between {min} and {max}", "测试集比例 {value}：请选择 {min} 到 {max} 之间的值";
    BadClasses => "{value} classes: choose between 2 and {max}", "{value} 个类别：请选择 2 到 {max} 之间的值";
    BadSamples => "{value} samples: choose between {min} and {max}", "{value} 个样本：请选择 {min} 到 {max} 之间的值";
    BadNoise => "noise {value}: choose between 0 and {max}", "噪声 {value}：请选择 0 到 {max} 之间的值";
    Advice => "Advice", "建议";
    NoAdvice => "No rule fired: nothing in these steps stands out.", "没有触发任何规则：这些步骤里没有明显的瓶颈。";
    Loader => "Data loader", "数据加载器";
    Workers => "Loader workers", "加载线程";
    WorkersTip => "Threads that read, decode, augment and collate batches ahead of the training thread (PyTorch's num_workers). 0: the training thread does it itself, between steps.", "提前读取、解码、增强和整理批次的线程（PyTorch 的 num_workers）。0：由训练线程自己在步与步之间完成。";
    Prefetch => "Prefetch depth", "预取深度";
    PrefetchTip => "Finished batches each worker may keep waiting in its queue (PyTorch's prefetch_factor).", "每个加载线程可以在队列中预先准备好的批次数（PyTorch 的 prefetch_factor）。";
    StorageLatency => "Storage latency", "存储延迟";
    StorageLatencyTip => "A delay before each batch is read, standing in for a slow disk or network. Simulated: the thread really sleeps this long.", "每批读取前的延迟，模拟慢速磁盘或网络。这是模拟的：线程确实会休眠这么久。";
    Simulated => "simulated", "模拟";
    Compressed => "Store compressed", "压缩存储";
    CompressedTip => "Keep samples deflate-compressed in memory and inflate each one when loaded, as a real loader decodes PNG or JPEG files.", "在内存中以 deflate 压缩保存样本，加载时逐个解压，就像真实加载器解码 PNG 或 JPEG 文件。";
    Augmentation => "Augmentation", "数据增强";
    AugmentNoise => "Noise", "噪声";
    AugmentFlip => "Flip images", "水平翻转图像";
    AugmentShift => "Shift images", "平移图像";
    AugmentTip => "Random changes to each training sample, seeded by epoch and sample so both devices see the same. Flips and shifts apply to image data only.", "对每个训练样本的随机改变，由轮次和样本决定随机种子，两台设备看到的完全相同。翻转和平移只用于图像数据。";
    SyncSetting => "Read the loss", "读取损失";
    SyncSettingTip => "Reading the loss back to the host waits until the device has finished everything submitted: a sync point, like loss.item() in PyTorch.", "把损失读回主机要等设备完成所有已提交的工作：这是一个同步点，就像 PyTorch 里的 loss.item()。";
    SyncWhenShown => "when shown (~10/s)", "需要显示时（约每秒 10 次）";
    SyncEveryStep => "every step (.item())", "每步（.item()）";
    SyncEveryN => "every {n} steps", "每 {n} 步";
    Upload => "Upload", "上传";
    UploadTip => "How each batch reaches the GPU: queue.write_buffer copies it into a staging buffer wgpu manages; the staging ring writes it straight into buffers the host keeps mapped (like pinned memory) and the GPU copies from there.", "每批数据如何到达 GPU：queue.write_buffer 先复制到 wgpu 管理的暂存缓冲区；暂存环直接写入主机保持映射的缓冲区（类似锁页内存），再由 GPU 从那里复制。";
    UploadWriteBuffer => "write_buffer", "write_buffer";
    UploadRing => "staging ring", "暂存环";
    RecordSpans => "Record spans", "记录时间段";
    RecordSpansTip => "Record what every thread and the device do, for the timeline and the breakdown. Costs a few percent of step time (see batchscope bench --recording-overhead).", "记录每个线程和设备的工作，用于时间线和时间分解。会占用百分之几的步时间（见 batchscope bench --recording-overhead）。";
    ExportTrace => "Export trace…", "导出追踪…";
    ExportTraceTip => "Save the recorded steps as Chrome trace JSON, which opens in Perfetto (ui.perfetto.dev) or chrome://tracing.", "把已记录的步骤保存为 Chrome trace JSON，可在 Perfetto（ui.perfetto.dev）或 chrome://tracing 中打开。";
    KindsTitle => "Where the time goes, by kind of op", "时间花在哪里：按算子类别";
    KindsCaption => "FLOPs: the step's ops as the cost model counts them. Time: the ops of one recent step, each timed on its own (GPU timestamp queries; on the CPU the host's clock, one step in 256). The activations run inside the products' kernels here (a fused epilogue), so their time is the products'. Convolutions: the CPU convolves straight from the images; the GPU multiplies the images' patches as a matrix, reading each patch from the image as it goes (no patch matrix is made). Copies between host and device are not kernels: the breakdown above shows them as Memcpy.", "FLOP：成本模型统计的本步各算子。时间：最近一步的各算子分别计时（GPU 用时间戳查询；CPU 用主机时钟，每 256 步计时一步）。这里激活函数在矩阵乘法的内核里一起完成（融合的收尾计算），所以它们的时间算在矩阵乘法里。卷积：CPU 直接在图像上计算；GPU 把图像的图块当作矩阵相乘，计算时直接从图像读取每个图块（不生成图块矩阵）。主机与设备之间的复制不是内核：见上面分解图中的“内存复制”。";
    KindsGroup => "Kind", "类别";
    KindsFlops => "Share of FLOPs", "FLOP 占比";
    KindsTime => "Share of kernel time", "内核时间占比";
    KindsNotYet => "No step timed op by op yet: press Run.", "还没有逐个算子计时的步：请按“运行”。";
    KindsNoModel => "Apply the settings (Reset) to see the step's ops.", "应用设置（重置）后才能看到本步的算子。";
    GroupProducts => "Matrix products", "矩阵乘法";
    GroupConvolutions => "Convolutions", "卷积";
    GroupElementwise => "Element-wise", "逐元素运算";
    GroupLoss => "Loss", "损失函数";
    GroupOptimizer => "Optimizer", "优化器";
    GroupOther => "Other", "其他";
    MismatchTitle => "The model on the GPU, the batch left on the CPU", "模型在 GPU 上，批次却留在 CPU 上";
    MismatchIntro => "A training step only runs when the model and the batch are in the same device's memory. Put a layer's weights on the GPU, leave the batch where the loader made it, and run one real op between them.", "只有模型和批次在同一设备的内存里，训练步骤才能运行。把一层的权重放到 GPU 上，让批次留在加载器生成它的地方，然后在两者之间真正运行一个运算。";
    MismatchRun => "Run one op with the batch on the CPU", "在 CPU 上的批次上运行一个运算";
    MismatchRunTip => "Opens the GPU, puts one dense layer's weights on it, makes a batch of 8 rows in the CPU's memory and calls the GPU's dense-layer op on both: the backend refuses it with its own typed error. Then it copies the batch to the GPU and runs the same op again.", "打开 GPU，把一个全连接层的权重放上去，在 CPU 内存里生成 8 行的批次，然后对两者调用 GPU 的全连接层运算：后端用它自己的类型化错误拒绝。接着把批次复制到 GPU，再运行同一个运算。";
    MismatchRunning => "Opening the GPU and running the op…", "正在打开 GPU 并运行运算…";
    MismatchError => "The op's error, in the backend's own words:", "运算返回的错误（后端的原文）：";
    MismatchMeaning => "The op {op} runs on the {expected}, but one of its tensors is still in the {found}'s memory: every tensor of an op must be on the same device, and nothing moves on its own.", "运算 {op} 在 {expected} 上运行，但它的一个张量还在 {found} 的内存里：一个运算的所有张量都必须在同一设备上，数据不会自己移动。";
    MismatchFix => "The fix: copy the batch to the GPU first ({bytes} bytes, as PyTorch's .to(device) does). The same op then ran on {adapter}; its first output row: {row}.", "解决办法：先把批次复制到 GPU（{bytes} 字节，就像 PyTorch 的 .to(device)）。同一个运算随后在 {adapter} 上运行成功，第一行输出：{row}。";
    MismatchSoftware => "{adapter} (a software adapter: it runs the GPU code on the CPU, and its memory is the CPU's, yet the backend keeps the devices apart all the same)", "{adapter}（软件适配器：它在 CPU 上运行 GPU 代码，内存也是 CPU 的，但后端照样把两个设备分开）";
    MismatchNoGpu => "No GPU to put the weights on ({why}): on one device this mistake cannot happen.", "没有可以放权重的 GPU（{why}）：只有一个设备时不会出现这个错误。";
    TraceSaved => "Trace saved to {path}", "追踪已保存到 {path}";
    TraceSaveFailed => "Could not save the trace to {path}: {error}", "无法把追踪保存到 {path}：{error}";
    Diagram => "Hardware path of one batch", "一批数据的硬件路径";
    DiagramTip => "Replays the selected step's recorded spans slowed down, so the class can follow the batch from storage to the compute units and back.", "把所选步骤记录下来的时间段放慢重放，便于全班跟随这批数据从存储到计算单元再返回。";
    Replay => "Replay step", "重放这一步";
    Storage => "Storage", "存储";
    CpuCores => "CPU cores", "CPU 核心";
    Ram => "RAM", "内存";
    Bus => "Bus", "总线";
    Vram => "VRAM", "显存";
    ComputeUnits => "Compute units", "计算单元";
    CurrentStep => "current step", "当前步";
    MemoryTab => "Memory", "内存";
    MemoryIntro => "Every byte here is a tensor this run allocated, by what it is for. The GPU keeps freed buffers in a cache for reuse, so reserved can be more than allocated: that is caching, not a leak.", "这里的每个字节都是本次运行分配的张量，按用途分类。GPU 会把释放的缓冲区缓存起来复用，所以“已保留”可以大于“已分配”：这是缓存，不是泄漏。";
    Allocated => "allocated {bytes}", "已分配 {bytes}";
    AllocatedTip => "Held by live tensors (in the pool's block sizes).", "由存活张量占用（按内存池的块大小计）。";
    Reserved => "reserved {bytes}", "已保留 {bytes}";
    ReservedTip => "Held from the device: allocated plus cached blocks kept for reuse (PyTorch's memory_reserved).", "从设备占用的总量：已分配加上为复用而缓存的块（相当于 PyTorch 的 memory_reserved）。";
    PeakMemory => "peak {bytes}", "峰值 {bytes}";
    BudgetIs => "budget {bytes}", "预算 {bytes}";
    NoBudget => "no budget set", "未设预算";
    ReleaseCached => "Release cached", "释放缓存";
    TuningUnreadable => "The saved GPU kernel choice in {path} could not be used ({why}): the kernels were timed again.", "无法使用 {path} 中保存的 GPU 内核选择（{why}）：已重新计时各内核。";
    TuningNotSaved => "The GPU kernel choice could not be saved ({why}): it will be timed again next time.", "无法保存 GPU 内核选择（{why}）：下次启动时会重新计时。";
    TuningFailed => "Timing the GPU's matrix-product kernels failed ({why}): the default kernel is used.", "GPU 矩阵乘法内核计时失败（{why}）：改用默认内核。";
    MemoryPreviousModel => "Still the previous model's memory: this run's model is being built on this device.", "仍是上一个模型的内存：本次运行的模型正在这台设备上构建。";
    UnifiedMemory => "Unified memory: this GPU works in the host's RAM, so its memory below is the host's and no copy crosses a bus", "统一内存：这块 GPU 使用主机的内存，所以下面的显存就是主机内存，复制不经过总线";
    ReleaseCachedTip => "Give the cached blocks back to the device (PyTorch's torch.cuda.empty_cache()): reserved falls to allocated.", "把缓存的块还给设备（相当于 PyTorch 的 torch.cuda.empty_cache()）：已保留降到已分配。";
    AllocatedShort => "allocated", "已分配";
    ReservedShort => "reserved", "已保留";
    BudgetShort => "budget", "预算";
    RoleParameters => "Parameters", "参数";
    RoleGradients => "Gradients", "梯度";
    RoleOptimizer => "Optimizer state", "优化器状态";
    RoleActivations => "Activations", "激活值";
    RoleInputs => "Inputs", "输入";
    RoleWorkspace => "Workspace", "工作区";
    RoleInternal => "BatchScope's own", "BatchScope 自用";
    Estimator => "Estimated for these settings (the same on the CPU and the GPU)", "按当前设置估算（CPU 与 GPU 相同）";
    EstimatorTip => "The formulas behind each role. For BatchScope's MLPs they predict the measured figures exactly (the tests check it).", "每个用途背后的公式。对 BatchScope 的多层感知机，它们与实测值完全一致（测试会检查）。";
    SweepTitle => "Estimated memory by batch size: activations grow with the batch, parameters do not", "按批大小估算的内存：激活值随批增长，参数不变";
    LargeModels => "Estimated: large models, before activations", "估算：大模型（不含激活值）";
    LargeModelsTip => "Parameters, gradients and optimizer state only, 16 bytes per parameter with Adam in FP32 (4 + 4 + 8) or in mixed precision (2 + 2 + 12, as the ZeRO paper counts). Activations depend on batch, sequence length and checkpointing.", "只含参数、梯度和优化器状态：FP32 下 Adam 每个参数 16 字节（4 + 4 + 8），混合精度下也是 16 字节（2 + 2 + 12，按 ZeRO 论文计算）。激活值取决于批大小、序列长度和检查点策略。";
    PresetLine => "{params} parameters: {fp32} (FP32 + Adam), {mixed} (mixed + Adam) — estimated", "{params} 个参数：{fp32}（FP32 + Adam），{mixed}（混合精度 + Adam）——估算";
    MemorySettings => "Memory", "内存";
    PrecisionSetting => "Precision", "精度";
    PrecisionTip => "The number format training stores its values in. FP16 and BF16 store every value in 2 bytes (the same bits on CPU and GPU); each kernel widens them to f32, computes, and rounds its result back, as PyTorch's kernels do. Mixed: FP32 master weights, FP16 activations and weight copies, the loss scaled so small gradients survive.", "训练存储数值所用的格式。FP16 和 BF16 的每个值都以 2 字节存储（CPU 和 GPU 上位级一致）；每个内核先把它们扩展为 f32 计算，再把结果舍入回去，与 PyTorch 的内核相同。混合精度：FP32 主权重，FP16 激活值和权重副本，并放大损失以免小梯度丢失。";
    StoredComputed => "16-bit storage, f32 arithmetic", "16 位存储，f32 运算";
    MixedPrecision => "mixed FP16", "混合 FP16";
    PrecisionStorage => "16-bit tensors take 2 bytes a value here, for real. The kernels compute in f32, so four f32 working copies as large as the largest 16-bit tensor appear under workspace; mixed precision keeps FP32 masters, gradients and optimizer state and adds FP16 weight copies, so it saves activation memory, not parameter memory.", "这里的 16 位张量确实每个值只占 2 字节。内核以 f32 计算，因此工作区中会出现四个与最大 16 位张量一样大的 f32 工作副本；混合精度保留 FP32 主权重、梯度和优化器状态，并增加 FP16 权重副本，所以它节省的是激活值内存，而不是参数内存。";
    KeepGraphs => "Keep every step's graph (leak)", "保留每一步的计算图（泄漏）";
    KeepGraphsTip => "As appending loss (not loss.item()) to a list each step does in PyTorch: every step's activations stay alive, memory climbs until it runs out. Turn it off to free them. Without a budget, 1 GiB applies while it is on.", "就像在 PyTorch 里每步把 loss（而不是 loss.item()）追加到列表中：每一步的激活值都保留下来，内存不断增长直到耗尽。关闭即可释放。未设预算时，开启期间使用 1 GiB 的预算。";
    VramBudget => "VRAM budget", "显存预算";
    HostBudget => "Host budget", "主机内存预算";
    BudgetTip => "An allocation past the budget fails with an out-of-memory error, as on a smaller GPU. Off: only the device's own limits.", "超过预算的分配会报内存不足错误，就像在更小的 GPU 上一样。关闭：只受设备本身的限制。";
    NoTimedSteps => "No step with timed kernels yet: kernel timing is sampled here (see Time GPU kernels in the setup).", "还没有内核被计时的步骤：这里的内核计时是抽样的（见设置中的“GPU 内核计时”）。";
    KernelsNotTimed => "kernels not timed in this step (sampled)", "本步内核未计时（抽样）";
    KernelSampling => "Time GPU kernels", "GPU 内核计时";
    KernelSamplingTip => "Timing every kernel with timestamp queries is usually cheap on a hardware GPU, but on a software adapter each timestamp costs about 12 µs (measured on lavapipe), a third of a small step. Timing is sampled by whole stretches between two syncs, so a timed step has all of its kernels timed. Automatic: always on a GPU, one stretch in 16 on a software adapter. Steps without kernel times are left out of the breakdown and the advice.", "用时间戳查询给每个内核计时在硬件 GPU 上通常开销很小，但在软件适配器上每个时间戳约需 12 微秒（在 lavapipe 上实测），相当于小模型一步时间的三分之一。计时按两次同步之间的整段抽样，因此被计时的步骤其所有内核都有时间。自动：GPU 上始终计时，软件适配器上每 16 段计时一段。没有内核时间的步骤不计入时间分解和建议。";
    SamplingAuto => "automatic", "自动";
    SamplingEvery => "every step", "每步";
    SamplingOneIn => "one stretch between syncs in {n}", "每 {n} 个同步区间计时一个";
    PrecisionTab => "Precision", "精度";
    PrecisionIntro => "What FP16, BF16 and mixed precision do to the values a model stores: each device's weights, activations and gradients by power of two, against the range of FP16 (shaded: lost to zero, subnormal with fewer bits, lost to infinity) and BF16. Switch the precision in the setup and press Reset to see them change.", "FP16、BF16 和混合精度对模型所存数值的影响：按 2 的幂显示每个设备的权重、激活值和梯度，并对照 FP16 的范围（阴影：舍入为 0、精度较低的次正规数、溢出为无穷大）和 BF16 的范围。在设置中切换精度并按“重置”即可看到变化。";
    PrecisionSpeed => "Speed: 16-bit values here take half the memory but are not faster. Every kernel computes in f32, widening its 16-bit operands and rounding its results, as PyTorch's kernels do; no 16-bit arithmetic units are used (this CPU has no native BF16 arithmetic, and WGSL's f16 is not used so that both devices give the same bits). The comparison's step times and `batchscope bench --precision` show the measured cost.", "速度：这里的 16 位数值只占一半内存，但不会更快。每个内核都以 f32 计算：先把 16 位操作数扩展为 f32，再把结果舍入回去，与 PyTorch 的内核相同；没有用到任何 16 位运算单元（这台 CPU 没有原生 BF16 运算，也没有使用 WGSL 的 f16，以便两个设备得到相同的位）。对比中的每步时间和 `batchscope bench --precision` 给出实测代价。";
    CompareTitle => "The same run in every format", "同一次训练，各种格式";
    CompareRun => "Compare formats ({steps} steps each, CPU)", "对比各格式（每种 {steps} 步，CPU）";
    CompareStop => "Stop the comparison", "停止对比";
    CompareTip => "Trains the applied settings in FP32, FP16, BF16 and mixed precision, one after the other on the CPU (off the training threads), with the same data and seed, and overlays their losses.", "在 CPU 上（不占用训练线程）依次用 FP32、FP16、BF16 和混合精度训练已应用的设置，数据和种子相同，并叠加显示它们的损失。";
    CompareCaption => "Measured in this run on the CPU: {steps} steps each, seed {seed}, batch {batch}, {optimizer}, loss weight {weight}. Step times share the CPU with the columns while they train.", "本次在 CPU 上实测：每种 {steps} 步，种子 {seed}，批大小 {batch}，{optimizer}，损失权重 {weight}。各列训练时，每步时间与它们共用 CPU。";
    Format => "Format", "格式";
    FinalLoss => "Final loss", "最终损失";
    GradientsLost => "Gradient values lost to 0", "梯度值舍入为 0";
    CpuStepTime => "Step time (CPU)", "每步时间（CPU）";
    LossScaleShort => "Loss scale", "损失缩放";
    Diverged => "diverged", "发散";
    ScaleSkipped => "{scale}, {skipped} skipped", "{scale}，跳过 {skipped} 步";
    NoValuesYet => "No values yet: train a few steps.", "还没有数值：先训练几步。";
    ValuesAtStep => "Values at step {step}, as stored", "第 {step} 步的数值（按存储格式）";
    Weights => "Weights", "权重";
    ActivationsWord => "Activations", "激活值";
    GradientsWord => "Gradients", "梯度";
    HistogramCaption => "{name} ({dtype}): {zeros} exactly 0, non-zero from {range}", "{name}（{dtype}）：{zeros} 恰为 0，非零值范围 {range}";
    WouldLose => "Stored in FP16 they would lose {z16} to 0 and {i16} to ∞; in BF16 {zb} and {ib}", "若以 FP16 存储，将有 {z16} 变为 0、{i16} 变为 ∞；BF16 为 {zb} 和 {ib}";
    WouldLoseTip => "Computed from the values as they are now (share of the non-zero values). Values already stored in 16 bits lose nothing more: what storing them lost is counted below.", "根据当前数值计算（占非零值的比例）。已经以 16 位存储的数值不会再有损失：存储时的损失在下方统计。";
    ShaderF16Unused => "The adapter has WGSL f16 (SHADER_F16); BatchScope does not use it: WGSL leaves the rounding of f32 → f16 to the implementation, so it rounds with integer arithmetic instead, bit for bit as the CPU does.", "此适配器支持 WGSL f16（SHADER_F16）；BatchScope 没有使用：WGSL 把 f32 → f16 的舍入交给实现决定，所以这里改用整数运算舍入，与 CPU 逐位一致。";
    ShaderF16Absent => "The adapter has no WGSL f16 (SHADER_F16); the rounding is integer arithmetic, bit for bit as the CPU does.", "此适配器不支持 WGSL f16（SHADER_F16）；舍入用整数运算完成，与 CPU 逐位一致。";
    AxisFloor => "(values below 2^{floor} are in the first bar)", "（小于 2^{floor} 的值计入第一根柱）";
    NonFinite => "{count} values are NaN or infinite", "{count} 个值为 NaN 或无穷大";
    StoredF32 => "stored as FP32, 4 bytes", "以 FP32 存储，4 字节";
    StoredF16 => "stored as FP16, 2 bytes", "以 FP16 存储，2 字节";
    StoredBf16 => "stored as BF16, 2 bytes", "以 BF16 存储，2 字节";
    RoundingLost => "Measured since Reset: of {gcount} non-zero gradient values stored in 16 bits, {gzero} became 0 and {ginf} became ∞; of the activations, {azero} became 0 and {ainf} ∞.", "自重置以来实测：以 16 位存储的 {gcount} 个非零梯度值中，{gzero} 变为 0，{ginf} 变为 ∞；激活值中 {azero} 变为 0，{ainf} 变为 ∞。";
    RoundingLostTip => "Counted by the kernels that round results into 16 bits (and by the host for uploads), value by value. Gradients here include the gradients of each layer's output, where small values are lost first; in mixed precision they are counted after loss scaling.", "由把结果舍入为 16 位的内核（以及上传时的主机）逐值统计。这里的梯度包括每层输出的梯度，小数值最先在这里丢失；混合精度下统计的是损失缩放之后的值。";
    ScaleNow => "Loss scale now {scale}; {skipped} updates skipped", "当前损失缩放 {scale}；已跳过 {skipped} 次更新";
    ScaleTip => "GradScaler's rule: start at 65536; a gradient that overflows FP16 skips the update and halves the scale; 2000 steps without overflow double it. Red points: reports in which updates were skipped.", "GradScaler 的规则：从 65536 开始；梯度溢出 FP16 时跳过本次更新并把缩放减半；连续 2000 步无溢出则加倍。红点：有更新被跳过的记录点。";
    SkippedSteps => "skipped updates", "跳过的更新";
    BytesTitle => "Bytes per role in each format (estimated for the set-up model)", "各格式下每种用途的字节数（按当前设置的模型估算）";
    BytesTip => "From the estimator, which equals the measured bytes for BatchScope's models (see Memory and tests/memory.rs). 16-bit formats halve what they store; mixed precision halves the activations but adds FP16 weight copies to FP32 masters; the f32 working copies of the kernels count as workspace.", "来自估算器，对 BatchScope 的模型它与实测字节数一致（见“内存”和 tests/memory.rs）。16 位格式把所存数据减半；混合精度把激活值减半，但在 FP32 主权重之外增加 FP16 权重副本；内核的 f32 工作副本计入工作区。";
    Total => "Total", "合计";
    LossWeight => "Loss weight", "损失权重";
    LossWeightTip => "Multiplies the loss, and so every gradient, before backward. 1e-6 makes the designed case of tiny gradients: FP16 loses them to zero and does not train, mixed precision's loss scaling saves them, BF16 keeps them without scaling. Adam's steps do not depend on the gradients' size, so FP32 trains as before. Applied on Reset.", "在反向传播之前把损失（因此也把每个梯度）乘以该值。1e-6 构成“极小梯度”的设计案例：FP16 会把它们舍入为 0 而无法训练，混合精度的损失缩放可以保住它们，BF16 无需缩放即可保留。Adam 的步长与梯度大小无关，所以 FP32 照常训练。按“重置”后生效。";
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
