//! The translation table's part for a language model's writing: the samples its attention maps
//! are over, and serving it, generation a character at a time with and without a key-value
//! cache.

super::lang::strings! { GenKey {
    Title => "Writing a character at a time", "逐字生成";
    Intro => "A language model writes one character, then feeds it back to write the next. Without a key-value cache every character runs the whole window again; with one, each attention layer keeps the keys and values of the characters before, and a new character runs the model over one row. Each row is timed on the host clock.", "语言模型每次写一个字符，再把它送回去写下一个。没有键值缓存时，每个字符都要把整个窗口重新算一遍；有缓存时，每个注意力层保留前面字符的键和值，新字符只需把模型在一行上算一遍。每一行都用主机时钟计时。";
    Prompts => "Prompts", "提示数";
    Cache => "Cache", "缓存";
    On => "on", "开";
    Off => "off", "关";
    PerSecond => "Characters/s", "字符/秒";
    PerChar => "Per character (p50)", "每字符（p50）";
    Passes => "Full passes", "整窗口计算";
    CacheSize => "Cache size", "缓存大小";
    Rate => "{rate} chars/s", "{rate} 字符/秒";
    Faster => "{device} writing {prompts} at once: with the cache a character takes {with} (median), without it {without}, {ratio}× as long.", "{device} 同时写 {prompts} 段：有缓存时每个字符用时 {with}（中位数），无缓存时 {without}，是前者的 {ratio} 倍。";
    TooClose => "{device} writing {prompts} at once: a character takes {with} with the cache and {without} without: too close to call on this machine.", "{device} 同时写 {prompts} 段：有缓存时每个字符用时 {with}，无缓存时 {without}：在本机上相差太小，无法判断。";
    Slower => "{device} writing {prompts} at once: a character takes {with} with the cache and {without} without: the cache was slower here, its upkeep costs more than the rows it saves.", "{device} 同时写 {prompts} 段：有缓存时每个字符用时 {with}，无缓存时 {without}：这里缓存反而更慢，维护它的开销超过了它省下的计算。";
    SameText => "Same text with and without the cache on every device.", "每个设备上有无缓存写出的文本都相同。";
    SampleWritten => "What it wrote", "它写的文字";
    SampleValidation => "Validation text {n}", "验证文本 {n}";
    SamplePickTip => "Which text the map is over: the model's own writing, or a window of the validation text it never trained on. A pattern seen on every text (the character before, the last space) is one the head learned; one seen on a single text may be chance.", "热图覆盖哪段文本：模型自己写的文字，或它从未训练过的验证文本中的一个窗口。在每段文本上都出现的模式（前一个字符、上一个空格）是这个头学到的；只在一段文本上出现的可能是巧合。";
    OtherText => "The text differs with and without the cache: rounding moved a draw.", "有无缓存写出的文本不同：舍入误差改变了一次抽样。";
}}
