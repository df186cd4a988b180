//! The lessons that come with the app, compiled in: the opening run, then one per section of
//! the article, in its order.

use super::format::Lesson;

/// Each shipped lesson's file name and text.
/// How many lessons ship with the app: the files below.
pub const COUNT: usize = 11;

const FILES: [(&str, &str); COUNT] = [
    (
        "00-first-run.toml",
        include_str!("../../assets/lessons/00-first-run.toml"),
    ),
    (
        "01-where-time-goes.toml",
        include_str!("../../assets/lessons/01-where-time-goes.toml"),
    ),
    (
        "02-design-goals.toml",
        include_str!("../../assets/lessons/02-design-goals.toml"),
    ),
    (
        "03-batch-journey.toml",
        include_str!("../../assets/lessons/03-batch-journey.toml"),
    ),
    (
        "04-batching.toml",
        include_str!("../../assets/lessons/04-batching.toml"),
    ),
    (
        "05-memory.toml",
        include_str!("../../assets/lessons/05-memory.toml"),
    ),
    (
        "06-mixed-precision.toml",
        include_str!("../../assets/lessons/06-mixed-precision.toml"),
    ),
    (
        "07-ecosystem.toml",
        include_str!("../../assets/lessons/07-ecosystem.toml"),
    ),
    (
        "08-still-slow.toml",
        include_str!("../../assets/lessons/08-still-slow.toml"),
    ),
    (
        "09-no-gpu-needed.toml",
        include_str!("../../assets/lessons/09-no-gpu-needed.toml"),
    ),
    (
        "10-language-models.toml",
        include_str!("../../assets/lessons/10-language-models.toml"),
    ),
];

/// The shipped lessons, in order. (Each is checked by a test; one that failed to read would be
/// left out with its reason rather than take the others down.)
pub fn lessons() -> (Vec<Lesson>, Vec<String>) {
    let mut lessons = Vec::new();
    let mut errors = Vec::new();
    for (file, text) in FILES {
        match Lesson::parse(text) {
            Ok(lesson) => lessons.push(lesson),
            Err(e) => errors.push(format!("{file}: {e}")),
        }
    }
    (lessons, errors)
}

/// The shipped lesson `id`.
pub fn find(id: &str) -> Option<Lesson> {
    lessons().0.into_iter().find(|l| l.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_lesson_reads_and_the_sections_come_in_order() {
        let (lessons, errors) = lessons();
        assert!(errors.is_empty(), "{errors:#?}");
        // Every section of the article in its order; the ninth's workloads take two lessons
        // (when a GPU is not needed, and why language models need one).
        let sections: Vec<u32> = lessons.iter().map(|l| l.section).collect();
        assert!(sections.is_sorted(), "{sections:?}");
        let mut taught = sections.clone();
        taught.dedup();
        assert_eq!(taught, (0..10).collect::<Vec<_>>());
        let mut ids: Vec<&str> = lessons.iter().map(|l| l.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), lessons.len(), "ids are unique");
    }
}
