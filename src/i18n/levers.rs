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
    OpRecomputed => "{op}, again (checkpointing)", "{op}（检查点，重新计算）";
    CheckpointOff => "off", "关";
    CheckpointTip => "Activation checkpointing: the forward pass keeps only the output at the end of every this many blocks (a transformer block, a convolution with its pooling, a dense layer) and the backward pass computes the rest again, one segment at a time. Activations shrink, each step does part of its forward pass twice. Applied on Reset.", "激活检查点：前向传播只保留每隔这么多个块（一个 Transformer 块、一个卷积及其池化、一个全连接层）末尾的输出，其余的在反向传播时逐段重新计算。激活值变小，每一步的前向传播有一部分要做两遍。按“重置”后生效。";
    CheckpointBlocks => "segments of {n} block(s): each keeps its last output, the rest is computed again", "每段 {n} 个块：每段只保留最后的输出，其余重新计算";
    BadCheckpoint => "checkpoint {value}: choose between 0 (off) and {max} blocks a segment", "检查点 {value}：请选择 0（关闭）到 {max} 个块一段";
    FormulaCheckpointed => "checkpointed in {segments} segments: {kept} values kept + one segment's {work} values computed again, {bytes} bytes each ({stats} bytes in f32 statistics)", "分成 {segments} 段做检查点：保留 {kept} 个值 + 一段重新计算的 {work} 个值，每个 {bytes} 字节（其中 f32 统计量 {stats} 字节）";
}}
