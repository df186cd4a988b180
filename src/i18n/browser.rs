//! The translation table's part for the browser build: what a page says that a desktop window
//! does not.

super::lang::strings! { BrowserKey {
    GpuColumnTitle => "WebGPU trains in the self-test page, not yet here", "WebGPU 目前在自检页训练，这里还不行";
    GpuColumnNotYet => "In a browser, a GPU answers a read only when the page gets its turn back, so a training step on WebGPU must await its loss, and this column's evaluation (accuracy, boundary, histograms) still waits for its reads without yielding. The self-test page trains this model on this browser's GPU and the CPU side by side: open index.html?selftest=spiral and read the console.", "在浏览器里，GPU 只有在页面重新获得执行权时才会交回读取的结果，所以 WebGPU 上的训练步骤必须异步等待损失值，而这一栏的评估（准确率、决策边界、直方图）仍在不让出执行权地等待读取。自检页会在本浏览器的 GPU 和 CPU 上并排训练这个模型：打开 index.html?selftest=spiral 并查看控制台。";
    NoFilesYet => "A browser's page cannot open or save files here yet: the browser's own file picker and drag and drop are not wired in. The desktop app opens your own data sets, lessons and sessions, and saves traces, models and screenshots; in this page, the shipped data sets are in Source.", "网页里暂时还不能在这里打开或保存文件：浏览器自己的文件选择器和拖放尚未接上。桌面应用可以打开你自己的数据集、课程和会话，并保存追踪、模型和截图；在这个页面里，自带的数据集在“来源”中。";
    WasmBackendName => "WebAssembly, {n} thread(s)", "WebAssembly，{n} 个线程";
}}
