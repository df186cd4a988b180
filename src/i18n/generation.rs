//! The translation table's part for serving a language model: generation a character at a time,
//! with and without a key-value cache.

super::lang::strings! { GenKey {
    Title => "Writing a character at a time", "逐字生成";
    Intro => "A language model writes one character, then feeds it back to write the next. Without a key-value cache every character runs the whole window again; with one, each attention layer keeps the keys and values of the characters before, and a new character runs the model over one row. Both wrote the same text below; each row is timed on the host clock.", "语言模型每次写一个字符，再把它送回去写下一个。没有键值缓存时，每个字符都要把整个窗口重新算一遍；有缓存时，每个注意力层保留前面字符的键和值，新字符只需把模型在一行上算一遍。下面两种方式写出的文本相同；每一行都用主机时钟计时。";
    Prompts => "Prompts at once", "同时的提示数";
    Cache => "Key-value cache", "键值缓存";
    On => "on", "开";
    Off => "off", "关";
    PerSecond => "Characters/s", "字符/秒";
    PerChar => "Wait per character (p50)", "每字符等待（p50）";
    Passes => "Whole-window passes", "整窗口计算次数";
    CacheSize => "Cache", "缓存大小";
    Rate => "{rate} chars/s", "{rate} 字符/秒";
    Faster => "{device}, {prompts} prompt(s): with the cache a character waits {with} (median), without it {without}: {ratio}× less.", "{device}，{prompts} 个提示：有缓存时每个字符等待 {with}（中位数），无缓存时 {without}：少 {ratio} 倍。";
    TooClose => "{device}, {prompts} prompt(s): a character waits {with} with the cache and {without} without: too close to call on this machine.", "{device}，{prompts} 个提示：有缓存时每个字符等待 {with}，无缓存时 {without}：在本机上相差太小，无法判断。";
    Slower => "{device}, {prompts} prompt(s): a character waits {with} with the cache and {without} without: the cache was slower here, its upkeep costs more than the rows it saves.", "{device}，{prompts} 个提示：有缓存时每个字符等待 {with}，无缓存时 {without}：这里缓存反而更慢，维护它的开销超过了它省下的计算。";
    SameText => "Same text with and without the cache on every device.", "每个设备上有无缓存写出的文本都相同。";
    OtherText => "The text differs with and without the cache: rounding moved a draw.", "有无缓存写出的文本不同：舍入误差改变了一次抽样。";
}}
