//! The translation table's part for the guided lessons and presenter mode. (The lessons' own
//! texts are in their files under `assets/lessons/`, both languages side by side.)

super::lang::strings! { LessonKey {
    SamplesPerSecondUnit => "samples/s", "样本/秒";
    SimulatedMark => " (simulated)", "（模拟）";
    NotMeasuredHere => "This machine could not measure what this step needs ({names}); nothing is shown in its place.", "本机无法测得这一步所需的数值（{names}），因此不显示任何替代数字。";
    PredictRight => "Your prediction matched the measurement.", "你的预测与实测一致。";
    PredictWrong => "The measurement says otherwise: {answer}.", "实测结果不同：{answer}。";
    TryAsExpected => "{figure}: {before} → {after}, as the lesson expected.", "{figure}：{before} → {after}，与课程预期一致。";
    TryOtherwise => "{figure}: {before} → {after}, not as the lesson expected: on this machine the effect did not show.", "{figure}：{before} → {after}，与课程预期不同：在本机上没有体现出这一效果。";
    Lessons => "Lessons", "课程";
    LessonsTip => "Guided lessons: each predicts, measures on this machine, and explains with this run's figures. Keys: → or Space next, ← back.", "引导式课程：每一课先预测，再在本机实测，最后用本次运行的数字解释。按键：→ 或空格下一步，← 上一步。";
    OpenLessonFile => "Open a lesson file…", "打开课程文件…";
    StepOf => "Step {n} of {total}", "第 {n} 步，共 {total} 步";
    NextStep => "Next →", "下一步 →";
    PreviousStep => "← Back", "← 上一步";
    CloseLesson => "Close the lesson", "关闭课程";
    KindPredict => "Predict", "预测";
    KindRun => "Set up and run", "设置并运行";
    KindWatch => "Watch", "观察";
    KindExplain => "Explain", "解释";
    KindTry => "Try", "动手试试";
    MeasuringLesson => "Measuring on this machine, one device at a time…", "正在本机测量，每次一种设备……";
    MeasureAgain => "Measure again", "重新测量";
    MeasureNow => "Set up and measure", "设置并测量";
    MeasuredDone => "Measured. The columns now train with the lesson's settings.", "测量完成。各列现在用本课的设置进行训练。";
    MeasureFailed => "The measurement could not run: {why}", "无法进行测量：{why}";
    MeasureNotes => "Not measured here: {notes}", "本机未测得：{notes}";
    NotMeasuredYet => "Nothing measured yet: go to the \"Set up and run\" step.", "尚未测量：请前往“设置并运行”这一步。";
    ChooseAnswer => "Choose an answer; the lesson's measurement will check it.", "选择一个答案；本课的测量会检验它。";
    AnswerFromSimulator => "(the right answer here comes from the simulator's prediction, not a measurement)", "（这里的正确答案来自模拟器的预测，而非实测）";
    ChangeToMake => "The change: {what}", "要做的修改：{what}";
    MakeChange => "Make the change", "替我修改";
    MakeChangeTip => "Puts the change into the setup and resets, as if you had made it yourself.", "把修改填入设置并重置，就像你亲手修改一样。";
    ChangeMade => "The setup has the change.", "设置中已包含这一修改。";
    MeasureChange => "Measure the change", "测量这一修改";
    MeasuringChange => "Measuring the change…", "正在测量这一修改……";
    LessonFinished => "End of the lesson. Choose another in Lessons.", "本课结束。可在“课程”中选择另一课。";
    ProgressMark => "{done}/{total}", "{done}/{total}";
    WatchHint => "Look at the highlighted part of the window.", "请看窗口中高亮的部分。";
    WatchNotShown => "The highlighted part is on the {tab} tab.", "高亮的部分在“{tab}”标签页上。";
    Presenter => "Presenter (F5)", "演示模式（F5）";
    PresenterTip => "For a projector: a larger UI (Ctrl+ and Ctrl− change it, and it is remembered), high contrast, the setup hidden, large lesson text. Keys: → / Page Down next step, ← / Page Up back, B blank screen, F full screen, Esc or F5 to leave.", "用于投影：更大的界面（Ctrl+ 和 Ctrl− 可调整，并会记住）、高对比度、隐藏设置、较大的课程文字。按键：→ / Page Down 下一步，← / Page Up 上一步，B 黑屏，F 全屏，Esc 或 F5 退出。";
    BlankHint => "Blank screen: press B or click to come back.", "黑屏：按 B 或点击返回。";
    ZoomHint => "Ctrl+ / Ctrl− zoom", "Ctrl+ / Ctrl− 缩放";
    LessonKeys => "Keys: → / Space next step · ← back · F5 presenter", "按键：→ / 空格 下一步 · ← 上一步 · F5 演示模式";
    Screenshot => "Screenshot…", "截图…";
    ScreenshotTip => "Save the window as a PNG image, for slides.", "把窗口保存为 PNG 图片，用于幻灯片。";
    ScreenshotSaved => "Screenshot saved: {path}", "截图已保存：{path}";
    ScreenshotFailed => "The screenshot could not be saved: {why}", "无法保存截图：{why}";
    SaveSession => "Save session…", "保存会话…";
    OpenSession => "Open session…", "打开会话…";
    SessionTip => "A small .batchscope file with the settings, the language and the lesson and step on screen: hand it to students, who open it with Open session… or batchscope FILE.", "一个小小的 .batchscope 文件，包含设置、语言以及当前的课程和步骤：发给学生，他们用“打开会话…”或 batchscope 文件名 打开。";
    SessionSaved => "Session saved: {path}", "会话已保存：{path}";
    SessionNotSaved => "The session could not be saved: {why}", "无法保存会话：{why}";
    LessonFileError => "The lesson file {file} cannot be used: {why}", "课程文件 {file} 无法使用：{why}";
}}
