//! The translation table's part for a lesson file's mistakes, said to the teacher who wrote it:
//! which field, step or figure, and what it should be. Field names and values stay as written
//! in the file (they are the file's words).

super::lang::strings! { AuthorKey {
    NotALessonAt => "it does not read as a lesson file: line {line}, column {column}: {why} (near “{excerpt}”)", "它不能作为课程文件读取：第 {line} 行第 {column} 列：{why}（附近：“{excerpt}”）";
    InPreset => "preset: {why}", "预设：{why}";
    RatioOfText => "`{name}` is a name, not a number: a headline cannot divide by it", "`{name}` 是名称而不是数字：结论不能用它做除法";
    BadId => "id `{id}`: use 1 to 40 lower-case letters, digits and hyphens", "id `{id}`：请用 1 到 40 个小写字母、数字和连字符";
    StepCount => "{n} steps: a lesson has 1 to {max}", "{n} 个步骤：一门课有 1 到 {max} 个步骤";
    ProbeCount => "{n} probes: a lesson has at most {max}", "{n} 个测量：一门课最多 {max} 个测量";
    InProbe => "probe {n}: {why}", "第 {n} 个测量：{why}";
    SameProbeName => "probe {n}: another probe is named `{name}`; give each a `name`", "第 {n} 个测量：另一个测量也叫 `{name}`；请给每个测量一个 `name`";
    InTitle => "title or summary: {why}", "标题或简介：{why}";
    InStep => "step {n}: {why}", "第 {n} 步：{why}";
    BadProbeName => "name `{name}`: use 1 to 24 lower-case letters, digits and underscores", "name `{name}`：请用 1 到 24 个小写字母、数字和下划线";
    BadSweep => "`vary`: {why}", "`vary`：{why}";
    SweepNeedsVary => "a sweep needs `vary` (e.g. \"batch=16,256\") and no `profile`", "扫描需要 `vary`（例如 \"batch=16,256\"），且不要 `profile`";
    UnknownProfile => "profile `{id}`: choose one of {ids}", "profile `{id}`：请从 {ids} 中选择";
    SimulationNeedsProfile => "a simulation needs `profile` and no `vary`", "模拟需要 `profile`，且不要 `vary`";
    TakesNeither => "a {kind} probe takes neither `vary` nor `profile`", "{kind} 测量既不接受 `vary` 也不接受 `profile`";
    EmptyText => "a text is empty in one language", "有一段文字在某种语言中为空";
    LongText => "a text is longer than {max} characters", "有一段文字超过 {max} 个字符";
    NotAFigure => "`{name}` is not a figure this lesson measures (its probes give: {known})", "`{name}` 不是这门课测量的数值（它的测量给出：{known}）";
    PredictNeedsFigure => "a prediction needs the `figure` its answer is read from", "预测需要给出读取答案的 `figure`";
    PredictChoices => "a prediction has 2 to 6 choices", "预测有 2 到 6 个选项";
    PredictBounds => "{choices} choices need {needed} bounds between them, not {given}", "{choices} 个选项之间需要 {needed} 个界限，而不是 {given} 个";
    BoundsOrder => "the bounds must be finite numbers in rising order", "界限必须是按升序排列的有限数";
    ExplainNeedsHeadline => "an explanation needs at least one headline", "解释至少需要一条结论";
    HeadlineFiguresDiffer => "a headline's English and Chinese name different figures: {en} and {zh}", "某条结论的英文和中文引用了不同的数值：{en} 和 {zh}";
    HeadlineMinMax => "a headline's `min` must be below its `max`", "结论的 `min` 必须小于 `max`";
    HeadlineCondition => "a headline's condition needs `figure` and `min` or `max`", "结论的条件需要 `figure` 以及 `min` 或 `max`";
    ConvergeOnly => "`epochs` and `target` belong to a converge probe, not a {kind} probe", "`epochs` 和 `target` 只用于 converge 测量，而不是 {kind} 测量";
    ConvergeRange => "`epochs` must be 1 to {max}, and `target` an accuracy from 0 to 1", "`epochs` 必须在 1 到 {max} 之间，`target` 必须是 0 到 1 之间的准确率";
    TryNeeds => "a try step needs `set` (the change), `figure` and `expect`", "尝试步骤需要 `set`（要做的改变）、`figure` 和 `expect`";
    BadPlaceholder => "`{text}`: a placeholder is a figure's name, or two names with / between", "`{text}`：占位符是一个数值的名称，或用 / 隔开的两个名称";
    CloseWithoutOpen => "a closing brace without its opening one in \"{text}\"", "\"{text}\" 中有右花括号却没有对应的左花括号";
    OpenWithoutClose => "an opening brace without its closing one in \"{text}\"", "\"{text}\" 中有左花括号却没有对应的右花括号";
    BraceInside => "an opening brace inside a placeholder in \"{text}\"", "\"{text}\" 的占位符里又有一个左花括号";
    BadDataset => "dataset `{name}`: choose a generator ({generators}) or a shipped set ({sets})", "dataset `{name}`：请选择一个生成器（{generators}）或一个自带数据集（{sets}）";
    BadActivation => "activation `{name}`: choose relu, tanh or sigmoid", "activation `{name}`：请选择 relu、tanh 或 sigmoid";
    BadModel => "model `{name}`: choose one of the presets ({presets})", "model `{name}`：请选择一个预设模型（{presets}）";
    BadOptimizer => "optimizer `{name}`: choose sgd, momentum, adam or adamw", "optimizer `{name}`：请选择 sgd、momentum、adam 或 adamw";
    BadPrecision => "precision `{name}`: choose fp32, fp16, bf16 or mixed", "precision `{name}`：请选择 fp32、fp16、bf16 或 mixed";
    BadSyncEvery => "sync_every `{text}`: give auto or a number of steps", "sync_every `{text}`：请填 auto 或步数";
    TryWithoutParts => "a try step without its figure, change or expectation", "尝试步骤缺少数值、改变或预期";
    NoProbeNamed => "no probe is named `{name}`", "没有名为 `{name}` 的测量";
    NoShippedSet => "no shipped set `{name}`", "没有名为 `{name}` 的自带数据集";
    NoProfile => "no hardware profile `{id}`", "没有名为 `{id}` 的硬件配置";
}}
