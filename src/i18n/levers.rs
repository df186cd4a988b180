//! The translation table's part for the article's remaining levers: gradient accumulation,
//! activation checkpointing and energy.

super::lang::strings! { LeverKey {
    FormulaSums => " + a running sum of as many, for {n} micro-batches an update", " + 同样大小的累加和，每次更新累积 {n} 个微批次";
    OomAdviceAccumulate => ". {n} micro-batches of {micro} would fit: the estimator puts the run at {estimated} there (estimated), and their update is the same as one batch of {batch} (--batch {micro} --accumulate {n}). A batch of {micro} alone fits too, with noisier updates", "。{n} 个大小为 {micro} 的微批次放得下：估算器算出那时本次运行需要 {estimated}（估算值），它们的更新与一个大小为 {batch} 的批次相同（--batch {micro} --accumulate {n}）。单独用大小为 {micro} 的批次也放得下，但更新的噪声更大";
    Accumulate => "Accumulate", "梯度累积";
    AccumulateTip => "Micro-batches summed before each update (gradient accumulation). The update is the same as one batch this many times larger, while memory holds one micro-batch's activations and a running sum of the gradients: how a batch that does not fit still trains. Applied on Reset.", "每次更新前累加的微批次数（梯度累积）。更新与一个大这么多倍的批次相同，而内存只需容纳一个微批次的激活值和一份梯度累加和：放不下的批次也能这样训练。按“重置”后生效。";
    BadAccumulate => "accumulate {value}: choose between 1 and {max} micro-batches an update (an update's rows are at most the training rows)", "梯度累积 {value}：请选择 1 到 {max} 个微批次（一次更新的行数不能超过训练数据的行数）";
    EffectiveBatch => "batch {batch} = {n} × {micro}", "批次 {batch} = {n} × {micro}";
}}
