// ringkernel: the WebGPU ring kernel, dispatched once per batch of messages
// (the event-driven relaunch pattern: a running dispatch cannot see host
// writes). src/webgpu/webgpu_ring.c adds the constants RK_REQ_WORDS,
// RK_RESP_WORDS, the handler, and rk_call_handler(req, resp) -> i32 calling it.
//
// rk_in        word 0: messages in this batch; then the requests, RK_REQ_WORDS
//              words each (the host's bytes, zero-padded to whole words)
// rk_out       the replies, RK_RESP_WORDS words each, zeroed before the handler
// rk_status    the handler's return value for each message (0 = success)
// rk_state     the kernel's state, kept on the device between batches
// rk_counters  this dispatch's 32-bit counts (WGSL has no 64-bit atomics);
//              the host clears them per dispatch and sums them into 64 bits
// rk_emit      K2K: what rk_emit writes, per output port (layout in
//              src/webgpu/webgpu_channel.h); the host routes it on the device

struct RkCounters {
    processed: atomic<u32>,
    errors: atomic<u32>,
}

@group(0) @binding(0) var<storage, read> rk_in: array<u32>;
@group(0) @binding(1) var<storage, read_write> rk_out: array<u32>;
@group(0) @binding(2) var<storage, read_write> rk_status: array<i32>;
@group(0) @binding(3) var<storage, read_write> rk_state: array<u32>;
@group(0) @binding(4) var<storage, read_write> rk_counters: RkCounters;
@group(0) @binding(5) var<storage, read_write> rk_emit: array<u32>;

fn rk_process(i: u32) {
    let req = 1u + i * RK_REQ_WORDS;
    let resp = i * RK_RESP_WORDS;
    for (var w = 0u; w < RK_RESP_WORDS; w++) {
        rk_out[resp + w] = 0u;
    }
    let status = rk_call_handler(req, resp);
    rk_status[i] = status;
    atomicAdd(&rk_counters.processed, 1u);
    if (status != 0) {
        atomicAdd(&rk_counters.errors, 1u);
    }
}

// Stateless handlers: one invocation per message.
@compute @workgroup_size(64)
fn rk_ring_parallel(@builtin(global_invocation_id) gid: vec3<u32>) {
    _ = rk_state[0]; // keep every binding in the "auto" layout
    _ = rk_emit[0];
    if (gid.x < rk_in[0]) {
        rk_process(gid.x);
    }
}

// Handlers with state: one invocation takes the batch in order, as the
// persistent kernel on other backends would.
@compute @workgroup_size(1)
fn rk_ring_sequential() {
    _ = rk_state[0];
    _ = rk_emit[0];
    let count = rk_in[0];
    for (var i = 0u; i < count; i++) {
        rk_process(i);
    }
}
