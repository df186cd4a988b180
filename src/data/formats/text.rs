//! Plain text for a character-level language model: a UTF-8 `.txt` file (plain or gzip) read
//! within the memory budget, its characters numbered in order of their code points (the
//! vocabulary), the text as those numbers, a train/validation split and random windows of the
//! context length, as nanoGPT's `shakespeare_char` prepares its data.
//!
//! The same care as the other formats: only regular files, the budget checked as the bytes
//! arrive, a byte that is not UTF-8 named at its offset, UTF-16 recognised and said so, an empty
//! file, a single character or a text too short for one window refused with what is needed.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

use rand::Rng;

use super::common::{DataError, Progress, display_name};
use crate::i18n::{DataKey, Said};

/// Most distinct characters a text may have: a vocabulary head of this many outputs is already
/// larger than the small models here (classical Chinese poems use about 7,000).
pub const MAX_VOCAB: usize = 16_384;
/// Fewest characters a text must have: a few windows of a small context.
pub const MIN_CHARS: usize = 256;

/// A text as a language model reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Corpus {
    /// The file or set name, for display.
    pub name: String,
    /// Every distinct character, in code-point order: a character's number is its place here.
    pub vocab: Vec<char>,
    /// The text, a number a character.
    pub ids: Vec<u16>,
}

impl Corpus {
    /// `text` as a corpus called `name`, or why it cannot be one. Windows' line ends become
    /// `\n`, and a leading byte-order mark is dropped, so neither takes a place in the
    /// vocabulary.
    pub fn from_text(name: &str, text: &str) -> Result<Self, DataError> {
        let refused = |message: Said| DataError::Refused {
            path: name.to_owned(),
            message,
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let text = text.replace("\r\n", "\n");
        let chars = text.chars().count();
        if chars == 0 {
            return Err(refused(Said::new(DataKey::TextEmpty, &[])));
        }
        let vocab: Vec<char> = text.chars().collect::<BTreeSet<_>>().into_iter().collect();
        if vocab.len() < 2 {
            let only = vocab.first().map_or(String::new(), |c| format!("{c:?}"));
            return Err(refused(Said::new(DataKey::TextOneChar, &[("char", &only)])));
        }
        if vocab.len() > MAX_VOCAB {
            return Err(refused(Said::new(
                DataKey::TextVocab,
                &[("n", &vocab.len()), ("max", &MAX_VOCAB)],
            )));
        }
        if chars < MIN_CHARS {
            return Err(refused(Said::new(
                DataKey::TextTooShort,
                &[("n", &chars), ("min", &MIN_CHARS)],
            )));
        }
        // `vocab` is sorted: each character's number is its place, found by binary search.
        let ids = text
            .chars()
            .map(|c| vocab.binary_search(&c).map_or(0, |i| i as u16))
            .collect();
        Ok(Self {
            name: name.to_owned(),
            vocab,
            ids,
        })
    }

    /// The text of `ids` (a number outside the vocabulary reads as `�`).
    pub fn decode(&self, ids: &[u16]) -> String {
        ids.iter()
            .map(|&i| {
                self.vocab
                    .get(usize::from(i))
                    .copied()
                    .unwrap_or('\u{fffd}')
            })
            .collect()
    }

    /// `text` as numbers, or the first character the vocabulary does not have (a prompt may
    /// only use the corpus's characters).
    pub fn encode(&self, text: &str) -> Result<Vec<u16>, char> {
        text.chars()
            .map(|c| {
                self.vocab
                    .binary_search(&c)
                    .map(|i| i as u16)
                    .map_err(|_| c)
            })
            .collect()
    }

    /// The training part and the validation part: the first `1 − validation` of the text and
    /// the rest, as nanoGPT splits it (90% and 10% by default), each at least one window of
    /// `context` plus its next character long where the text allows.
    pub fn split(&self, validation: f32, context: usize) -> (&[u16], &[u16]) {
        let n = self.ids.len();
        let want = (n as f64 * f64::from(validation.clamp(0.0, 0.5))).round() as usize;
        let at = n - want.clamp((context + 1).min(n / 2), n / 2);
        self.ids.split_at(at)
    }
}

/// `batch` windows of `context` characters from `part` and the character after each position
/// (the targets: the input shifted by one), starting at places drawn from `rng`; empty when
/// `part` is shorter than one window and its next character.
pub fn windows(
    part: &[u16],
    context: usize,
    batch: usize,
    rng: &mut impl Rng,
) -> (Vec<u16>, Vec<u16>) {
    let Some(starts) = part.len().checked_sub(context + 1).map(|last| last + 1) else {
        return (Vec::new(), Vec::new());
    };
    let mut inputs = Vec::with_capacity(batch * context);
    let mut targets = Vec::with_capacity(batch * context);
    for _ in 0..batch {
        let start = rng.random_range(0..starts);
        inputs.extend_from_slice(&part[start..start + context]);
        targets.extend_from_slice(&part[start + 1..=start + context]);
    }
    (inputs, targets)
}

/// Reads the text file at `path` within `budget` bytes (decompressed, for gzip).
pub fn load(path: &Path, budget: u64, progress: Progress) -> Result<Corpus, DataError> {
    let shown = path.display().to_string();
    let mut reader = super::stream::open(path, budget, progress, (0.0, 0.9))?;
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| super::stream::data_error(e, &shown))?;
    parse(&bytes, &shown, &display_name(path))
}

