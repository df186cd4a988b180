//! The translation table's part for the files a user hands BatchScope and the files it writes:
//! what a file is when it is not a regular one, a budget, a place in a text, a destination that
//! cannot be written.

super::lang::strings! { FileKey {
    NotRegular => "{path} is {kind}, not a regular file: BatchScope reads only files saved on disk (a named pipe or a device would never end)", "{path} 是{kind}，不是普通文件：BatchScope 只读取保存在磁盘上的文件（命名管道或设备永远读不完）";
    CannotRead => "{path}: cannot read it: {why}", "{path}：无法读取：{why}";
    TooLarge => "{path} is larger than {max}, the most a {what} may be: it cannot be one", "{path} 大于 {max}，而{what}最多只有这么大：它不可能是{what}";
    NotUtf8 => "{path}, line {line}, column {column}: not UTF-8 text (byte {byte}); save the file as UTF-8", "{path}，第 {line} 行第 {column} 列：不是 UTF-8 文本（字节 {byte}）；请把文件保存为 UTF-8";
    ParseAt => "{path}, line {line}, column {column}: {why} (near “{excerpt}”)", "{path}，第 {line} 行第 {column} 列：{why}（附近：“{excerpt}”）";
    WhatLesson => "lesson file", "课程文件";
    WhatSession => "session file", "会话文件";
    WhatProfile => "hardware profile file", "硬件配置文件";
    WhatKernelCache => "GPU kernel cache", "GPU 内核缓存";
    WhatSettings => "settings file", "设置文件";
    WhatModel => "model file", "模型文件";
    WhatWeights => "weights file", "权重文件";
    DestNoFolder => "{path}: the folder {folder} does not exist; create it first or choose another", "{path}：文件夹 {folder} 不存在；请先创建它，或另选位置";
    DestFolderIsFile => "{path}: {folder} is a file, not a folder", "{path}：{folder} 是文件，不是文件夹";
    DestNotRegular => "{path} is {kind}: name a file to write", "{path} 是{kind}：请指定要写入的文件";
    DestNotWritable => "{path} cannot be written ({why}); choose another place", "无法写入 {path}（{why}）；请另选位置";
    WriteFailed => "{path} could not be written ({why}); nothing was left behind", "无法写入 {path}（{why}）；没有留下不完整的文件";
}}
