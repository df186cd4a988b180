//! The translation table's part for the browser build: what a page says that a desktop window
//! does not.

super::lang::strings! { BrowserKey {
    NoWebGpuTitle => "No WebGPU adapter in this browser", "此浏览器没有 WebGPU 适配器";
    NoWebGpuHelp => "This browser gives the page no WebGPU adapter to compute on. Chrome and Edge have WebGPU on most systems, Firefox and Safari on some; a browser may also turn it off for this GPU or driver. The CPU column keeps working.", "此浏览器没有为页面提供可用于计算的 WebGPU 适配器。Chrome 和 Edge 在大多数系统上支持 WebGPU，Firefox 和 Safari 在部分系统上支持；浏览器也可能因为这块 GPU 或驱动而关闭它。CPU 一栏照常工作。";
    GpuNotEvaluated => "In a page this column does not write text: a language model writes one character at a time from what it read back of the last, and a page's GPU answers a read only between frames. The loss, the speed and the validation figures are here; for the writing, use the desktop app or the CPU column.", "在网页中，这一栏不会写出文字：语言模型每写一个字符都要先读回上一个字符的结果，而网页中的 GPU 只在两帧之间才交回读取结果。损失、速度和验证指标都在这里；要看写出的文字，请使用桌面应用或 CPU 一栏。";
    NotInPage => "A browser's page does not open image folders: a browser hands a page single files. Here, Open… reads your own data set (CSV, an IDX pair chosen together, or a .txt text), a lesson, a session or weights through the browser's picker, and so does dropping them on the page; what you save comes as a download. The desktop app opens image folders.", "网页不能打开图片文件夹：浏览器只交给网页单个文件。在这里，“打开…”通过浏览器的文件选择器读取你自己的数据集（CSV、一起选中的一对 IDX 文件，或 .txt 文本）、课程、会话或权重，把它们拖放到页面上也可以；保存的内容会以下载的形式给出。桌面应用可以打开图片文件夹。";
    WasmBackendName => "WebAssembly, {n} thread(s)", "WebAssembly，{n} 个线程";
}}