/// A text file's `bytes` as a corpus called `name`; `shown` names the file in refusals.
pub fn parse(bytes: &[u8], shown: &str, name: &str) -> Result<Corpus, DataError> {
    let text = utf8(bytes, shown)?;
    let mut corpus = Corpus::from_text(shown, text)?;
    name.clone_into(&mut corpus.name);
    Ok(corpus)
}

/// `bytes` as UTF-8 text, or the offset of the first byte that is not (UTF-16 said as such).
fn utf8<'a>(bytes: &'a [u8], shown: &str) -> Result<&'a str, DataError> {
    let utf16 = bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]);
    std::str::from_utf8(bytes).map_err(|e| DataError::Byte {
        path: shown.to_owned(),
        offset: if utf16 { 0 } else { e.valid_up_to() as u64 },
        message: Said::new(
            if utf16 {
                DataKey::TextUtf16
            } else {
                DataKey::TextNotUtf8
            },
            &[],
        ),
    })
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn poem() -> String {
        "Shall I compare thee to a summer's day?\r\nThou art more lovely and more temperate.\n"
            .repeat(4)
    }

    #[test]
    fn characters_are_numbered_in_code_point_order_and_round_trip() {
        let corpus = Corpus::from_text("sonnet", &format!("\u{feff}{}", poem())).expect("a corpus");
        assert_eq!(
            corpus.vocab.first(),
            Some(&'\n'),
            "CRLF and the BOM are gone"
        );
        assert!(!corpus.vocab.contains(&'\r') && !corpus.vocab.contains(&'\u{feff}'));
        assert!(corpus.vocab.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(corpus.decode(&corpus.ids), poem().replace("\r\n", "\n"));
        assert_eq!(corpus.encode("Thou"), Ok(corpus.ids[40..44].to_vec()));
        assert_eq!(corpus.encode("Thou!"), Err('!'));
        // Chinese characters are characters like any other.
        let poems = "床前明月光，疑是地上霜。举头望明月，低头思故乡。\n".repeat(12);
        let corpus = Corpus::from_text("静夜思", &poems).expect("a corpus");
        assert_eq!(corpus.ids.len(), poems.chars().count());
        assert_eq!(corpus.decode(&corpus.ids[..5]), "床前明月光");
    }

    #[test]
    fn an_empty_text_one_character_or_too_little_is_refused_with_what_is_needed() {
        let said = |text: &str| {
            let e = Corpus::from_text("t.txt", text).expect_err("refused");
            e.said().text(crate::i18n::Lang::En).to_owned()
        };
        assert!(said("").contains("is empty"), "{}", said(""));
        let one = said(&"a".repeat(1000));
        assert!(one.contains("only one character, 'a'"), "{one}");
        let short = said("to be or not to be");
        assert!(
            short.contains("18 characters") && short.contains("256"),
            "{short}"
        );
        let many: String = (0..20_000u32).filter_map(char::from_u32).collect();
        let vocab = said(&many);
        assert!(vocab.contains("16384"), "{vocab}");
    }

    #[test]
    fn a_byte_that_is_not_utf8_is_named_at_its_offset() {
        let mut bytes = poem().into_bytes();
        bytes[100] = 0xff;
        let e = utf8(&bytes, "t.txt").expect_err("not UTF-8");
        assert!(matches!(e, DataError::Byte { offset: 100, .. }), "{e:?}");
        let utf16: Vec<u8> = [0xff, 0xfe, b'a', 0].to_vec();
        let e = utf8(&utf16, "t.txt").expect_err("UTF-16");
        assert!(e.said().text(crate::i18n::Lang::En).contains("UTF-16"));
    }

    #[test]
    fn the_split_keeps_a_window_each_side_and_windows_are_shifted_by_one() {
        let corpus = Corpus::from_text("sonnet", &poem().repeat(10)).expect("a corpus");
        let n = corpus.ids.len();
        let (train, val) = corpus.split(0.1, 8);
        assert_eq!(train.len() + val.len(), n);
        assert_eq!(val.len(), (n as f64 * 0.1).round() as usize);
        // A context longer than a tenth of the text: the validation part still holds a window.
        let (_, val) = corpus.split(0.1, 400);
        assert_eq!(val.len(), 401);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (x, y) = windows(train, 8, 5, &mut rng);
        assert_eq!((x.len(), y.len()), (40, 40));
        for w in 0..5 {
            let (xs, ys) = (&x[w * 8..w * 8 + 8], &y[w * 8..w * 8 + 8]);
            assert_eq!(&xs[1..], &ys[..7], "targets are the inputs shifted by one");
        }
        // The same seed, the same windows; a part shorter than a window gives none.
        let mut again = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        assert_eq!(windows(train, 8, 5, &mut again), (x, y));
        assert_eq!(
            windows(&train[..8], 8, 5, &mut again),
            (Vec::new(), Vec::new())
        );
    }

    /// A file on disk, plain or gzip, reads as the same corpus named by the file; one over the
    /// budget is refused before it is read, and so is a folder.
    #[test]
    fn a_text_file_plain_or_gzip_loads_within_its_budget() {
        use std::io::Write as _;
        let dir = std::env::temp_dir().join(format!("batchscope-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let text = poem().repeat(5);
        let plain = dir.join("sonnet.txt");
        std::fs::write(&plain, &text).expect("written");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes()).expect("gzip");
        let zipped = dir.join("sonnet.txt.gz");
        std::fs::write(&zipped, gz.finish().expect("gzip")).expect("written");
        let progress = super::super::common::no_progress;
        let a = load(&plain, 1 << 20, &progress).expect("plain");
        let b = load(&zipped, 1 << 20, &progress).expect("gzip");
        assert_eq!((a.name.as_str(), &a.ids), ("sonnet.txt", &b.ids));
        let e = load(&plain, 100, &progress).expect_err("over the budget");
        assert!(matches!(e, DataError::Refused { .. }), "{e:?}");
        assert!(load(&dir, 1 << 20, &progress).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The two shipped corpora read as corpora, with the sizes their `SOURCE.md` gives.
    #[test]
    fn the_shipped_corpora_read_with_their_documented_sizes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
        let progress = super::super::common::no_progress;
        for (file, chars, distinct, starts) in [
            (
                "shakespeare/shakespeare.txt",
                1_157_817,
                75,
                "THE TRAGEDY OF CORIOLANUS",
            ),
            ("poems/poems.txt", 46_366, 2_897, "《行宫》 元稹"),
        ] {
            let corpus = load(&root.join(file), 1 << 24, &progress).expect(file);
            assert_eq!(
                (corpus.ids.len(), corpus.vocab.len()),
                (chars, distinct),
                "{file}"
            );
            let head = corpus.decode(&corpus.ids[..starts.chars().count()]);
            assert_eq!(head, starts, "{file}");
        }
    }
}
