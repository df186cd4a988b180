//! What every kind of layer is to the network: the [`Layer`] trait a built layer implements,
//! the shape that flows between layers, and what a backward pass hands a layer.

use rand_chacha::ChaCha8Rng;

use crate::backend::{Activation, Backend, BackendError, ConvShape, Tensor};
use crate::data::ImageShape;
use crate::memory::Role;

/// What a layer needs of its input (or of its own settings) that it was not given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// A row of values: an image must be flattened first.
    Rows,
    /// A channels-last image.
    Image,
    /// An odd kernel side (3 or 5).
    OddKernel,
    /// At least one unit or filter.
    Units,
    /// An image of at least 2×2 pixels.
    PoolSize,
    /// A sequence of positions (an embedding first).
    Sequence,
    /// Token ids: a row of them, the model's first input.
    Tokens,
    /// Queries, keys and values side by side (a dense layer of 3 × the width before it) whose
    /// width the heads divide.
    Heads,
    /// An earlier layer's output of the same shape to add.
    Residual,
}

impl Need {
    /// What it says, in `lang`.
    pub fn text(self, lang: crate::i18n::Lang) -> &'static str {
        use crate::i18n::Key;
        lang.tr(match self {
            Need::Rows => Key::NeedRows,
            Need::Image => Key::NeedImage,
            Need::OddKernel => Key::NeedOddKernel,
            Need::Units => Key::NeedUnits,
            Need::PoolSize => Key::NeedPoolSize,
            Need::Sequence => Key::NeedSequence,
            Need::Tokens => Key::NeedTokens,
            Need::Heads => Key::NeedHeads,
            Need::Residual => Key::NeedResidual,
        })
    }
}

/// What flows from one layer into the next, per sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// A row of values.
    Flat(usize),
    /// A channels-last image.
    Image(ImageShape),
    /// `len` positions of `width` values each, laid out as a row a position.
    Sequence { len: usize, width: usize },
}

impl Shape {
    /// Values per sample.
    pub fn values(self) -> usize {
        match self {
            Shape::Flat(n) => n,
            Shape::Image(image) => image.len(),
            Shape::Sequence { len, width } => len.saturating_mul(width),
        }
    }

    /// Rows of a tensor a sample takes where each row is one of its vectors: a position of a
    /// sequence, else the whole sample.
    pub fn rows_per_sample(self) -> usize {
        match self {
            Shape::Sequence { len, .. } => len.max(1),
            _ => 1,
        }
    }

    /// Values of each such row.
    pub fn row_width(self) -> usize {
        match self {
            Shape::Sequence { width, .. } => width,
            other => other.values(),
        }
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shape::Flat(n) => write!(f, "{n}"),
            Shape::Image(i) => write!(f, "{}×{}×{}", i.height, i.width, i.channels),
            Shape::Sequence { len, width } => write!(f, "{len}×[{width}]"),
        }
    }
}

/// One pass of a layer that multiplies no matrix, a sample, as the cost model counts it (an
/// estimate of its kernel's arithmetic and traffic, not a measurement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlainWork {
    /// Floating-point operations.
    pub flops: usize,
    /// Activation values (or their gradients) read and written.
    pub values: usize,
    /// Parameter values (or their gradients) read and written once a batch: a `LayerNorm`'s
    /// scale and shift.
    pub params: usize,
}

/// What a layer that multiplies no matrix (pooling, a normalisation, an activation of its own)
/// does in a training step, for the simulator's op list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlainCost {
    /// What the cost model's op names call it: `pooling` gives `layer 1 pooling` and `layer 1
    /// pooling gradient`.
    pub name: &'static str,
    /// What it is, in each language.
    pub what: crate::i18n::LayerKey,
    /// Its forward pass.
    pub forward: PlainWork,
    /// Its backward pass (its parameters' gradients included).
    pub backward: PlainWork,
}

/// A layer's parameters, as the network allocates them: `(rows, cols)` of its weight and of its
/// bias (or shift), with their initial values.
pub(crate) struct ParamInit {
    /// Used in the tensors' labels: `weight` and `bias`, as PyTorch names them.
    pub shapes: [(usize, usize); 2],
    pub values: [Vec<f32>; 2],
}

/// What a layer's backward pass reads and writes.
pub(crate) struct Backward<'a> {
    /// The layer's input, as the layer before wrote it (after its epilogue).
    pub input: &'a Tensor,
    /// What the layer kept for backward besides its output (which its backward pass may
    /// overwrite: the next forward pass writes it again).
    pub saved: &'a mut [Tensor],
    /// The loss's gradient with respect to the layer's output before its epilogue.
    pub dout: &'a Tensor,
    /// Its parameters' values as the passes read them.
    pub params: Option<(&'a Tensor, &'a Tensor)>,
    /// Its parameters' gradients.
    pub grads: Option<(&'a mut Tensor, &'a mut Tensor)>,
    /// The gradient with respect to the input (before the previous layer's epilogue), where the
    /// input is not the batch.
    pub dinput: Option<&'a mut Tensor>,
    /// The previous layer's epilogue, whose derivative the input gradient goes through (only
    /// ever not the identity before a dense layer or max pooling: see [`build`](super::build)).
    pub input_epilogue: Activation,
}

/// A layer built for a network on one device.
pub(crate) trait Layer: Send {
    /// The stem of its tensors' labels (`layer0`, `conv1`, `norm0`).
    fn name(&self) -> &str;

