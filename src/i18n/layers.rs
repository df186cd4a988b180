//! The translation table's part for a model's layers: what each kind is called, the setup's
//! layer list, and the cost model's names for the ops of layers that multiply no matrix.

super::lang::strings! { LayerKey {
    KindDense => "Dense", "全连接层";
    KindConv2d => "Convolution", "卷积层";
    KindMaxPool2d => "Max pooling 2×2", "2×2 最大池化";
    KindFlatten => "Flatten", "展平";
    KindActivation => "Activation", "激活函数";
    KindLayerNorm => "LayerNorm", "层归一化 LayerNorm";
    WhatPooling => "max pooling", "最大池化";
    WhatLayerNorm => "LayerNorm", "层归一化";
    WhatActivation => "activation", "激活";
    OpPlain => "layer {layer} {what}", "第 {layer} 层 {what}";
    OpPlainGradient => "layer {layer} {what} gradient", "第 {layer} 层 {what}梯度";
    OpPlainUpdate => "layer {layer} {what}: update scale and shift", "第 {layer} 层 {what}：更新缩放和平移";
    Layers => "Layers", "网络层";
    ModelList => "Layer list", "逐层搭建";
    ModelListTip => "Any sequence of layers: dense, convolution, pooling, LayerNorm, activations (GELU among them), each row changeable. Starts from the model set up now.", "任意顺序的网络层：全连接、卷积、池化、LayerNorm、激活函数（包括 GELU），每一行都可修改。从当前设置的模型开始。";
    LayersTip => "The model as a list of layers, input first. BatchScope adds the output layer the data set needs (its classes or targets). Each row shows what it outputs a sample and how many values it trains; a row that cannot take what the row above gives is marked.", "模型是一串网络层，输入在最前。BatchScope 会按数据集补上输出层（类别数或目标数）。每行显示它每个样本输出的形状和它训练的参数个数；无法接收上一行输出的行会被标出。";
    ColumnLayer => "Layer", "层";
    ColumnOutput => "Output", "输出";
    ColumnParams => "Parameters", "参数";
    InputRow => "Input", "输入";
    OutputRow => "Output", "输出层";
    OutputKind => "Dense (added)", "全连接层（自动添加）";
    OutputKindTip => "The output layer the data set needs, one unit a class or target: BatchScope adds it after the list.", "数据集所需的输出层，每个类别或目标一个单元：BatchScope 会把它加在列表之后。";
    AddLayer => "Add layer", "添加层";
    AddLayerTip => "Adds a layer of this kind at the end of the list.", "在列表末尾添加一个该类型的层。";
    MoveUp => "Move up", "上移";
    MoveDown => "Move down", "下移";
    Remove => "Remove", "删除";
    Units => "units", "单元";
    Filters => "filters", "滤波器";
    Preset => "Start from", "从预设开始";
    PresetTip => "Replaces the list with a preset: an MLP, or an MLP with LayerNorm and GELU (a Transformer's feed-forward block).", "用预设替换列表：普通 MLP，或带 LayerNorm 和 GELU 的 MLP（Transformer 的前馈块）。";
    LayerBreaks => "Layer {layer} gets {shape} but needs {needs}", "第 {layer} 层得到 {shape}，但它需要{needs}";
    CountsUnknown => "Parameters and FLOPs: none until every layer takes what the one above gives (see the marked row)", "参数和 FLOP：要等每一层都能接收上一层的输出才能计算（见标出的行）";
    ListFull => "At most {max} layers", "最多 {max} 层";
    SaveModel => "Save model…", "保存模型…";
    SaveModelTip => "Saves the weights trained so far (the CPU's when it trains, else the GPU's) as safetensors, named and laid out as PyTorch's state_dict, and the layers beside them as a model file (TOML) that --model reads.", "把目前训练得到的权重（CPU 在训练时取 CPU 的，否则取 GPU 的）保存为 safetensors，名称和布局与 PyTorch 的 state_dict 相同；并在旁边把网络层保存为 --model 可读取的模型文件（TOML）。";
    LoadModel => "Load model…", "加载模型…";
    LoadModelTip => "Loads weights saved as safetensors into the model being trained (the one last applied with Reset), on every device; each tensor's name and shape is checked against its layers first, and a mismatch changes nothing.", "把以 safetensors 保存的权重加载到正在训练的模型（最近一次按“重置”应用的模型）中，所有设备都加载；先逐个核对张量的名称和形状，不匹配时什么都不改变。";
    ModelSaved => "Saved the layers to {model}; the weights follow from the training thread", "已把网络层保存到 {model}；权重由训练线程随后写入";
    ModelNotSaved => "{path}: the layers could not be saved ({why})", "{path}：无法保存网络层（{why}）";
    WeightsSaved => "Saved the weights to {path}", "已把权重保存到 {path}";
    WeightsNotSaved => "{path}: the weights could not be saved ({why})", "{path}：无法保存权重（{why}）";
    WeightsLoaded => "Loaded the weights of {path} into the {device} model", "已把 {path} 的权重加载到 {device} 模型";
    WeightsNotLoaded => "{path}: not loaded, nothing changed: {why}", "{path}：未加载，模型没有改变：{why}";
    NoModelToSave => "No model yet: press Reset (R) to build one, then train it", "还没有模型：请先按“重置”（R）建立模型，再训练它";
    WeightsMissing => "the file has no `{name}` ({shape})", "文件中没有 `{name}`（{shape}）";
    WeightsShape => "`{name}` is {got} in the file; the model needs {shape}", "文件中的 `{name}` 是 {got}；模型需要 {shape}";
    WeightsUnknown => "the file has `{name}` ({shape}), which this model has no layer for", "文件中有 `{name}`（{shape}），但这个模型没有对应的层";
    WeightsDtype => "`{name}` is {dtype}; BatchScope reads f32 weights", "`{name}` 是 {dtype}；BatchScope 只读取 f32 权重";
    WeightsNotSafetensors => "not a safetensors file ({why})", "不是 safetensors 文件（{why}）";
}}
