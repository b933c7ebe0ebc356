/* The plug-in point: every group of conformance checks, in the order they
 * run. A part of the library with its own contract (channels, simulations,
 * Metal's additions) writes its checks once as a conf_group against the
 * public API, and adds one line here (docs/conformance.md, "Adding checks"). */
#include "conformance.h"

extern const conf_group conf_group_device_memory, conf_group_device_kernels, conf_group_actor_lifecycle,
    conf_group_actor_messages, conf_group_actor_modes, conf_group_actor_validation, conf_group_channel_flow, conf_group_channel_backpressure,
    conf_group_channel_lifecycle;

const conf_group *const conf_groups[] = {
    &conf_group_device_memory,  &conf_group_device_kernels, &conf_group_actor_lifecycle,
    &conf_group_actor_messages, &conf_group_actor_modes,   &conf_group_actor_validation, &conf_group_channel_flow,
    &conf_group_channel_backpressure, &conf_group_channel_lifecycle,
    /* simulation checks (tests/sim) plug in here */
};
const size_t conf_group_count = sizeof conf_groups / sizeof conf_groups[0];
