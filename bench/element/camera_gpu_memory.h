/* cs-bench-cameras' GPU memory readings: device memory in use, from the
 * CUDA driver's primary contexts. */
#pragma once

#include <stdint.h>

#include "camera_options.h"

/* The CUDA driver, loaded at run time so that the program builds and runs
 * without CUDA. The same libcuda the plugin uses. */
typedef struct {
  void *lib;
  int (*get_count)(int *);
  int (*get_device)(int *, int);
  int (*retain)(void **, int);
  int (*release)(int);
  int (*push)(void *);
  int (*pop)(void **);
  int (*mem_info)(size_t *, size_t *);
  int count;
  void *ctx[MAX_DEVICES];
  char why[160];
} Driver;

/* Loads libcuda and retains every device's primary context (made here, so
 * that its own memory is not counted as the streams'). FALSE, with d->why,
 * when there is no driver or no device. */
gboolean driver_open(Driver *d);
/* Device memory in use on device i, bytes; -1 when unknown. */
int64_t driver_used(Driver *d, int i);
/* Releases the primary contexts (libcuda stays loaded). */
void driver_close(Driver *d);
