//! The translation table's part for a calibration's trust: whether the machine held still
//! while it measured.

super::lang::strings! { CalKey {
    Unsteady => "Calibrated while this machine's speed moved: its FMA peak on every kernel thread was {before} GFLOP/s before the probes, {lowest} at its lowest and {after} after ({change}). Something else probably ran meanwhile (or the machine slowed itself: power saving, heat, a shared virtual machine), so predictions from this profile may be off: calibrate again while the machine is quiet.", "校准期间本机速度发生了变化：探测前所有内核线程的 FMA 峰值为 {before} GFLOP/s，期间最低 {lowest}，探测后为 {after}（{change}）。期间可能有其他程序在运行（或机器自身降速：节能、发热、共享的虚拟机），因此用这个配置做的预测可能不准：请在机器空闲时重新校准。";
    Steady => "The machine held still while it was calibrated: FMA peak on every kernel thread {before} GFLOP/s before the probes, {lowest} at its lowest, {after} after ({change} at most).", "校准期间机器保持稳定：探测前所有内核线程的 FMA 峰值 {before} GFLOP/s，期间最低 {lowest}，探测后 {after}（最大变化 {change}）。";
    GridChecked => "Grid check of this profile, {taken} UTC: {n} training steps predicted and measured on this machine, median error {median}, worst {worst}× off, {off} off by more than 2×.", "此配置的网格检验（{taken} UTC）：在本机预测并实测了 {n} 个训练步，误差中位数 {median}，最差偏差 {worst}×，{off} 个偏差超过 2×。";
    GridUnsteady => "This machine's speed moved during the check ({before} GFLOP/s before it, {lowest} at its lowest, {after} after: {change}), so its errors measure that too: check again while the machine is quiet.", "检验期间本机速度发生了变化（检验前 {before} GFLOP/s，期间最低 {lowest}，检验后 {after}：{change}），因此这些误差也包含了这一变化：请在机器空闲时重新检验。";
    ProbingGrid => "the model on its grid of training steps ({done} of {of})", "在训练步网格上检验模型（第 {done} 个，共 {of} 个）";
}}
