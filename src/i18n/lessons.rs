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
    LessonFileError => "The lesson file {file} cannot be used: {why}", "课程文件 {file} 无法使用：{why}";
}}
