/* cs-bench-cameras' GPU memory readings (camera_gpu_memory.h). */
#include "camera_gpu_memory.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

gboolean driver_open(Driver *d) {
  memset(d, 0, sizeof *d);
  d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!d->lib) {
    snprintf(d->why, sizeof d->why, "no libcuda.so.1");
    return FALSE;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(d->lib, "cuInit");
  d->get_count = (int (*)(int *))dlsym(d->lib, "cuDeviceGetCount");
  d->get_device = (int (*)(int *, int))dlsym(d->lib, "cuDeviceGet");
  d->retain = (int (*)(void **, int))dlsym(d->lib, "cuDevicePrimaryCtxRetain");
  d->release = (int (*)(int))dlsym(d->lib, "cuDevicePrimaryCtxRelease_v2");
  d->push = (int (*)(void *))dlsym(d->lib, "cuCtxPushCurrent_v2");
  d->pop = (int (*)(void **))dlsym(d->lib, "cuCtxPopCurrent_v2");
  d->mem_info = (int (*)(size_t *, size_t *))dlsym(d->lib, "cuMemGetInfo_v2");
  if (!init || !d->get_count || !d->get_device || !d->retain || !d->release || !d->push || !d->pop ||
      !d->mem_info) {
    snprintf(d->why, sizeof d->why, "libcuda.so.1 lacks a driver call");
    return FALSE;
  }
  int rc = init(0);
  if (rc != 0 || d->get_count(&d->count) != 0 || d->count < 1) {
    snprintf(d->why, sizeof d->why, "cuInit: error %d, or no device", rc);
    d->count = 0;
    return FALSE;
  }
  if (d->count > MAX_DEVICES) d->count = MAX_DEVICES;
  /* The primary context is made here, before the first measurement, so its
   * own memory is not counted as the streams'. */
  for (int i = 0; i < d->count; ++i) {
    int dev;
    if (d->get_device(&dev, i) != 0 || d->retain(&d->ctx[i], dev) != 0) d->ctx[i] = NULL;
  }
  return TRUE;
}

/* Device memory in use on device i, bytes; -1 when unknown. */
int64_t driver_used(Driver *d, int i) {
  if (i < 0 || i >= d->count || !d->ctx[i]) return -1;
  size_t free_b = 0, total_b = 0;
  void *popped;
  if (d->push(d->ctx[i]) != 0) return -1;
  const int rc = d->mem_info(&free_b, &total_b);
  d->pop(&popped);
  return rc == 0 ? (int64_t)(total_b - free_b) : -1;
}

void driver_close(Driver *d) {
  for (int i = 0; i < d->count; ++i) {
    int dev;
    if (d->ctx[i] && d->get_device(&dev, i) == 0) d->release(dev);
  }
  /* libcuda stays loaded: the plugin uses the same library. */
}
