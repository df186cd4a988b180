// The activations and their derivatives, put in front of the shaders that use them (the ACT_*
// codes are generated from the Rust enum).

// GELU's tanh approximation: √(2/π) and the cubic term's weight.
const GELU_SCALE: f32 = 0.7978846;
const GELU_CUBIC: f32 = 0.044715;

// GELU's tanh argument, held within ±15 where tanh is ±1 in f32 already: some drivers compute
// tanh through exponentials that overflow to NaN for large arguments (the CPU clamps alike).
fn gelu_tanh(z: f32) -> f32 {
    return tanh(clamp(GELU_SCALE * (z + GELU_CUBIC * z * z * z), -15.0, 15.0));
}

fn activate(z: f32, act: u32) -> f32 {
    switch act {
        case ACT_RELU: { return max(z, 0.0); }
        case ACT_TANH: { return tanh(z); }
        case ACT_SIGMOID: { return 1.0 / (1.0 + exp(-z)); }
        case ACT_GELU: { return 0.5 * z * (1.0 + gelu_tanh(z)); }
        default: { return z; }
    }
}

// f'(z) written in terms of the output a = f(z), which the forward pass kept (never GELU: the
// Rust side refuses it here).
fn activation_grad(out: f32, act: u32) -> f32 {
    switch act {
        case ACT_RELU: { return select(0.0, 1.0, out > 0.0); }
        case ACT_TANH: { return 1.0 - out * out; }
        case ACT_SIGMOID: { return out * (1.0 - out); }
        default: { return 1.0; }
    }
}

// f'(z) from the input z: what an activation layer of its own applies in backward.
fn activation_grad_at(z: f32, act: u32) -> f32 {
    if (act == ACT_GELU) {
        let t = gelu_tanh(z);
        let du = GELU_SCALE * (1.0 + 3.0 * GELU_CUBIC * z * z);
        return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * du;
    }
    return activation_grad(activate(z, act), act);
}
