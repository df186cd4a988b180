//! A message made from the translation table in both languages at once, so that what the core
//! says (a loader's reason, an estimator's formula, a backend's error) can travel to the window
//! and be shown in whichever language the user reads, while the command line prints English.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::lang::{Lang, Translated};

/// A text in English and Simplified Chinese.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Said {
    en: String,
    zh: String,
}

/// A value put into a message's `{name}`: the same in both languages, or itself a message.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    /// Numbers, paths, code names: written the same in both languages.
    Plain(&'a dyn fmt::Display),
    /// A message of its own, put in each language's text in that language.
    Said(&'a Said),
}

impl Said {
    /// `key`'s text in both languages, each `{name}` replaced by a value written the same way.
    pub fn new(key: impl Translated, args: &[(&str, &dyn fmt::Display)]) -> Self {
        Self {
            en: Lang::En.fmt(key, args),
            zh: Lang::Zh.fmt(key, args),
        }
    }

    /// `key`'s text in both languages with values some of which are messages themselves.
    pub fn with(key: impl Translated, args: &[(&str, Arg<'_>)]) -> Self {
        let in_lang = |lang: Lang| {
            let mut text = lang.tr(key).to_owned();
            for (name, arg) in args {
                let value = match arg {
                    Arg::Plain(value) => value.to_string(),
                    Arg::Said(said) => said.text(lang).to_owned(),
                };
                text = text.replace(&format!("{{{name}}}"), &value);
            }
            text
        };
        Self {
            en: in_lang(Lang::En),
            zh: in_lang(Lang::Zh),
        }
    }

    /// The message `write` gives in each language: for a typed error that renders itself
    /// through the table (a setting out of range).
    pub fn each(write: impl Fn(Lang) -> String) -> Self {
        Self {
            en: write(Lang::En),
            zh: write(Lang::Zh),
        }
    }

    /// Words this app did not write (the operating system's, a driver's, a file's): shown as
    /// they are in both languages. Use it for such words only, introduced by a translated message.
    pub fn verbatim(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            en: text.clone(),
            zh: text,
        }
    }

    /// Whether there is nothing to say.
    pub fn is_empty(&self) -> bool {
        self.en.is_empty() && self.zh.is_empty()
    }

    /// The text in `lang`.
    pub fn text(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }

    /// This message followed by `more` in each language.
    #[must_use]
    pub fn then(mut self, more: &Said) -> Self {
        self.en.push_str(&more.en);
        self.zh.push_str(&more.zh);
        self
    }

    /// The messages joined, each language with its own separator (`", "` and `"，"`).
    pub fn join(parts: &[Said], separator: impl Translated) -> Self {
        let in_lang = |lang: Lang| {
            parts
                .iter()
                .map(|p| p.text(lang))
                .collect::<Vec<_>>()
                .join(lang.tr(separator))
        };
        Self {
            en: in_lang(Lang::En),
            zh: in_lang(Lang::Zh),
        }
    }
}

/// English: what logs, errors on the command line and exports print.
impl fmt::Display for Said {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.en)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Key;

    #[test]
    fn a_message_keeps_both_languages_and_nests() {
        let inner = Said::new(Key::ConvBlock, &[("n", &2)]);
        assert_eq!(inner.text(Lang::En), "block 2");
        assert_eq!(inner.text(Lang::Zh), "第 2 块");
        let outer = Said::with(Key::ConvBlock, &[("n", Arg::Said(&inner))]);
        assert_eq!(outer.text(Lang::Zh), "第 第 2 块 块");
        assert_eq!(outer.to_string(), "block block 2");
        let system = Said::verbatim("No such file or directory (os error 2)");
        assert_eq!(system.text(Lang::Zh), system.text(Lang::En));
        let both = inner.clone().then(&system);
        assert!(both.text(Lang::Zh).starts_with("第 2 块No such"));
    }
}
