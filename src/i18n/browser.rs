//! The translation table's part for the browser build: what a page says that a desktop window
//! does not.

super::lang::strings! { BrowserKey {
    NoWebGpuTitle => "No WebGPU adapter in this browser", "此浏览器没有 WebGPU 适配器";
    NoWebGpuHelp => "This browser gives the page no WebGPU adapter to compute on. Chrome and Edge have WebGPU on most systems, Firefox and Safari on some; a browser may also turn it off for this GPU or driver. The CPU column keeps working.", "此浏览器没有为页面提供可用于计算的 WebGPU 适配器。Chrome 和 Edge 在大多数系统上支持 WebGPU，Firefox 和 Safari 在部分系统上支持；浏览器也可能因为这块 GPU 或驱动而关闭它。CPU 一栏照常工作。";
    GpuNotEvaluated => "In a page this column reports the loss and the speed. Accuracy, the decision boundary and the value histograms read back as they are computed, which a page's GPU answers only between frames: for them, use the desktop app.", "在网页中，这一栏报告损失和速度。准确率、决策边界和数值直方图在计算过程中需要读回数据，而网页中的 GPU 只在两帧之间才交回结果：要看这些，请使用桌面应用。";
    NoFilesYet => "A browser's page cannot open or save files here yet: the browser's own file picker and drag and drop are not wired in. The desktop app opens your own data sets, lessons and sessions, and saves traces, models and screenshots; in this page, the shipped data sets are in Source.", "网页里暂时还不能在这里打开或保存文件：浏览器自己的文件选择器和拖放尚未接上。桌面应用可以打开你自己的数据集、课程和会话，并保存追踪、模型和截图；在这个页面里，自带的数据集在“来源”中。";
    WasmBackendName => "WebAssembly, {n} thread(s)", "WebAssembly，{n} 个线程";
}}
