//! The translation table's part for the article's remaining levers: gradient accumulation,
//! activation checkpointing and energy.

super::lang::strings! { LeverKey {
    FormulaSums => " + a running sum of as many, for {n} micro-batches an update", " + 同样大小的累加和，每次更新累积 {n} 个微批次";
    OomAdviceAccumulate => ". {n} micro-batches of {micro} would fit: the estimator puts the run at {estimated} there (estimated), and their update is the same as one batch of {batch} (--batch {micro} --accumulate {n}). A batch of {micro} alone fits too, with noisier updates", "。{n} 个大小为 {micro} 的微批次放得下：估算器算出那时本次运行需要 {estimated}（估算值），它们的更新与一个大小为 {batch} 的批次相同（--batch {micro} --accumulate {n}）。单独用大小为 {micro} 的批次也放得下，但更新的噪声更大";
    Accumulate => "Accumulate", "梯度累积";
    AccumulateTip => "Micro-batches summed before each update (gradient accumulation). The update is the same as one batch this many times larger, while memory holds one micro-batch's activations and a running sum of the gradients: how a batch that does not fit still trains. Applied on Reset.", "每次更新前累加的微批次数（梯度累积）。更新与一个大这么多倍的批次相同，而内存只需容纳一个微批次的激活值和一份梯度累加和：放不下的批次也能这样训练。按“重置”后生效。";
    BadAccumulate => "accumulate {value}: choose between 1 and {max} micro-batches an update (an update's rows are at most the training rows)", "梯度累积 {value}：请选择 1 到 {max} 个微批次（一次更新的行数不能超过训练数据的行数）";
    EffectiveBatch => "batch {batch} = {n} × {micro}", "批次 {batch} = {n} × {micro}";
    Checkpoint => "Checkpoint every", "检查点间隔";
    EnergyPerStep => "Energy a step", "每步能耗";
    EnergyPerStepTip => "Joules the device used for one step (an update, with all its micro-batches) over the last interval: read from the CPU package's RAPL counters or the NVIDIA board's NVML counter where the system allows it, else estimated from a rated power in the hardware profiles times the time the device was busy. The article's ninth section: judge a device by its power too.", "设备在最近一段时间里每一步（一次更新，含其全部微批次）消耗的焦耳数：系统允许时读取 CPU 封装的 RAPL 计数器或 NVIDIA 显卡的 NVML 计数器，否则用硬件配置中的额定功率乘以设备忙碌的时间来估算。文章第九节：评判设备也要看功耗。";
    SamplesPerJoule => "Samples per joule", "每焦耳样本数";
    EnergySoFar => "Energy so far", "累计能耗";
    EnergyEstimated => "{joules} (estimated)", "{joules}（估算）";
    EnergyMeasured => "{joules} (measured, {source})", "{joules}（实测，{source}）";
    EnergyEstimatedTip => "Estimated, not measured: {watts} W rated power × the time the device was busy. No energy counter can be read here.", "估算值，并非实测：额定功率 {watts} W × 设备忙碌的时间。此处无法读取能耗计数器。";
    EnergyStandIn => " This CPU is not in the hardware profiles: a listed CPU's power per core stands in.", "此 CPU 不在硬件配置中：用已列出 CPU 的每核功率代替。";
    EnergyMeasuredTip => "Measured by the {source} counter over the interval.", "由 {source} 计数器在这段时间内实测。";
    OpRecomputed => "{op}, again (checkpointing)", "{op}（检查点，重新计算）";
    CheckpointOff => "off", "关";
    CheckpointTip => "Activation checkpointing: the forward pass keeps only the output at the end of every this many blocks (a transformer block, a convolution with its pooling, a dense layer) and the backward pass computes the rest again, one segment at a time. Activations shrink, each step does part of its forward pass twice. Applied on Reset.", "激活检查点：前向传播只保留每隔这么多个块（一个 Transformer 块、一个卷积及其池化、一个全连接层）末尾的输出，其余的在反向传播时逐段重新计算。激活值变小，每一步的前向传播有一部分要做两遍。按“重置”后生效。";
    CheckpointBlocks => "segments of {n} block(s): each keeps its last output, the rest is computed again", "每段 {n} 个块：每段只保留最后的输出，其余重新计算";
    BadCheckpoint => "checkpoint {value}: choose between 0 (off) and {max} blocks a segment", "检查点 {value}：请选择 0（关闭）到 {max} 个块一段";
    FormulaCheckpointed => "checkpointed in {segments} segments: {kept} values kept + one segment's {work} values computed again, {bytes} bytes each ({stats} bytes in f32 statistics)", "分成 {segments} 段做检查点：保留 {kept} 个值 + 一段重新计算的 {work} 个值，每个 {bytes} 字节（其中 f32 统计量 {stats} 字节）";
}}
