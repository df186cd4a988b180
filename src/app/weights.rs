//! Save model… and Load model… in the window: the model's weights as safetensors (written by
//! the worker that holds them) with its layers beside them as a model file, and weights read
//! from a file off the UI thread, checked against the model, then given to every device's
//! model.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::BatchScopeApp;
use super::jobs::Read;
use crate::device::Device;
use crate::i18n::{Arg, LayerKey, Said};
use crate::nn::{LayerValues, ModelSpec};
use crate::train::DeviceStatus;
use crate::train::worker::Command;

impl BatchScopeApp {
    /// Says `said` in the status bar.
    fn model_note(&mut self, said: &Said) {
        self.state.screenshot_note = Some(said.text(self.state.lang).to_owned());
    }

    /// Writes the run's layers as a model file beside `path` (`model.toml` for
    /// `model.safetensors`) and has the first device that trains the run write its weights to
    /// `path`.
    pub(super) fn save_model(&mut self, mut path: PathBuf) {
        if path.extension().is_none_or(|e| e == "toml") {
            path.set_extension("safetensors");
        }
        let device = Device::ALL.into_iter().find(|&d| {
            self.state.settings.applied_enabled(d)
                && matches!(
                    self.state.runs[d as usize].status,
                    DeviceStatus::Ready { .. }
                )
        });
        let (Some(session), Some(device)) = (&self.session, device) else {
            return self.model_note(&Said::new(LayerKey::NoModelToSave, &[]));
        };
        let spec = session.config.model_spec(&session.data);
        // The layers before the output layer, which the data set adds again, as `--model`
        // reads them.
        let mut layers = spec.layer_specs();
        layers.pop();
        let model = path.with_extension("toml");
        let text = crate::nn::model_toml(&layers);
        let shown = model.display().to_string();
        if let Err(why) = crate::files::write_atomic(&model, text.as_bytes()) {
            let said = Said::with(
                LayerKey::ModelNotSaved,
                &[("path", Arg::Plain(&shown)), ("why", Arg::Said(&why))],
            );
            return self.model_note(&said);
        }
        self.model_note(&Said::new(LayerKey::ModelSaved, &[("model", &shown)]));
        let spec = Arc::new(spec);
        self.send(device, || {
            Command::SaveWeights(path.clone(), Arc::clone(&spec))
        });
    }

    /// Reads the weights of `path` off the UI thread, checked against the run's model;
    /// [`Self::weights_read`] gives them to the devices.
    pub(super) fn load_model(&mut self, path: &Path) {
        let Some(session) = &self.session else {
            return self.model_note(&Said::new(LayerKey::NoModelToSave, &[]));
        };
        let spec = session.config.model_spec(&session.data);
        let path = path.to_path_buf();
        self.start_reading(move |ctx: crate::job::JobContext<Read>| {
            let values = read_weights(&path, &spec);
            ctx.send(Read::Weights(path, values));
        });
    }

    /// Gives weights read from `path` to every device's model, or says why they were not.
    pub(super) fn weights_read(&mut self, path: &Path, values: Result<LayerValues, Said>) {
        match values {
            Ok(values) => {
                let values = Arc::new(values);
                let path = path.to_path_buf();
                self.send_all(|| Command::LoadWeights(Arc::clone(&values), path.clone()));
            }
            Err(why) => {
                let shown = path.display().to_string();
                let said = Said::with(
                    LayerKey::WeightsNotLoaded,
                    &[("path", Arg::Plain(&shown)), ("why", Arg::Said(&why))],
                );
                self.model_note(&said);
            }
        }
    }
}

/// The parameters of the safetensors file at `path`, checked against `spec` (each mismatch
/// named by its tensor).
fn read_weights(path: &Path, spec: &ModelSpec) -> Result<LayerValues, Said> {
    let bytes = crate::files::read_bytes(path, crate::files::FileKind::Weights)?;
    let tensors = crate::nn::from_safetensors(&bytes)?;
    crate::nn::from_torch(spec, &tensors).map_err(|problems| {
        Said::each(|lang| {
            let each: Vec<&str> = problems.iter().map(|p| p.text(lang)).collect();
            each.join("; ")
        })
    })
}
