//! The translation table's part for what the core says: the estimator's formulas, the loaders'
//! reasons and notes, the backends' errors. The core builds these as [`super::Said`] messages,
//! in both languages at once; the window shows the reader's, the command line English.

super::lang::strings! { MsgKey {
    ListSeparator => ", ", "，";
    OptimizerSgd => "SGD", "SGD";
    OptimizerMomentum => "momentum", "动量法";
    OptimizerAdam => "Adam", "Adam";
    OptimizerAdamW => "AdamW", "AdamW";
    FormulaParameters => "{p} parameters × {bytes} B", "{p} 个参数 × {bytes} B";
    FormulaCopies => " + FP16 copies {p} × 2 B", " + FP16 副本 {p} × 2 B";
    FormulaGradients => "one gradient per parameter: {p} × {bytes} B", "每个参数一个梯度：{p} × {bytes} B";
    FormulaOptimizer => "{states} value(s) per parameter for {optimizer}: {states} × {p} × {bytes} B", "{optimizer} 每个参数 {states} 个值：{states} × {p} × {bytes} B";
    FormulaActivations => "batch {b} × layer outputs ({widths}) × {bytes} B", "批次 {b} × 各层输出（{widths}）× {bytes} B";
    FormulaSavedProbs => " + batch {b} × {n} attention probabilities × {bytes} B", " + 批次 {b} × {n} 个注意力概率 × {bytes} B";
    FormulaSavedStats => " + batch {b} × {n} statistics kept for backward × 4 B", " + 批次 {b} × 为反向传播保留的 {n} 个统计量 × 4 B";
    FormulaInputs => "batch {b} × ({features} features × {bytes} B + {targets} target × 4 B)", "批次 {b} × （{features} 个特征 × {bytes} B + {targets} 个目标值 × 4 B）";
    FormulaWorkspace => "backward temporaries {b} × ({widths}) × {bytes} B{extra} + evaluation {rows} rows × {per_row} values × 4 B + 3 loss statistics × 4 B{working}", "反向传播临时量 {b} × （{widths}）× {bytes} B{extra} + 评估 {rows} 行 × {per_row} 个值 × 4 B + 3 个损失统计量 × 4 B{working}";
    FormulaNoPatches => " (convolved from the images: no patches)", "（直接在图像上卷积，不展开图块）";
    FormulaInputGradient => " + the input's gradient {b} × {n} × {bytes} B (a first LayerNorm writes it)", " + 输入的梯度 {b} × {n} × {bytes} B（由第一层 LayerNorm 写出）";
    FormulaWorking => " + 4 f32 working copies of {n} values", " + 4 份 {n} 个值的 f32 工作副本";
    FormulaFp32 => "{n} × 4 B (FP32)", "{n} × 4 B（FP32）";
    FormulaAdamMoments => "{n} × (4 + 4) B: Adam's two FP32 moments", "{n} × (4 + 4) B：Adam 的两个 FP32 动量";
    FormulaFp16Copy => "{n} × 2 B (FP16 copy used in forward and backward)", "{n} × 2 B（前向与反向使用的 FP16 副本）";
    FormulaFp16 => "{n} × 2 B (FP16)", "{n} × 2 B（FP16）";
    FormulaMasterAndMoments => "{n} × (4 + 4 + 4) B: FP32 master weights and Adam's moments", "{n} × (4 + 4 + 4) B：FP32 主权重与 Adam 的动量";
}}

super::lang::strings! { SpanKey {
    WaitForBatch => "wait for batch", "等待批次";
    StorageRead => "storage read (simulated delay)", "存储读取（模拟延迟）";
    DecodeCopy => "decode (copy f32 samples)", "解码（复制 f32 样本）";
    DecodeInflate => "decode (inflate samples)", "解码（解压样本）";
    Augment => "augment", "数据增强";
    Collate => "collate", "拼成批次";
    Forward => "forward", "前向传播";
    Backward => "backward", "反向传播";
    OptimizerUpdate => "optimizer update", "优化器更新";
    RecordForward => "record forward", "记录前向命令";
    RecordBackward => "record backward", "记录反向命令";
    RecordOptimizerUpdate => "record optimizer update", "记录优化器更新命令";
    CopyIntoTensor => "copy into tensor (RAM)", "复制进张量（内存）";
    CopyToHost => "copy to host (RAM)", "复制回主机（内存）";
    WaitForStaging => "wait for a free staging buffer", "等待空闲的暂存缓冲区";
    CopyIntoStaging => "copy into mapped staging buffer", "复制进已映射的暂存缓冲区";
    WaitForGpu => "wait for the GPU (map_async + poll)", "等待 GPU（map_async + poll）";
    CopyMappedToHost => "copy mapped buffer to host", "把已映射的缓冲区复制回主机";
    WaitForTimestamps => "wait for the GPU (timestamp buffer full, tracing)", "等待 GPU（时间戳缓冲区已满，追踪时）";
    WriteBuffer => "queue.write_buffer (into wgpu's staging)", "queue.write_buffer（写入 wgpu 的暂存区）";
    ClockCalibration => "clock calibration (tracing)", "时钟校准（追踪时）";
    ReadTimestamps => "read kernel timestamps (tracing)", "读取内核时间戳（追踪时）";
    GpuWorkObserved => "GPU work (host-observed)", "GPU 工作（主机观测）";
    UploadBatch => "upload batch", "上传批次";
}}

impl SpanKey {
    /// The key whose English text is `name`, a span's name as the core records it; `None` for
    /// kernels and API calls, which keep their code names.
    pub fn of(name: &str) -> Option<SpanKey> {
        use super::lang::{Lang, Translated as _};
        SpanKey::ALL
            .iter()
            .copied()
            .find(|k| k.text(Lang::En) == name)
    }
}
