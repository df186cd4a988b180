//! The translation table's part for the backends' errors: out of memory, a diverged loss, a
//! buffer too large, a GPU that is missing or failed. The core builds them as [`super::Said`]
//! messages; the window shows the reader's language, the command line English.

super::lang::strings! { ErrKey {
    DeviceMismatch => "expected all tensors on the same device, found {expected} and {found} (in {op})", "所有张量应在同一设备上，却发现了 {expected} 和 {found}（在 {op} 中）";
    Shape => "shape mismatch in {op}: {detail}", "{op} 中形状不匹配：{detail}";
    BufferTooLarge => "this model needs a buffer of {bytes} ({what}), more than the {limit} this GPU can bind in one kernel: use fewer features or narrower layers, or a smaller batch", "这个模型需要一个 {bytes} 的缓冲区（{what}），超过了这块 GPU 在一个内核中能绑定的 {limit}：请减少特征、收窄层，或减小批次";
    GpuError => "GPU error: {detail}", "GPU 错误：{detail}";
    Diverged => "the loss became {loss} by step {step}: the updates grew without bound. The usual cause is a learning rate too high for this model ({lr}): lower it (to {lower}, say) and train again", "到第 {step} 步时损失变成了 {loss}：更新量无限增长。通常的原因是学习率对这个模型太高（{lr}）：把它降低（比如降到 {lower}）再训练";
    DivergedFp16Adam => "the loss became {loss} by step {step}: the updates grew without bound. In pure FP16 with Adam the usual cause is not the learning rate ({lr}) but FP16's range: Adam's second moment, the squares of small gradients, falls below FP16's smallest value and becomes 0, and dividing by it turns small steps into huge ones. Train in mixed precision (FP32 master weights and moments) or BF16 (FP32's range); a lower learning rate ({lower}, say) may avoid it, but learns more slowly", "到第 {step} 步时损失变成了 {loss}：更新量无限增长。在纯 FP16 下使用 Adam 时，通常的原因不是学习率（{lr}），而是 FP16 的数值范围：Adam 的二阶矩（小梯度的平方）低于 FP16 能表示的最小值而变成 0，除以它会把小步长变成巨大的步长。请用混合精度（FP32 主权重和动量）或 BF16（与 FP32 相同的范围）训练；更低的学习率（比如 {lower}）也许能避开，但学得更慢";
    OomLead => "{device} out of memory: tried to allocate {requested} for `{label}` ({role}); the budget is {budget}, of which {allocated} is allocated by tensors", "{device} 内存不足：试图为 `{label}`（{role}）分配 {requested}；预算为 {budget}，其中张量已分配 {allocated}";
    OomReserved => " and {reserved} reserved in all (the pool's cached blocks were given back first)", "，总共保留 {reserved}（内存池缓存的块已先行归还）";
    OomAdviceNone => ". Try a smaller batch size or fewer or narrower layers", "。请尝试更小的批次大小，或更少、更窄的层";
    OomAdviceNoBatch => ". No batch size fits: even at batch size 1 the estimator puts the run at {estimated} (estimated), more than the budget. Use fewer or narrower layers, or a budget above {estimated}", "。没有哪个批次大小放得下：即使批次大小为 1，估算器也算出本次运行需要 {estimated}（估算值），超过预算。请使用更少或更窄的层，或高于 {estimated} 的预算";
    OomGraphTail => "; turn off \"keep every step's graph\" if it is on", "；如果开着“保留每一步的计算图”，请关掉它";
    RoleParameters => "parameters", "参数";
    RoleGradients => "gradients", "梯度";
    RoleOptimizerState => "optimizer state", "优化器状态";
    RoleActivations => "activations", "激活值";
    RoleInputs => "inputs", "输入";
    RoleWorkspace => "workspace", "工作区";
    RoleInternal => "internal", "内部";
    NoGpuFlag => "started with --no-gpu", "启动时带了 --no-gpu";
    NoTrainingThread => "cannot start the training thread: {why}", "无法启动训练线程：{why}";
    NoSweepThread => "cannot start the sweep's thread: {why}", "无法启动扫描的线程：{why}";
    NoCalibrationThread => "cannot start the calibration's thread: {why}", "无法启动校准的线程：{why}";
    NoMeasurementThread => "cannot start the measurement's thread: {why}", "无法启动测量的线程：{why}";
    NoComparisonThread => "cannot start the comparison's thread: {why}", "无法启动比较的线程：{why}";
    NoLessonThread => "cannot start the lesson's thread: {why}", "无法启动课程的线程：{why}";
    LessonThreadEnded => "the lesson's thread ended without a result", "课程的线程结束了，却没有给出结果";
    NoAdapter => "No GPU adapter with compute shaders was found ({detail}). Install or update the GPU's Vulkan, Metal or DX12 driver; on Debian or Ubuntu without a GPU, `sudo apt-get install mesa-vulkan-drivers` adds the lavapipe software adapter (real GPU code, run by the CPU).", "没有找到支持计算着色器的 GPU 适配器（{detail}）。请安装或更新 GPU 的 Vulkan、Metal 或 DX12 驱动；在没有 GPU 的 Debian 或 Ubuntu 上，`sudo apt-get install mesa-vulkan-drivers` 会加上 lavapipe 软件适配器（真正的 GPU 代码，由 CPU 执行）。";
    NoComputeShaders => "{name} on {backend} cannot run the compute shaders", "{backend} 上的 {name} 无法运行计算着色器";
    NoneEnumerated => "none enumerated", "一个也没有列出";
    KernelsFailed => "The GPU kernels failed to compile on {name}: {detail}", "GPU 内核在 {name} 上编译失败：{detail}";
    AdapterRefused => "The adapter {name} refused to open a device: {detail}", "适配器 {name} 拒绝打开设备：{detail}";
    MeasurementDidNotRun => "the measurement did not run", "测量没有运行";
    CpuOnlySetting => "{setting} applies to the CPU only", "{setting} 只适用于 CPU";
    MismatchFailedOtherwise => "the op failed otherwise: {detail}", "这个运算以别的方式失败了：{detail}";
    MismatchRanAnyway => "the op ran with its batch on the other device: a defect", "批次在另一台设备上，这个运算却照样运行了：这是一个缺陷";
    ProbeCancelled => "the measurement was cancelled", "测量已取消";
    ProbeDidNotRun => "the probe did not run", "这项测量没有运行";
    NoKernelsTimed => "no recorded step had its kernels timed", "记录的步骤中没有一步给内核计了时";
}}
