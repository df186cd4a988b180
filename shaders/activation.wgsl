// The activations and their derivatives, put in front of the shaders that use them (the ACT_*
// codes are generated from the Rust enum).

fn activate(z: f32, act: u32) -> f32 {
    switch act {
        case ACT_RELU: { return max(z, 0.0); }
        case ACT_TANH: { return tanh(z); }
        case ACT_SIGMOID: { return 1.0 / (1.0 + exp(-z)); }
        default: { return z; }
    }
}

// f'(z) written in terms of the output a = f(z), which the forward pass kept.
fn activation_grad(out: f32, act: u32) -> f32 {
    switch act {
        case ACT_RELU: { return select(0.0, 1.0, out > 0.0); }
        case ACT_TANH: { return 1.0 - out * out; }
        case ACT_SIGMOID: { return out * (1.0 - out); }
        default: { return 1.0; }
    }
}
