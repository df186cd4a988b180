//! The languages, and the macro that makes a part of the translation table.

use serde::{Deserialize, Serialize};

/// A key of the translation table: its text in each language.
pub trait Translated: Copy {
    /// The text in `lang`.
    fn text(self, lang: Lang) -> &'static str;
}

/// A UI language.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// Both languages, in menu order.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The language's own name, for the switcher.
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Zh => "简体中文",
        }
    }

    /// Parses `en` or `zh`.
    pub fn parse(code: &str) -> Option<Self> {
        match code.to_ascii_lowercase().as_str() {
            "en" | "english" => Some(Lang::En),
            "zh" | "zh-cn" | "zh_cn" | "cn" => Some(Lang::Zh),
            _ => None,
        }
    }

    /// The text of `key` in this language.
    pub fn tr(self, key: impl Translated) -> &'static str {
        key.text(self)
    }

    /// The text of `key` with each `{name}` replaced by its value.
    pub fn fmt(self, key: impl Translated, args: &[(&str, &dyn std::fmt::Display)]) -> String {
        let mut text = self.tr(key).to_owned();
        for (name, value) in args {
            text = text.replace(&format!("{{{name}}}"), &value.to_string());
        }
        text
    }
}

/// Makes a key enum `$name` whose every key gives both languages' texts.
macro_rules! strings {
    ($name:ident { $($key:ident => $en:expr, $zh:expr;)* }) => {
        /// A translatable UI string.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[expect(missing_docs, reason = "each key's English, beside it, says what it is")]
        pub enum $name { $($key),* }

        impl $name {
            /// Every key, for completeness tests.
            pub const ALL: &'static [$name] = &[$($name::$key),*];
        }

        impl $crate::i18n::lang::Translated for $name {
            fn text(self, lang: $crate::i18n::lang::Lang) -> &'static str {
                match self {
                    $($name::$key => match lang {
                        $crate::i18n::lang::Lang::En => $en,
                        $crate::i18n::lang::Lang::Zh => $zh,
                    },)*
                }
            }
        }
    };
}
pub(crate) use strings;
