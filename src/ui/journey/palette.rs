//! The journey's colours and names: one colour per category, the same in the timeline, the
//! bars and the diagram, and each lane's name in the user's language.

use egui::Color32;

use crate::device::Device;
use crate::i18n::{Key, Lang};
use crate::trace::{Category, Lane};

/// The colour of a category, the same in the timeline, the bars and the diagram.
pub fn category_color(category: Category) -> Color32 {
    match category {
        Category::Kernel => Color32::from_rgb(102, 187, 106),
        Category::Memcpy => Color32::from_rgb(255, 167, 38),
        Category::Sync => Color32::from_rgb(239, 83, 80),
        Category::DataLoader => Color32::from_rgb(66, 165, 245),
        Category::CpuExec => Color32::from_rgb(171, 71, 188),
        Category::Other => Color32::from_rgb(120, 120, 120),
    }
}

/// The translated name of a category.
pub fn category_key(category: Category) -> Key {
    category.key()
}

/// The translated name of a lane.
pub fn lane_name(lang: Lang, lane: Lane, device: Device) -> String {
    match lane {
        Lane::Main => lang.tr(Key::LaneMain).to_owned(),
        Lane::Loader(i) => lang.fmt(Key::LaneLoader, &[("i", &i)]),
        Lane::Transfer => lang.tr(Key::LaneTransfer).to_owned(),
        Lane::Kernels => lang
            .tr(match device {
                Device::Gpu => Key::LaneKernelsGpu,
                Device::Cpu => Key::LaneKernelsCpu,
            })
            .to_owned(),
        Lane::Readback => lang.tr(Key::LaneReadback).to_owned(),
        Lane::Sync => lang.tr(Key::LaneSync).to_owned(),
    }
}
