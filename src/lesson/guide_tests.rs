//! The guide's page for each shipped lesson, in English and in Chinese, generated from the
//! lesson's own file and checked to be what the file gives: the article's section, what the
//! class sees step by step, the questions to ask (each Predict step with its choices and the
//! teacher's notes), and what each headline says with a GPU, on a software adapter and without
//! one. After changing a lesson, `BATCHSCOPE_BLESS=1 cargo test lesson_pages` writes them anew.

use std::fmt::Write as _;

use super::format::{Direction, Lesson, StepKind, Text, When};
use crate::files::generated::{assert_current, in_repository};
use crate::i18n::Lang;

/// The page's own words, in each language.
fn word(lang: Lang, en: &'static str, zh: &'static str) -> &'static str {
    match lang {
        Lang::En => en,
        Lang::Zh => zh,
    }
}

fn kind_name(lang: Lang, kind: StepKind) -> &'static str {
    match kind {
        StepKind::Predict => word(lang, "Predict", "预测"),
        StepKind::Run => word(lang, "Set up and run", "设置并运行"),
        StepKind::Watch => word(lang, "Watch", "观察"),
        StepKind::Explain => word(lang, "Explain", "讲解"),
        StepKind::Try => word(lang, "Try", "动手试"),
    }
}

fn when_name(lang: Lang, when: When) -> &'static str {
    match when {
        When::Any => word(lang, "On any machine", "任何机器上"),
        When::Gpu => word(lang, "With a GPU adapter", "有 GPU 适配器时"),
        When::HardwareGpu => word(lang, "With a hardware GPU", "有硬件 GPU 时"),
        When::SoftwareGpu => word(lang, "On a software adapter", "在软件适配器上"),
        When::NoGpu => word(lang, "Without a GPU", "没有 GPU 时"),
    }
}

/// The page of `lesson` in `lang`.
fn page(lesson: &Lesson, lang: Lang) -> String {
    let t = |text: &Text| text.get(lang).to_owned();
    let (stop, colon) = match lang {
        Lang::En => (".", ": "),
        Lang::Zh => ("。", "："),
    };
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n\n{}\n", t(&lesson.title), t(&lesson.summary));
    let _ = writeln!(
        out,
        "{} `batchscope --lesson {}` · {}{}\n",
        word(
            lang,
            "Open it from the Lessons menu or with",
            "从“课程”菜单打开，或用"
        ),
        lesson.id,
        word(lang, "the article's section: ", "对应文章的小节："),
        if lesson.section == 0 {
            word(lang, "the opening run", "开场").to_owned()
        } else {
            lesson.section.to_string()
        }
    );
    let _ = writeln!(
        out,
        "{}\n",
        word(
            lang,
            "How long it takes: each of its probes measures for a few seconds, one device at a \
             time; `batchscope lessons --verify` runs them all on the class's machine beforehand \
             and says how long each took there. Allow a few minutes a step for the class's \
             answers and questions.",
            "需要多长时间：每个探测一次测量一台设备，各需几秒钟；课前用 `batchscope lessons \
             --verify` 在课堂用的机器上把它们全部运行一遍，会给出每个探测在该机器上用了多久。\
             每一步再留几分钟给学生作答和提问。"
        )
    );
    let _ = writeln!(
        out,
        "## {}\n",
        word(lang, "What the class sees", "课堂上看到什么")
    );
    for (i, step) in lesson.steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. **{}{stop}** {}",
            i + 1,
            kind_name(lang, step.kind),
            t(&step.text)
        );
        if !step.choices.is_empty() {
            let choices: Vec<String> = step.choices.iter().map(t).collect();
            let _ = writeln!(
                out,
                "   {}{colon}{}",
                word(lang, "Choices", "选项"),
                choices.join(" · ")
            );
        }
        if let Some(expect) = step.expect {
            let moves = match expect {
                Direction::Rise => word(lang, "should rise", "应上升"),
                Direction::Fall => word(lang, "should fall", "应下降"),
            };
            let _ = writeln!(
                out,
                "   {} `{}` {moves}{stop}",
                word(lang, "The figure", "数字"),
                step.figure.as_deref().unwrap_or_default()
            );
        }
        for h in &step.headlines {
            // A headline shown only while a figure is below or above a bound says which.
            let bound = match (&h.figure, h.min, h.max) {
                (Some(f), _, Some(max)) => format!(" ({f} < {max})"),
                (Some(f), Some(min), None) => format!(" ({f} ≥ {min})"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "   - *{}{bound}*{colon}{}",
                when_name(lang, h.when),
                h.get(lang)
            );
        }
        if let Some(notes) = &step.notes {
            let _ = writeln!(
                out,
                "   > {}{colon}{}",
                word(lang, "Teacher's note", "教师提示"),
                t(notes)
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{}",
        word(
            lang,
            "Braces, like `{speed.cpu.step_ms}`, are filled from this run's measurements when the \
             lesson runs; a headline whose figures were not measured is not shown. Simulated \
             figures are marked *(simulated)*.",
            "花括号（如 `{speed.cpu.step_ms}`）在上课运行时由本次测量结果填入；没有测得所需数字的标题不会显示。\
             模拟的数字会标注“（模拟）”。"
        )
    );
    out
}

/// Where the page of `lesson` in `lang` lives, from the repository's root.
fn path(lesson: &Lesson, lang: Lang) -> String {
    let folder = match lang {
        Lang::En => "en",
        Lang::Zh => "zh",
    };
    format!(
        "docs/guide/src/{folder}/lessons/{:02}-{}.md",
        lesson.section, lesson.id
    )
}

#[test]
fn lesson_pages_of_the_guide_are_current() {
    let (lessons, errors) = super::shipped::lessons();
    assert!(errors.is_empty(), "{errors:?}");
    for lesson in &lessons {
        for lang in [Lang::En, Lang::Zh] {
            assert_current(
                &path(lesson, lang),
                &page(lesson, lang),
                "BATCHSCOPE_BLESS=1 cargo test lesson_pages",
            );
        }
        // Every page is in the guide's table of contents.
        let summary = std::fs::read_to_string(in_repository("docs/guide/src/SUMMARY.md"))
            .expect("the guide's SUMMARY.md");
        for lang in [Lang::En, Lang::Zh] {
            let linked = path(lesson, lang).replace("docs/guide/src/", "");
            assert!(
                summary.contains(&linked),
                "SUMMARY.md does not list {linked}"
            );
        }
    }
}
