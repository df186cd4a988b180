//! A CPU tensor's values as kernels see them: f32 slices, through f32 working copies for tensors
//! stored in 16 bits, and rounding results back (counting what that loses).

use crate::backend::error::BackendError;
use crate::backend::tensor::{Storage, Tensor, WORKING_COPIES};
use crate::precision::{DType, Half, RoundCount, RoundingCensus};

pub(super) fn host(t: &Tensor) -> &[f32] {
    match t.storage() {
        Storage::Cpu(v) => v,
        // Device and storage checks run before every access.
        Storage::CpuHalf(_) | Storage::Gpu(_) => &[],
    }
}

pub(super) fn host_mut(t: &mut Tensor) -> &mut [f32] {
    match t.storage_mut() {
        Storage::Cpu(v) => v,
        Storage::CpuHalf(_) | Storage::Gpu(_) => &mut [],
    }
}

/// `t`'s values as a new f32 vector.
pub(super) fn widened(t: &Tensor) -> Vec<f32> {
    match (t.storage(), t.dtype().half()) {
        (Storage::CpuHalf(bits), Some(format)) => {
            bits.iter().map(|&b| DType::widen(format, b)).collect()
        }
        _ => host(t).to_vec(),
    }
}

/// `t`'s values as f32: borrowed where `t` stores f32, widened into a new vector where it
/// stores 16 bits (the sequence ops read their operands this way, so an f32 step copies nothing).
pub(super) fn read_f32(t: &Tensor) -> std::borrow::Cow<'_, [f32]> {
    match t.storage() {
        Storage::CpuHalf(_) => std::borrow::Cow::Owned(widened(t)),
        _ => std::borrow::Cow::Borrowed(host(t)),
    }
}

/// Runs `write` over `t`'s values as f32, which it must overwrite every one of: in place where
/// `t` stores f32, else into a new vector then rounded into `t` (counting what that loses).
pub(super) fn write_f32<R>(
    t: &mut Tensor,
    census: &mut RoundingCensus,
    write: impl FnOnce(&mut [f32]) -> R,
) -> R {
    if matches!(t.storage(), Storage::CpuHalf(_)) {
        let mut values = vec![0.0f32; t.len()];
        let result = write(&mut values);
        put(t, &values, census);
        result
    } else {
        write(host_mut(t))
    }
}

/// Stores f32 `values` into `t`, rounded for a 16-bit `t` (counting what that loses).
pub(super) fn put(t: &mut Tensor, values: &[f32], census: &mut RoundingCensus) {
    let (format, role) = (t.dtype().half(), t.role());
    match (t.storage_mut(), format) {
        (Storage::CpuHalf(bits), Some(format)) => {
            narrow_into(bits, values, format, census.role_mut(role));
        }
        _ => host_mut(t).copy_from_slice(values),
    }
}

/// `t[i] = f(t[i])` for every value, through f32 for a 16-bit `t` (counting what the rounding
/// back loses).
pub(super) fn map_values(t: &mut Tensor, f: impl Fn(f32) -> f32, census: &mut RoundingCensus) {
    let (format, role) = (t.dtype().half(), t.role());
    match (t.storage_mut(), format) {
        (Storage::CpuHalf(bits), Some(format)) => {
            let count = census.role_mut(role);
            for b in bits {
                let v = f(DType::widen(format, *b));
                *b = DType::narrow(format, v);
                count.count(v, DType::widen(format, *b));
            }
        }
        _ => {
            for v in host_mut(t) {
                *v = f(*v);
            }
        }
    }
}

/// The working copies' values, one slice each (empty where there is none).
pub(super) fn slots(work: &mut [Tensor]) -> [&mut [f32]; WORKING_COPIES] {
    let mut it = work.iter_mut().map(host_mut);
    std::array::from_fn(|_| it.next().unwrap_or_default())
}

pub(super) fn no_working_copy(t: &Tensor) -> BackendError {
    BackendError::Setup(format!(
        "no f32 working copy large enough for `{}` ({} values)",
        t.label(),
        t.len()
    ))
}

/// `t`'s values as f32: its own, or widened into `slot` when it is stored in 16 bits.
pub(super) fn view<'a>(t: &'a Tensor, slot: &'a mut [f32]) -> Result<&'a [f32], BackendError> {
    if t.dtype() == DType::F32 {
        return Ok(host(t));
    }
    working_view(t, slot, true).map(|s| &*s)
}

/// Where an op writes `t`'s values in f32: `t` itself, or `slot` when it is stored in 16 bits
/// (with its values widened in first when `load`, for ops that update in place). [`store`] puts
/// them back.
pub(super) fn view_mut<'a>(
    t: &'a mut Tensor,
    slot: &'a mut [f32],
    load: bool,
) -> Result<&'a mut [f32], BackendError> {
    if t.dtype() == DType::F32 {
        return Ok(host_mut(t));
    }
    working_view(t, slot, load)
}

/// The first `t.len()` values of `slot`, holding the 16-bit `t`'s values widened when `load`.
pub(super) fn working_view<'a>(
    t: &Tensor,
    slot: &'a mut [f32],
    load: bool,
) -> Result<&'a mut [f32], BackendError> {
    let Some(s) = slot.get_mut(..t.len()) else {
        return Err(no_working_copy(t));
    };
    if let (Storage::CpuHalf(bits), Some(format), true) = (t.storage(), t.dtype().half(), load) {
        for (d, &b) in s.iter_mut().zip(bits) {
            *d = DType::widen(format, b);
        }
    }
    Ok(s)
}

/// Rounds an op's f32 result in `slot` into a 16-bit `t` (nothing to do for an f32 `t`),
/// counting what it loses into `census`.
pub(super) fn store(t: &mut Tensor, slot: &[f32], census: &mut RoundingCensus) {
    let (format, role) = (t.dtype().half(), t.role());
    if let (Storage::CpuHalf(bits), Some(format)) = (t.storage_mut(), format) {
        narrow_into(bits, slot, format, census.role_mut(role));
    }
}

/// `bits[i] = narrow(values[i])`, counting what the rounding loses.
pub(super) fn narrow_into(bits: &mut [u16], values: &[f32], format: Half, count: &mut RoundCount) {
    for (b, &v) in bits.iter_mut().zip(values) {
        *b = DType::narrow(format, v);
        count.count(v, DType::widen(format, *b));
    }
}