    /// Its kind, as model files name it (`dense`, `conv2d`, `max_pool2d`, `layer_norm`), or its
    /// function for an activation layer (`gelu`).
    fn kind(&self) -> &'static str;

    /// Its output's shape.
    fn shape(&self) -> Shape;

    /// Its output tensor's `(rows, cols)` for `rows` samples (a convolution's is a row a pixel,
    /// a sequence's a row a position).
    fn output(&self, rows: usize) -> (usize, usize) {
        let shape = self.shape();
        (rows * shape.rows_per_sample(), shape.row_width())
    }

    /// The built layer whose output this one adds to its input (a residual connection), which
    /// the forward pass hands it and its backward pass's gradient joins.
    fn skip(&self) -> Option<usize> {
        None
    }

    /// Whether it reads its input as token ids, which the network then keeps in f32 whatever
    /// the precision (an id above 2048 is not exact in FP16, above 256 not in BF16).
    fn reads_indices(&self) -> bool {
        false
    }

    /// The suffixes of its output's and its output gradient's labels.
    fn suffixes(&self) -> (&'static str, &'static str) {
        ("output", "dz")
    }

    /// Its parameters' shapes, `(rows, cols)` of its weight (or scale) and its bias (or shift).
    fn param_shapes(&self) -> Option<[(usize, usize); 2]> {
        None
    }

    /// Multiply-adds of its product a sample (a dense layer's or a convolution's; 0 for the
    /// element-wise kinds).
    fn macs(&self) -> usize {
        0
    }

    /// Whether its weight decays under `AdamW` (its bias never does): a product's weight
    /// matrix does, a normalisation's scale does not (nanoGPT's split).
    fn decays(&self) -> bool {
        self.macs() > 0
    }

    /// Its parameters with their initial values, drawn from `rng` (whose order every device
    /// shares); `hidden` is the model's hidden activation, which the initialisation suits.
    fn params(&self, _rng: &mut ChaCha8Rng, _hidden: Activation) -> Option<ParamInit> {
        None
    }

    /// The activation its output went through in its epilogue.
    fn epilogue(&self) -> Activation {
        Activation::Identity
    }

    /// Whether its backward pass writes its input's gradient even where the input is the batch
    /// (the network then gives a first such layer a scratch to write it into).
    fn needs_input_gradient(&self) -> bool {
        false
    }

    /// Tensors it keeps for backward besides its output, for `rows` samples, as `(role, label
    /// suffix, shape)`; always f32.
    fn saved(&self, _rows: usize) -> Vec<(Role, &'static str, (usize, usize))> {
        Vec::new()
    }

    /// Whether what it keeps for backward ([`saved`](Layer::saved)) is stored as the passes
    /// store values (16 bits in the 16-bit modes) rather than in f32: attention's probabilities
    /// are activations proper, a `LayerNorm`'s statistics stay f32 as PyTorch keeps them.
    fn saved_in_pass_format(&self) -> bool {
        false
    }

    /// What it does in a step if it multiplies no matrix, for the cost model (a layer with a
    /// product is counted by its [`macs`](Layer::macs) and parameter shapes).
    fn plain_cost(&self) -> Option<PlainCost> {
        None
    }

    /// A convolution's geometry, for the views of what a first convolution learned.
    fn convolution(&self) -> Option<ConvShape> {
        None
    }

    /// The forward pass: `out` from `input` (and the parameters' pass values; for a residual
    /// connection, the output it adds as `skip`).
    fn forward(
        &self,
        backend: &mut dyn Backend,
        input: &Tensor,
        skip: Option<&Tensor>,
        params: Option<(&Tensor, &Tensor)>,
        saved: &mut [Tensor],
        out: &mut Tensor,
    ) -> Result<(), BackendError>;

    /// Tensors it keeps while generating a token at a time for `rows` sequences (f32, as
    /// `(label suffix, shape)`): by default what its forward pass keeps for one position of each
    /// (a `LayerNorm`'s statistics); an attention layer's key-value cache.
    fn decode_saved(&self, rows: usize) -> Vec<(&'static str, (usize, usize))> {
        let per = self.shape().rows_per_sample();
        self.saved(1)
            .into_iter()
            .map(|(_, suffix, (r, c))| (suffix, (rows * r.div_ceil(per), c)))
            .collect()
    }

    /// The forward pass of one new position, `position`, of each sequence (a row of `input`
    /// each) while generating a token at a time, `saved` from
    /// [`decode_saved`](Layer::decode_saved): by default the forward pass, which works a row at
    /// a time.
    fn decode(
        &self,
        backend: &mut dyn Backend,
        (input, skip): (&Tensor, Option<&Tensor>),
        params: Option<(&Tensor, &Tensor)>,
        saved: &mut [Tensor],
        _position: usize,
        out: &mut Tensor,
    ) -> Result<(), BackendError> {
        self.forward(backend, input, skip, params, saved, out)
    }

    /// After a whole window's forward pass of `input`: what generation a token at a time keeps
    /// of it (an attention layer's keys and values) into `saved`, as
    /// [`decode_saved`](Layer::decode_saved) made it. Nothing by default.
    fn fill_cache(
        &self,
        _backend: &mut dyn Backend,
        _input: &Tensor,
        _saved: &mut [Tensor],
    ) -> Result<(), BackendError> {
        Ok(())
    }

    /// The backward pass: the parameters' gradients and the input's.
    fn backward(&self, backend: &mut dyn Backend, pass: Backward<'_>) -> Result<(), BackendError>;
}
