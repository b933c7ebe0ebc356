/* A stand-in for a GPU driver, built as libvulkan_lvp.so (the name of Mesa's
 * lavapipe) so that lsan.supp's lavapipe line matches it. It leaks on its
 * own, and it calls back into project code, as Dawn and the Vulkan loader
 * do. */
#include <stdlib.h>

void fake_driver_leak(void);
void fake_driver_call(void (*callback)(void));

/* Where the driver's leaks lose their last reference. */
static void *volatile driver_scratch;
static volatile int callbacks_made;

void fake_driver_leak(void) {
    driver_scratch = malloc(48);
    driver_scratch = NULL;
}

void fake_driver_call(void (*callback)(void)) {
    callback();
    /* Work after the call keeps this frame on the stack (no tail call), so
     * the callback's allocations have a driver frame below them. */
    callbacks_made = callbacks_made + 1;
}
