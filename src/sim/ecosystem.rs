//! The ecosystem card's facts: for each kind of device, the software path a framework would
//! train with (CUDA with cuBLAS and cuDNN, `ROCm`, Metal, the CPU's libraries) and what this app
//! uses instead (wgpu), each with its sources, read from `assets/ecosystem.toml`.

use serde::Deserialize;

use crate::i18n::Lang;

/// The shipped stacks, as text.
const SHIPPED: &str = include_str!("../../assets/ecosystem.toml");

/// One software stack.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stack {
    /// The id a profile's `software` names (`cuda`, `rocm`, `metal`, `cpu`, `wgpu`).
    pub id: String,
    /// Its name, in English and in Chinese.
    pub name: String,
    /// 中文。
    pub name_zh: String,
    /// The devices it runs on, in English and in Chinese.
    pub devices: String,
    /// 中文。
    pub devices_zh: String,
    /// The libraries a framework calls through it.
    pub libraries: String,
    /// 中文。
    pub libraries_zh: String,
    /// What it means for training.
    pub note: String,
    /// 中文。
    pub note_zh: String,
    /// Where the facts come from.
    pub sources: Vec<String>,
}

impl Stack {
    /// Its devices, libraries and note in `lang`.
    pub fn text(&self, lang: Lang) -> [&str; 3] {
        match lang {
            Lang::En => [&self.devices, &self.libraries, &self.note],
            Lang::Zh => [&self.devices_zh, &self.libraries_zh, &self.note_zh],
        }
    }

    /// Its name in `lang`.
    pub fn name(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.name,
            Lang::Zh => &self.name_zh,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    stack: Vec<Stack>,
}

/// The shipped stacks (none if the built-in file were malformed, which a test rules out).
pub fn shipped() -> Vec<Stack> {
    toml::from_str::<File>(SHIPPED)
        .map(|f| f.stack)
        .unwrap_or_default()
}

/// The stack of a profile's `software` (`wgpu-vulkan` and the like are wgpu's).
pub fn stack_of<'a>(stacks: &'a [Stack], software: &str) -> Option<&'a Stack> {
    let id = software.split('-').next().unwrap_or(software);
    stacks.iter().find(|s| s.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_has_a_stack_with_sources_in_both_languages() {
        assert!(toml::from_str::<File>(SHIPPED).is_ok());
        let stacks = shipped();
        for p in crate::sim::profile::shipped() {
            assert!(stack_of(&stacks, &p.software).is_some(), "{}", p.id);
        }
        assert_eq!(
            stack_of(&stacks, "wgpu-vulkan").map(|s| s.id.as_str()),
            Some("wgpu")
        );
        for s in &stacks {
            assert!(!s.sources.is_empty() && s.sources.iter().all(|u| u.starts_with("https://")));
            for text in s.text(Lang::En).into_iter().chain(s.text(Lang::Zh)) {
                assert!(!text.trim().is_empty(), "{}", s.id);
            }
        }
    }
}
